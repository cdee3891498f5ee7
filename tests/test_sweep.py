"""Capacity sweep: KV geometry, the lfu/fifo/priority policies, the sweep and its knee."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cache_block_runs import token_requests

from prefixlint.auditing.results import SweepPoint
from prefixlint.auditing.sweep import (
    TraceEntry,
    default_capacities,
    knee,
    leading_tokens,
    parse_capacities,
    run_sweep,
    working_set_tokens,
)
from prefixlint.cache import CacheQuery
from prefixlint.cache.geometry import GeometryError, load_geometry, parse_bytes
from prefixlint.cache.policies import EvictionCache
from prefixlint.cache.vllm import VllmCache
from prefixlint.request import ChatRequest, Component


def test_known_geometries_bytes_per_token():
    # 2 (K and V) x layers x KV heads x head dim x 2 bytes (bfloat16)
    assert load_geometry("Qwen3-8B")[1].bytes_per_token == 2 * 36 * 8 * 128 * 2 == 147_456
    assert load_geometry("llama-3.1-8b")[1].bytes_per_token == 131_072
    assert load_geometry("Qwen3-8B")[1].capacity_tokens(8 * 2**30) == 58_254


def test_config_json_geometry(tmp_path):
    path = tmp_path / "config.json"
    config = {"num_hidden_layers": 4, "num_attention_heads": 8, "hidden_size": 512}
    path.write_text(json.dumps({"text_config": {**config, "torch_dtype": "float32"}}))
    # head_dim 512 / 8 = 64, KV heads default to the attention heads: 2 x 4 x 8 x 64 x 4
    assert load_geometry(str(tmp_path))[1].bytes_per_token == 16_384
    path.write_text(json.dumps({**config, "num_key_value_heads": 2, "head_dim": 32}))
    assert load_geometry(str(path))[1].bytes_per_token == 2 * 4 * 2 * 32 * 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{", "cannot read model config"),
        ('{"num_attention_heads": 8}', "no num_hidden_layers"),
        ('{"num_hidden_layers": 2, "num_attention_heads": 8}', "needs head_dim"),
        ('{"num_hidden_layers": "2", "head_dim": 8}', "positive integer"),
        (
            '{"num_hidden_layers": 2, "head_dim": 8, "num_key_value_heads": 1, '
            '"torch_dtype": "int3"}',
            "unknown torch_dtype",
        ),
    ],
)
def test_bad_config_json(tmp_path, text, message):
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(GeometryError, match=message):
        load_geometry(str(path))


def test_unknown_geometry_name():
    with pytest.raises(GeometryError, match="not a known model"):
        load_geometry("Qwen9-1T")


def test_parse_bytes_and_capacities():
    assert parse_bytes("8GiB") == 8 * 2**30
    assert parse_capacities("10k, 1M,512", None) == [512, 10_000, 1_000_000]
    assert parse_capacities("1GiB", 131_072) == [8192]
    with pytest.raises(ValueError, match="give --model-geometry"):
        parse_capacities("1GiB", None)
    with pytest.raises(ValueError, match="neither tokens"):
        parse_capacities("lots", None)


def _hits(policy, prompts, capacity, protected=None):
    """Cached tokens per request with 1-token blocks."""
    cache = EvictionCache(policy, block_size=1, capacity_tokens=capacity)
    protected = protected or [0] * len(prompts)
    return [
        cache.process(CacheQuery(tokens=p), guard).cached_tokens
        for p, guard in zip(prompts, protected, strict=True)
    ]


# Two-token prompts with 1-token blocks: only the first block can hit (prompt - 1), each
# request holds two blocks, the cache four.
MIXED = [[1, 2], [3, 4], [1, 9], [5, 6], [1, 7], [3, 8]]


def test_fifo_evicts_by_entry_not_use():
    # r3 hits "1" but it keeps its entry time; r4 evicts "12" then "1"... (see below)
    # after r3: {1 (entered 1), 3, 34 (2), 19 (3)}; r4 evicts 1 and 34; r5 misses "1" and
    # evicts 3 and 19; r6 misses "3".
    assert _hits("fifo", MIXED, 4) == [0, 0, 1, 0, 0, 0]


def test_lru_model_on_the_same_requests():
    # vLLM's free queue: r3 renews "1", so r4 evicts 34 and 3 and r5 hits "1".
    cache = VllmCache(block_size=1, capacity_tokens=4)
    assert [cache.process(CacheQuery(tokens=p)).cached_tokens for p in MIXED] == [0, 0, 1, 0, 1, 0]


def test_priority_keeps_the_protected_block():
    # r2's first token is its system prompt: "3" outlives every unprotected block, so r6
    # hits it; r4 evicts 34 and 19 (deepest first on the stamp tie), r5 still hits "1".
    assert _hits("priority", MIXED, 4, [0, 1, 0, 0, 0, 0]) == [0, 0, 1, 0, 1, 1]
    # Unprotected, priority is least-recently-used.
    assert _hits("priority", MIXED, 4) == [0, 0, 1, 0, 1, 0]


def test_lfu_keeps_the_frequent_block():
    # "1" is used twice; r3 evicts 12, r4 evicts 13 and 45 (used once each), r5 hits "1".
    prompts = [[1, 2], [1, 3], [4, 5], [6, 7], [1, 8]]
    assert _hits("lfu", prompts, 4) == [0, 1, 0, 0, 1]
    cache = VllmCache(block_size=1, capacity_tokens=4)  # LRU lost "1" to r4
    assert [cache.process(CacheQuery(tokens=p)).cached_tokens for p in prompts] == [0, 1, 0, 0, 0]


def test_policy_rejects_a_request_larger_than_the_cache():
    with pytest.raises(ValueError, match="needs 3 KV blocks"):
        _hits("lfu", [[1, 2, 3]], 2)


def test_default_capacities_and_working_set():
    # 40 tokens: 2 full blocks of 16 and a tail (3 held); 64 tokens: 4 blocks.
    queries = [CacheQuery(tokens=range(40)), CacheQuery(tokens=range(100, 164))]
    assert working_set_tokens(queries, 16) == (2 + 4 + 1) * 16
    assert default_capacities(queries, 16) == [64, 112]
    assert default_capacities(queries[:1] * 2, 16) == [48]


def test_knee_is_the_first_point_at_ninety_percent_of_the_gain():
    def point(capacity, rate):
        return SweepPoint("lru", capacity, None, rate, 0)

    # gain 0.5 - 0.1 = 0.4; 90% of it is reached at 0.46: the 300-token point (0.47).
    points = [point(100, 0.1), point(200, 0.4), point(300, 0.47), point(400, 0.5)]
    assert knee(points) == 300
    assert knee([point(100, 0.3), point(200, 0.3)]) == 100


POLICIES = st.sampled_from([1, 2, 4]).flatmap(lambda b: st.tuples(st.just(b), token_requests(b)))


def _trace(requests, protected):
    return [
        TraceEntry(CacheQuery(tokens=p, output_tokens=o), guard, None)
        for (p, o), guard in zip(requests, protected, strict=False)
    ]


@settings(max_examples=60, deadline=None)
@given(POLICIES, st.integers(0, 6), st.lists(st.integers(0, 12), min_size=30, max_size=30))
def test_belady_is_never_beaten_and_the_working_set_reaches_the_ceiling(case, spare, guards):
    block_size, requests = case
    trace = _trace(requests, guards)
    queries = [e.query for e in trace]
    capacities = default_capacities(queries, block_size)
    smallest = capacities[0] + spare * block_size
    sweep = run_sweep(trace, sorted({smallest, *capacities}), block_size=block_size)
    by_capacity: dict[int, dict[str, float]] = {}
    for p in sweep.points:
        by_capacity.setdefault(p.capacity_tokens, {})[p.policy] = p.hit_rate
    for rates in by_capacity.values():
        assert all(rates["belady"] >= rate - 1e-12 for rate in rates.values())
    top = by_capacity[working_set_tokens(queries, block_size)]
    assert all(abs(rate - sweep.ceiling_hit_rate) < 1e-12 for rate in top.values())


def test_sweep_reports_bytes_and_prefill():
    # One 33-token prompt twice, 16-token blocks: the second hits 32 tokens at any capacity
    # that holds its 3 blocks; capacities in bytes follow the geometry.
    trace = _trace([(list(range(33)), [])] * 2, [0, 0])
    sweep = run_sweep(trace, [48], block_size=16, bytes_per_token=10)
    assert {(p.policy, p.capacity_bytes, p.prefill_tokens) for p in sweep.points} == {
        (policy, 480, 66 - 32) for policy in ("lru", "lfu", "fifo", "priority", "belady")
    }
    assert sweep.ceiling_hit_rate == 32 / 66
    with pytest.raises(ValueError, match="below the largest request"):
        run_sweep(trace, [32], block_size=16)


def _rendered(*components):
    return SimpleNamespace(
        components=[Component(name, 0, 0, start, end) for name, start, end in components]
    )


def test_leading_tokens_are_the_system_prompt_and_tools():
    system_first = ChatRequest(
        line=1, format="openai", messages=({"role": "system"}, {"role": "user"})
    )
    shape = (("messages[0]", 0, 10), ("tools", 10, 12), ("tools[0]", 12, 30))
    rendered = _rendered(*shape, ("messages[1]", 30, 40))
    assert leading_tokens(system_first, rendered) == 30
    user_first = ChatRequest(line=1, format="openai", messages=({"role": "user"},))
    assert leading_tokens(user_first, _rendered(("messages[0]", 0, 10))) == 0
    separate = _rendered(("system", 0, 8), ("messages[0]", 8, 20))
    assert leading_tokens(user_first, separate) == 8
    assert leading_tokens(user_first, None) == 0


@settings(max_examples=60, deadline=None)
@given(
    POLICIES,
    st.integers(0, 6),
    st.lists(
        st.tuples(st.sampled_from([(), ("lora",)]), st.booleans()),
        min_size=30,
        max_size=30,
    ),
)
def test_compact_queries_sweep_and_route_as_their_tokens(case, spare, shapes):
    """Block hashes in place of tokens change no figure of the sweep or the routing what-if
    (outputs as counts, as the audit logs them; namespaces and salts)."""
    from prefixlint.auditing.routing import route
    from prefixlint.auditing.sweep import compact_query
    from prefixlint.cache.chain_memo import ChainHashMemo

    block_size, requests = case
    queries = [
        CacheQuery(
            tokens=prompt,
            output_tokens=len(output),
            extra_keys=keys,
            cache_salt="salt" if salted else None,
            timestamp=float(n),
        )
        for n, ((prompt, output), (keys, salted)) in enumerate(zip(requests, shapes, strict=False))
    ]
    memo = ChainHashMemo(block_size)
    compact = [compact_query(q, memo) for q in queries]
    assert all(c.tokens is None for c in compact)
    full_trace = [TraceEntry(q, n % 3, f"s{n % 4}") for n, q in enumerate(queries)]
    compact_trace = [
        TraceEntry(c, e.protected_tokens, e.session)
        for c, e in zip(compact, full_trace, strict=True)
    ]
    capacities = default_capacities(queries, block_size)
    chosen = sorted({capacities[0] + spare * block_size, *capacities})
    assert default_capacities([e.query for e in compact_trace], block_size) == capacities
    full = run_sweep(full_trace, chosen, block_size=block_size)
    assert run_sweep(compact_trace, chosen, block_size=block_size) == full
    for router in ("round-robin", "session", "prefix-aware"):
        kwargs = {"capacity_tokens": chosen[0], "block_size": block_size}
        assert route(compact_trace, 2, router, **kwargs) == route(full_trace, 2, router, **kwargs)


def test_a_compact_query_is_its_block_hashes():
    from prefixlint.auditing.sweep import compact_query
    from prefixlint.cache.chain_memo import ChainHashMemo

    query = CacheQuery(tokens=list(range(1000)), output_tokens=7, timestamp=3.0)
    compact = compact_query(query, ChainHashMemo(16))
    assert compact.tokens is None and compact.block_tokens == 16
    assert len(compact.block_hashes) == 63  # 62 full blocks and the partial one
    assert (compact.prompt_tokens, compact.output_count, compact.timestamp) == (1000, 7, 3.0)
    assert compact.block_hashes.itemsize * len(compact.block_hashes) == 504  # bytes
    logged = CacheQuery(tokens=[1, 2, 3], output_tokens=[4, 5])
    assert compact_query(logged, ChainHashMemo(16)) is logged
