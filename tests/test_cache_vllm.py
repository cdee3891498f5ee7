from __future__ import annotations

import os
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.cache import CacheQuery, InvalidQuery, make_cache_model
from prefixlint.cache.vllm import block_hashes


def run(model, *prompts, **fields):
    return [model.process(CacheQuery(tokens=list(prompt), **fields)) for prompt in prompts]


@pytest.mark.parametrize(
    ("length", "block_size", "expected"),
    (
        (1, 16, 0),
        (16, 16, 0),
        (17, 16, 16),
        (32, 16, 16),
        (33, 16, 32),
        (100, 16, 96),
        (10, 4, 8),
        (9, 4, 8),
        (8, 4, 4),
    ),
)
def test_repeat_hits_floor_of_n_minus_one(length, block_size, expected):
    model = make_cache_model("vllm", block_size=block_size)
    first, second = run(model, range(length), range(length))
    assert first.cached_tokens == 0
    assert second.cached_tokens == expected == (length - 1) // block_size * block_size


def test_partial_blocks_never_hit():
    model = make_cache_model("vllm", block_size=4)
    run(model, range(6))  # one full block, two tokens in a partial one
    (result,) = run(model, [*range(6), 50, 51, 52])
    assert result.cached_tokens == 4


def test_divergence_inside_a_block_loses_the_block():
    model = make_cache_model("vllm", block_size=4)
    run(model, range(12))
    (result,) = run(model, [0, 1, 2, 3, 4, 5, 99, 7, 8, 9, 10, 11])
    assert result.cached_tokens == 4
    assert result.miss_reason == "first-seen"


def test_cache_salt_separates_and_same_salt_shares():
    model = make_cache_model("vllm", block_size=4)
    prompt = list(range(12))
    model.process(CacheQuery(tokens=prompt, cache_salt="alice"))
    other = model.process(CacheQuery(tokens=prompt, cache_salt="bob"))
    unsalted = model.process(CacheQuery(tokens=prompt))
    same = model.process(CacheQuery(tokens=prompt, cache_salt="alice"))
    assert (other.cached_tokens, unsalted.cached_tokens, same.cached_tokens) == (0, 0, 8)


def test_salt_is_only_on_the_first_block_but_chains():
    assert block_hashes(CacheQuery(tokens=list(range(8))), 4) != block_hashes(
        CacheQuery(tokens=list(range(8)), cache_salt="s"), 4
    )
    salted = block_hashes(CacheQuery(tokens=list(range(8)), cache_salt="s"), 4)
    assert len(salted) == 2 and len(set(salted)) == 2


def test_extra_keys_isolate_every_block():
    model = make_cache_model("vllm", block_size=4)
    model.process(CacheQuery(tokens=list(range(12)), extra_keys=(("lora", "a", "/a"),)))
    hit = model.process(CacheQuery(tokens=list(range(12)), extra_keys=(("lora", "a", "/a"),)))
    miss = model.process(CacheQuery(tokens=list(range(12)), extra_keys=(("lora", "b", "/b"),)))
    assert (hit.cached_tokens, miss.cached_tokens) == (8, 0)


def test_hashes_are_stable_across_processes():
    code = (
        "from prefixlint.cache import CacheQuery; from prefixlint.cache.vllm import block_hashes;"
        "print(block_hashes(CacheQuery(tokens=[1, 2, 3, 4], cache_salt='k',"
        " extra_keys=('lora',)), 4))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1


def test_lru_evicts_a_requests_tail_before_its_head():
    # 4 usable blocks of 4 tokens. A holds blocks a0 a1; B then needs 3 blocks (2 hashed + 1
    # partial): 2 free unhashed, 1 evicted from the LRU head, which is A's tail block a1.
    model = make_cache_model("vllm", block_size=4, capacity_tokens=16)
    a = list(range(8))
    b = list(range(100, 110))
    run(model, [*a, 1000], b)
    (again,) = run(model, [*a, 2000])
    assert again.cached_tokens == 4
    assert again.miss_reason == "evicted"
    assert again.longest_available == 8


def test_lru_keeps_recently_hit_blocks():
    # 6 blocks of 2 tokens; each 5-token prompt holds 2 hashed blocks and 1 partial one.
    # A, B, then A again moves A's blocks behind B's in the LRU queue. C then finds 2
    # unhashed free blocks and evicts 1 from the queue head: B's tail block.
    model = make_cache_model("vllm", block_size=2, capacity_tokens=12)
    a, b, c = [1, 2, 3, 4, 9], [5, 6, 7, 8, 9], [20, 21, 22, 23, 24]
    results = run(model, a, b, a, c, a, b)
    assert [r.cached_tokens for r in results] == [0, 0, 4, 0, 4, 2]
    assert results[-1].miss_reason == "evicted"
    assert results[-1].longest_available == 4


def test_output_tokens_fill_blocks_that_a_follow_up_hits():
    model = make_cache_model("vllm", block_size=4)
    model.process(CacheQuery(tokens=list(range(6)), output_tokens=[6, 7, 8, 9, 10]))
    (result,) = run(model, range(14))
    # prompt + output minus the last token = 10 tokens: blocks 0-3 and 4-7 are cached.
    assert result.cached_tokens == 8


def test_unknown_output_takes_capacity():
    model = make_cache_model("vllm", block_size=4, capacity_tokens=16)
    model.process(CacheQuery(tokens=list(range(8))))
    # 4 prompt + 12 computed output tokens: 4 blocks, the whole cache.
    model.process(CacheQuery(tokens=list(range(100, 104)), output_tokens=13))
    (result,) = run(model, range(9))
    assert (result.cached_tokens, result.longest_available) == (0, 8)
    assert result.miss_reason == "evicted"


def test_request_larger_than_the_cache_is_rejected():
    model = make_cache_model("vllm", block_size=4, capacity_tokens=8)
    with pytest.raises(InvalidQuery, match="needs 3 KV blocks"):
        run(model, range(9))


def test_capacity_from_geometry_reserves_the_null_block():
    # 2 (k, v) * 2 layers * 1 head * 4 dims * 2 bytes = 32 bytes per token.
    model = make_cache_model(
        "vllm", block_size=4, memory_bytes=32 * 4 * 5, num_layers=2, num_kv_heads=1, head_dim=4
    )
    assert model.capacity_blocks == 4


def test_on_evict_reports_hashes_leaving_the_cache():
    evicted = []
    model = make_cache_model("vllm", block_size=2, capacity_tokens=4, on_evict=evicted.append)
    run(model, [1, 2, 3], [4, 5, 6])
    assert evicted == block_hashes(CacheQuery(tokens=[1, 2, 3]), 2)
    assert evicted[0] not in model


def test_trace_blocks_split_into_vllm_blocks():
    model = make_cache_model("vllm", block_size=16)
    first = CacheQuery(block_hashes=[1, 2, 3], block_tokens=64, input_length=150)
    repeat = CacheQuery(block_hashes=[1, 2, 3], block_tokens=64, input_length=150)
    branch = CacheQuery(block_hashes=[1, 2, 9], block_tokens=64, input_length=140)
    results = [model.process(q) for q in (first, repeat, branch)]
    # repeat: floor(149 / 16) = 9 blocks; branch shares two trace blocks = 8 vLLM blocks.
    assert [r.cached_tokens for r in results] == [0, 144, 128]


class ReferenceVllm:
    """vLLM's rules on different structures: full-prefix tuples, a list as free queue."""

    def __init__(self, block_size, capacity_blocks):
        self.size, self.capacity = block_size, capacity_blocks
        self.table, self.queue, self.serial = {}, [], 0

    def step(self, prompt, output):
        size = self.size
        sequence = prompt + output[:-1]
        prefixes = [tuple(sequence[: (i + 1) * size]) for i in range(len(sequence) // size)]
        hit = 0
        while hit < (len(prompt) - 1) // size and prefixes[hit] in self.table:
            hit += 1
        held = -(-len(sequence) // size)
        blocks = [self.table[p][0] for p in prefixes[:hit]]
        self.queue = [entry for entry in self.queue if entry[0] not in blocks]
        if self.capacity is not None:
            for _ in range(held - hit - (self.capacity - hit - len(self.queue))):
                block, prefix = self.queue.pop(0)
                self.table[prefix].remove(block)
                if not self.table[prefix]:
                    del self.table[prefix]
        for prefix in prefixes[hit:]:
            self.serial += 1
            self.table.setdefault(prefix, []).append(self.serial)
            blocks.append(self.serial)
        self.queue.extend(reversed(list(zip(blocks, prefixes, strict=True))))
        return hit * size


tokens = st.integers(0, 3)


@st.composite
def traces(draw):
    pool = draw(st.lists(st.lists(tokens, max_size=40), min_size=1, max_size=4))
    requests, previous = [], []
    for _ in range(draw(st.integers(1, 30))):
        base = draw(st.sampled_from([*pool, previous]))
        prompt = base[: draw(st.integers(0, len(base)))] + draw(st.lists(tokens, max_size=12))
        prompt = prompt or [0]
        output = draw(st.lists(tokens, max_size=8))
        requests.append((prompt, output))
        previous = prompt + output
    return requests


@settings(max_examples=150, deadline=None)
@given(traces(), st.sampled_from([1, 2, 4, 16]), st.one_of(st.none(), st.integers(0, 12)))
def test_matches_an_independent_implementation(trace, block_size, spare):
    needed = max(-(-(len(p) + max(len(o) - 1, 0)) // block_size) for p, o in trace)
    capacity = None if spare is None else needed + spare
    reference = ReferenceVllm(block_size, capacity)
    model = make_cache_model(
        "vllm",
        block_size=block_size,
        capacity_tokens=None if capacity is None else capacity * block_size,
    )
    for prompt, output in trace:
        expected = reference.step(prompt, output)
        result = model.process(CacheQuery(tokens=prompt, output_tokens=output))
        assert result.cached_tokens == expected
        assert result.cached_tokens <= result.longest_available


def test_a_recomputed_block_is_cached_again_and_leaves_last():
    # A repeat of a 32-token prompt hits 16 tokens (N - 1 rounded down): its second block is
    # computed again and cached as a second copy. Evicting copies reports the hash only when
    # the last one leaves, and the hit always uses the oldest copy still cached.
    evicted = []
    model = make_cache_model("vllm", block_size=16, capacity_tokens=64, on_evict=evicted.append)
    reference = ReferenceVllm(16, 4)
    prompt = list(range(32))
    steps = [prompt, prompt, prompt, list(range(100, 164)), prompt]
    for tokens in steps:
        expected = reference.step(tokens, [])
        assert model.process(CacheQuery(tokens=tokens)).cached_tokens == expected
    # The 64-token prompt evicts everything (three copies of the second hash, reported
    # once), and the last request two of its blocks: four hashes, each reported once.
    assert len(evicted) == len(set(evicted)) == 4
