from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.cache import CACHE_MODELS, CacheQuery, InvalidQuery, make_cache_model
from prefixlint.cache.belady import BeladyCache

MOONCAKE = (
    Path(__file__).parent.parent / "fixtures" / "logs" / "mooncake_conversation_excerpt.jsonl"
)


# llama-server with one slot and no host-RAM prompt cache (-np 1 --cache-ram 0).
ONE_SLOT = {"slots": 1, "cache_ram_mib": 0}


def cached(model, *prompts):
    return [model.process(CacheQuery(tokens=list(p))).cached_tokens for p in prompts]


@pytest.mark.parametrize(
    ("previous", "prompt", "expected"),
    (
        ([1, 2, 3, 4], [1, 2, 3, 4], 3),  # exact repeat: the last token is evaluated again
        ([1, 2, 3, 4], [1, 2, 3], 2),  # strict prefix of the slot: all but the last
        ([1, 2, 3, 4], [1, 2, 3, 4, 5, 6], 4),  # extension
        ([1, 2, 3, 4], [1, 2, 9, 4], 2),  # divergence
        ([1, 2, 3, 4], [7], 0),
    ),
)
def test_llamacpp_common_prefix_with_the_slot(previous, prompt, expected):
    model = make_cache_model("llamacpp", **ONE_SLOT)
    assert cached(model, previous, prompt)[1] == expected


def test_llamacpp_with_one_slot_and_no_prompt_cache():
    model = make_cache_model("llamacpp", **ONE_SLOT)
    results = [model.process(CacheQuery(tokens=p)) for p in ([1, 2, 3, 4], [5, 6], [1, 2, 3, 4])]
    assert results[2].cached_tokens == 0
    assert (results[2].miss_reason, results[2].longest_available) == ("evicted", 3)


def test_llamacpp_slot_holds_generated_tokens():
    model = make_cache_model("llamacpp", **ONE_SLOT)
    model.process(CacheQuery(tokens=[1, 2], output_tokens=[3, 4, 5]))
    assert cached(model, [1, 2, 3, 4, 9]) == [4]


def test_unlimited_is_token_granular_and_never_forgets():
    model = make_cache_model("unlimited")
    assert cached(model, [1, 2, 3], [4, 5], [1, 2, 3], [1, 2, 7], [4, 5, 6]) == [0, 0, 3, 2, 2]


def test_unlimited_trace_blocks_count_the_partial_last_block():
    model = make_cache_model("unlimited")
    query = CacheQuery(block_hashes=[1, 2], block_tokens=512, input_length=700)
    assert [model.process(query).cached_tokens for _ in range(2)] == [0, 700]


def test_belady_keeps_what_is_needed_next():
    # 4 blocks of 2 tokens; each prompt holds 2 hashed blocks and a partial one. LRU lets
    # the one-off prompts b and c push out all of a; Belady drops b's blocks instead.
    a, b, c = [1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 12, 13, 14, 15]
    queries = [CacheQuery(tokens=p) for p in (a, b, c, a)]
    lru = make_cache_model("vllm", block_size=2, capacity_tokens=8)
    optimal = BeladyCache(block_size=2, capacity_tokens=8)
    assert [lru.process(q).cached_tokens for q in queries] == [0, 0, 0, 0]
    assert [r.cached_tokens for r in optimal.run(queries)] == [0, 0, 0, 2]


def test_belady_needs_prepare():
    with pytest.raises(InvalidQuery, match="prepare"):
        BeladyCache().process(CacheQuery(tokens=[1, 2]))


tokens = st.integers(0, 3)


@st.composite
def traces(draw):
    pool = draw(st.lists(st.lists(tokens, max_size=30), min_size=1, max_size=4))
    requests = []
    for _ in range(draw(st.integers(1, 30))):
        base = draw(st.sampled_from(pool))
        prompt = base[: draw(st.integers(0, len(base)))] + draw(st.lists(tokens, max_size=8))
        requests.append((prompt or [0], draw(st.lists(tokens, max_size=5))))
    return requests


@settings(max_examples=200, deadline=None)
@given(traces(), st.sampled_from([1, 2, 4]), st.integers(0, 8))
def test_belady_between_lru_and_the_ceiling(trace, block_size, spare):
    queries = [CacheQuery(tokens=p, output_tokens=o) for p, o in trace]
    needed = max(-(-(len(p) + max(len(o) - 1, 0)) // block_size) for p, o in trace)
    capacity = (needed + spare) * block_size
    lru = make_cache_model("vllm", block_size=block_size, capacity_tokens=capacity)
    lru_hits = sum(lru.process(q).cached_tokens for q in queries)
    optimal = BeladyCache(block_size=block_size, capacity_tokens=capacity).run(queries)
    ceiling = make_cache_model("unlimited")
    assert sum(r.cached_tokens for r in optimal) >= lru_hits
    for query, result in zip(queries, optimal, strict=True):
        assert result.cached_tokens <= ceiling.process(query).cached_tokens


def mooncake_queries():
    with MOONCAKE.open() as handle:
        records = [json.loads(line) for line in handle]
    return [
        CacheQuery(
            block_hashes=r["hash_ids"],
            block_tokens=512,
            input_length=r["input_length"],
            output_tokens=r["output_length"],
            timestamp=r["timestamp"] / 1000,
        )
        for r in records
    ]


@pytest.mark.parametrize(
    ("name", "params"),
    (
        ("unlimited", {}),
        ("vllm", {"block_size": 512}),
        ("vllm", {"block_size": 16}),
        ("sglang", {"page_size": 1}),
        ("sglang", {"page_size": 512}),
        ("llamacpp", ONE_SLOT),
    ),
)
def test_mooncake_excerpt(name, params):
    # Every request starts with block 0, a shared 512-token head; request 35 continues a
    # conversation seen at request 15: its first 54 blocks (27,648 tokens) are known.
    model = make_cache_model(name, **params)
    hits = [model.process(q).cached_tokens for q in mooncake_queries()]
    expected = [0] + [512] * 49
    expected[35] = 54 * 512 if name != "llamacpp" else 512
    assert hits == expected


def test_every_model_is_registered_and_resets():
    assert set(CACHE_MODELS) == {
        "anthropic",
        "belady",
        "deepseek",
        "gemini",
        "llamacpp",
        "openai",
        "sglang",
        "unlimited",
        "vllm",
    }
    for name in set(CACHE_MODELS) - {"belady"}:
        model = make_cache_model(name)
        query = CacheQuery(tokens=list(range(5000)), breakpoints=[(4000, 300)])
        first = model.process(query)
        model.process(query)
        model.reset()
        assert model.process(query) == first, name


def test_unknown_model_name():
    with pytest.raises(ValueError, match="unknown cache model 'vlm'"):
        make_cache_model("vlm")


@pytest.mark.parametrize(
    ("fields", "message"),
    (
        ({}, "either tokens or block_hashes"),
        ({"tokens": [1], "block_hashes": [1]}, "either tokens or block_hashes"),
        ({"block_hashes": [1]}, "block_tokens"),
        ({"block_hashes": [1, 2], "block_tokens": 4, "input_length": 4}, "does not fit"),
        ({"block_hashes": [1], "block_tokens": 4, "output_tokens": [1]}, "count"),
    ),
)
def test_inconsistent_queries(fields, message):
    with pytest.raises(InvalidQuery, match=message):
        CacheQuery(**fields)
