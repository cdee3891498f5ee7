"""The cache models' shortcuts give exactly what the general paths give.

Packed token bytes on a query, the vLLM chain-hash memo, vLLM's unlimited path (no free
queue), SGLang's and Belady's unlimited paths and radix lookups that walk a prefix of
the inserted key in place.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sequences import loop_prefix_length

from prefixlint.cache import CACHE_MODELS, CacheQuery, InvalidQuery, make_cache_model
from prefixlint.cache.base import unit_bytes
from prefixlint.cache.belady import BeladyCache
from prefixlint.cache.chain_memo import ChainHashMemo
from prefixlint.cache.radix import RadixTree, SeenTree
from prefixlint.cache.vllm import block_contents, block_hashes, chain_hashes

tokens = st.integers(0, 3)
outputs = st.lists(tokens, max_size=6) | st.integers(0, 20)  # logged ids, or only a count
namespaces = st.sampled_from([((), None), (("model:a",), None), ((), "salt"), (("lora",), "s")])


@st.composite
def conversations(draw):
    """Requests that extend, cut and branch earlier ones, as conversations do."""
    seen: list[list[int]] = [[]]
    requests = []
    for _ in range(draw(st.integers(1, 25))):
        base = draw(st.sampled_from(seen))
        prompt = base[: draw(st.integers(0, len(base)))] + draw(st.lists(tokens, max_size=20))
        prompt = prompt or [0]
        output = draw(outputs)
        extra_keys, salt = draw(namespaces)
        requests.append((prompt, output, extra_keys, salt))
        seen.append(prompt + (output if isinstance(output, list) else []))
    return requests


def queries(requests, **fields):
    return [
        CacheQuery(tokens=prompt, output_tokens=output, extra_keys=extra, cache_salt=salt, **fields)
        for prompt, output, extra, salt in requests
    ]


@pytest.mark.parametrize(
    ("fields", "accepted"),
    (
        ({"tokens": [1, 2], "packed": unit_bytes([1, 2])}, True),
        ({"tokens": [], "packed": b""}, True),
        ({"tokens": [1, 2], "packed": unit_bytes([1])}, False),
        ({"tokens": [1, 2], "packed": b"\x01\x02"}, False),
        ({"block_hashes": [1], "block_tokens": 4, "packed": unit_bytes([1])}, False),
    ),
)
def test_packed_bytes_must_fit_the_tokens(fields, accepted):
    if accepted:
        assert CacheQuery(**fields).token_bytes == fields["packed"]
    else:
        with pytest.raises(InvalidQuery):
            CacheQuery(**fields)


def test_token_bytes_pack_the_tokens_when_not_given():
    assert CacheQuery(tokens=(5, -1, 2**40)).token_bytes == unit_bytes([5, -1, 2**40])


MODEL_PARAMS = (
    *((name, {}) for name in sorted(CACHE_MODELS)),
    ("vllm", {"block_size": 2, "capacity_tokens": 24}),
    ("sglang", {"page_size": 2, "capacity_tokens": 40}),
)


@pytest.mark.parametrize(("name", "params"), MODEL_PARAMS)
@settings(max_examples=40, deadline=None)
@given(requests=conversations())
def test_packed_queries_give_the_same_results(name, params, requests):
    plain = queries(requests, timestamp=0.0)
    packed = [dataclasses.replace(q, packed=unit_bytes(q.tokens)) for q in plain]
    results = []
    for batch in (plain, packed):
        model = make_cache_model(name, **params)
        try:
            results.append(
                model.run(batch) if hasattr(model, "run") else [model.process(q) for q in batch]
            )
        except InvalidQuery as exc:  # a request larger than the capacity: same for both
            results.append(str(exc))
    assert results[0] == results[1]


@settings(max_examples=200, deadline=None)
@given(requests=conversations(), block_size=st.sampled_from([1, 2, 4]))
def test_chain_hash_memo_gives_the_chain_hashes_and_recalls_the_longest_prefix(
    requests, block_size
):
    memo = ChainHashMemo(block_size)
    earlier: list[tuple[tuple, list[int]]] = []
    for query in queries(requests):
        space = (query.extra_keys, query.cache_salt)
        hashes, known = memo.hashes(query.token_bytes, *space)
        contents = block_contents(dataclasses.replace(query, output_tokens=0), block_size)
        assert hashes == chain_hashes(contents, *space)
        blocks = len(query.tokens) // block_size * block_size
        longest = max(
            (
                loop_prefix_length(query.tokens[:blocks], tokens)
                for other, tokens in earlier
                if other == space
            ),
            default=0,
        )
        assert known == longest // block_size
        earlier.append((space, list(query.tokens[:blocks])))


@settings(max_examples=150, deadline=None)
@given(requests=conversations(), block_size=st.sampled_from([1, 2, 4]))
def test_a_memo_that_forgets_changes_no_hash_and_no_result(requests, block_size):
    memo = ChainHashMemo(block_size, capacity=8 * block_size)  # forgets every other lookup
    model = make_cache_model("vllm", block_size=block_size, capacity_tokens=10**9)
    forgetful = make_cache_model("vllm", block_size=block_size)
    forgetful._memo = ChainHashMemo(block_size, capacity=8 * block_size)
    for query in queries(requests):
        space = (query.extra_keys, query.cache_salt)
        contents = block_contents(dataclasses.replace(query, output_tokens=0), block_size)
        assert memo.hashes(query.token_bytes, *space)[0] == chain_hashes(contents, *space)
        assert forgetful.process(query) == model.process(query)


@settings(max_examples=350, deadline=None)
@given(
    requests=conversations(),
    size=st.sampled_from([1, 2, 4]),
    model=st.sampled_from([("vllm", "block_size"), ("sglang", "page_size")]),
)
def test_unlimited_path_equals_a_pool_that_never_fills(requests, size, model):
    name, size_param = model
    unlimited = make_cache_model(name, **{size_param: size})
    bounded = make_cache_model(name, **{size_param: size}, capacity_tokens=10**9)
    for query in queries(requests):
        assert unlimited.process(query) == bounded.process(query)
    if name == "vllm":
        for query in queries(requests):
            for block_hash in block_hashes(query, size):
                assert (block_hash in unlimited) == (block_hash in bounded)


@settings(max_examples=200, deadline=None)
@given(
    keys=st.lists(st.lists(tokens, min_size=1, max_size=12), min_size=1, max_size=12),
    cuts=st.lists(st.integers(0, 12), min_size=12, max_size=12),
)
def test_radix_match_up_to_end_equals_matching_the_cut_key(keys, cuts):
    in_place, sliced = RadixTree(8), RadixTree(8)

    def weights(units):
        return units

    for key, cut in zip(keys, cuts, strict=False):
        data, end = unit_bytes(key), min(cut, len(key)) * 8
        first = in_place.match(data, weights, end=end)
        second = sliced.match(data[:end], weights)
        assert (first.units, first.best_mark) == (second.units, second.best_mark)
        in_place.insert(data, weights)
        sliced.insert(data, weights)
        assert in_place.tokens == sliced.tokens


@settings(max_examples=200, deadline=None)
@given(
    keys=st.lists(st.lists(tokens, min_size=1, max_size=12), min_size=1, max_size=12),
    cuts=st.lists(st.integers(0, 12), min_size=12, max_size=12),
)
def test_seen_tree_add_equals_a_match_then_an_insert(keys, cuts):
    added, walked = SeenTree(8), SeenTree(8)

    def weights(units):
        return units

    for key, cut in zip(keys, cuts, strict=False):
        data, end = unit_bytes(key), min(cut, len(key)) * 8
        expected = walked.match(data, weights, end=end).units
        walked.insert(data, weights)
        assert added.add(data, weights, end) == expected
        assert added.tokens == walked.tokens


@settings(max_examples=150, deadline=None)
@given(requests=conversations(), block_size=st.sampled_from([1, 2, 4]))
def test_belady_unlimited_path_equals_a_pool_that_never_fills(requests, block_size):
    batch = queries(requests)
    unlimited = BeladyCache(block_size=block_size).run(batch)
    bounded = BeladyCache(block_size=block_size, capacity_tokens=10**9).run(batch)
    lru = make_cache_model("vllm", block_size=block_size)
    assert unlimited == bounded == [lru.process(query) for query in batch]
