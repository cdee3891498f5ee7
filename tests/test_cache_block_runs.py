"""The vLLM model keeps blocks as runs: it must give, request by request, what the plain
block-by-block model gives (``ReferenceVllm``), for token prompts and for trace blocks,
with copies of recomputed blocks and evictions that cut runs anywhere."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from test_cache_vllm import ReferenceVllm

from prefixlint.cache import CacheQuery, make_cache_model
from prefixlint.cache.block_runs import Chain, RunPool
from prefixlint.cache.vllm import block_hashes

tokens = st.integers(0, 2)


@st.composite
def token_requests(draw, block_size):
    """Prompts that repeat, cut (often at block ends, so the hit stops short and blocks are
    computed again), extend and branch earlier prompts and outputs."""
    seen: list[list[int]] = [[0] * block_size]
    requests = []
    for _ in range(draw(st.integers(1, 30))):
        base = draw(st.sampled_from(seen))
        cut = draw(st.integers(0, len(base)))
        if draw(st.booleans()):
            cut = cut // block_size * block_size
        prompt = base[:cut] + draw(st.lists(tokens, max_size=3 * block_size)) or [0]
        output = draw(st.sampled_from([[], [0, 1], base[cut : cut + block_size + 1]]))
        requests.append((prompt, output))
        seen.append(prompt + output)
    return requests


def needed_blocks(requests, block_size):
    return max(-(-(len(p) + max(len(o) - 1, 0)) // block_size) for p, o in requests)


class Departures(dict):
    """A reference block table that notes each prefix whose last copy leaves."""

    def __init__(self):
        super().__init__()
        self.left = []

    def __delitem__(self, prefix):
        super().__delitem__(prefix)
        self.left.append(prefix)


def last_hash(prefix, block_size):
    return block_hashes(CacheQuery(tokens=list(prefix)), block_size)[-1]


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([1, 2, 4]).flatmap(lambda b: st.tuples(st.just(b), token_requests(b))))
def test_token_prompts_match_the_block_model_with_copies_and_evictions(case):
    block_size, requests = case
    needed = needed_blocks(requests, block_size)
    for capacity in (needed, needed + 1, needed + 3):
        evicted = []
        model = make_cache_model(
            "vllm",
            block_size=block_size,
            capacity_tokens=capacity * block_size,
            on_evict=evicted.append,
        )
        reference, ceiling = ReferenceVllm(block_size, capacity), ReferenceVllm(block_size, None)
        reference.table = Departures()
        for prompt, output in requests:
            result = model.process(CacheQuery(tokens=prompt, output_tokens=output))
            assert result.cached_tokens == reference.step(prompt, output)
            assert result.longest_available == ceiling.step(prompt, output)
            assert all(last_hash(prefix, block_size) in model for prefix in reference.table)
        assert evicted == [last_hash(prefix, block_size) for prefix in reference.table.left]


@st.composite
def trace_requests(draw):
    """Mooncake-style requests: block ids that share prefixes, a partial last block, output
    lengths; ids are numbered so that equal ids mean equal prefixes."""
    next_id = itertools.count()
    paths: list[list[int]] = [[]]
    requests = []
    for _ in range(draw(st.integers(1, 25))):
        base = draw(st.sampled_from(paths))
        ids = base[: draw(st.integers(0, len(base)))]
        ids += [next(next_id) for _ in range(draw(st.integers(0 if ids else 1, 3)))]
        space = draw(st.sampled_from([None, "k"]))
        requests.append((ids, draw(st.integers(0, 4)), draw(st.integers(0, 9)), space))
        paths.append(ids)
    return requests


@settings(max_examples=200, deadline=None)
@given(
    trace_requests(),
    st.sampled_from([(8, 2), (8, 4), (8, 8), (6, 4), (4, 8)]),
    st.integers(0, 4),
)
def test_trace_blocks_match_the_block_model_on_their_tokens(requests, sizes, spare):
    # A trace block of ``trace`` tokens with id i stands for tokens i*trace .. i*trace+trace-1;
    # an output known only by its length for tokens nothing else has; the cache key "k"
    # (a namespace of its own) for tokens offset by 10**6.
    trace, block_size = sizes
    fresh = itertools.count(-1, -1)
    expanded = []
    for ids, short, output, space in requests:
        length = max(len(ids) * trace - short, (len(ids) - 1) * trace + 1)
        offset = 10**6 if space else 0
        prompt = [offset + i * trace + j for i in ids for j in range(trace)][:length]
        expanded.append((length, prompt, [next(fresh) for _ in range(output)]))
    capacity = needed_blocks([(p, o) for _, p, o in expanded], block_size) + spare
    model = make_cache_model("vllm", block_size=block_size, capacity_tokens=capacity * block_size)
    reference, ceiling = ReferenceVllm(block_size, capacity), ReferenceVllm(block_size, None)
    for (ids, _, output, space), (length, prompt, unknown) in zip(requests, expanded, strict=True):
        query = CacheQuery(
            block_hashes=ids,
            block_tokens=trace,
            input_length=length,
            output_tokens=output,
            cache_salt=space,
        )
        result = model.process(query)
        assert result.cached_tokens == reference.step(prompt, unknown)
        assert result.longest_available == ceiling.step(prompt, unknown)


def test_a_run_is_cut_where_eviction_stops_and_the_rest_stays():
    # 6 blocks; A fills 4 as one run, B needs 4: 2 free, 2 evicted from A's tail. A again
    # hits its 2 cached blocks; an infinite cache would have held all 4.
    pool = RunPool(capacity=6)
    a = Chain(list(range(10, 14)), 1, 4, 4)
    b = Chain(list(range(20, 24)), 1, 4, 4)
    assert pool.admit(a, 4, 4) == (0, 0)
    assert pool.admit(b, 4, 4) == (0, 0)
    assert [h in pool for h in range(10, 14)] == [True, True, False, False]
    assert pool.admit(a, 4, 4) == (2, 4)


def test_a_hit_that_ends_where_the_match_does_branches_there():
    # B shares A's first block and diverges: the hit cuts A's run where B's new run hangs.
    pool = RunPool(capacity=10)
    a = Chain(list(range(10, 14)), 1, 4, 4)
    b = Chain([10, 20], 1, 2, 2)
    assert pool.admit(a, 4, 4) == (0, 0)
    assert pool.admit(b, 2, 2) == (1, 1)
    assert pool.admit(a, 4, 4) == (4, 4)
    assert pool.admit(b, 2, 2) == (2, 2)


def test_a_chain_that_follows_a_leaf_to_its_end_extends_it():
    # A' repeats A (4 blocks, a leaf) and adds 2: A's run takes them on, and its 6 blocks
    # leave the free queue deepest first, as separate runs would.
    pool = RunPool(capacity=8)
    a = Chain(list(range(10, 14)), 1, 4, 4)
    longer = Chain(list(range(10, 16)), 1, 6, 6)
    assert pool.admit(a, 4, 4) == (0, 0)
    assert pool.admit(longer, 6, 6) == (4, 4)
    (run,) = pool._roots[1].children.values()
    assert (run.lo, run.hi, run.children) == (0, 6, {})
    assert pool.admit(Chain([20, 21, 22], 1, 3, 3), 3, 3) == (0, 0)
    assert [h in pool for h in range(10, 16)] == [True] * 5 + [False]
    assert pool.admit(longer, 6, 6) == (5, 6)


def test_only_a_leaf_hit_to_its_end_is_extended():
    # B's hit stops a block short of A's end: that block is computed again (a copy), so
    # B's new block hangs below it; C then hits all of B and extends B's new run.
    pool = RunPool(capacity=20)
    assert pool.admit(Chain([10, 11, 12], 1, 3, 3), 3, 3) == (0, 0)
    assert pool.admit(Chain([10, 11, 12, 13], 1, 4, 4), 2, 4) == (2, 2)
    (head,) = pool._roots[1].children.values()
    (recomputed,) = head.children.values()
    (new,) = recomputed.children.values()
    assert [(r.lo, r.hi) for r in (head, recomputed, new)] == [(0, 2), (2, 3), (3, 4)]
    assert recomputed.copied
    assert pool.admit(Chain([10, 11, 12, 13, 14], 1, 5, 5), 5, 5) == (4, 4)
    assert (new.lo, new.hi, new.children) == (3, 5, {})
