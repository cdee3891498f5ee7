"""How ``audit --executor ray`` splits the simulation, and its hash trace: hand-computed, no
Ray needed."""

from __future__ import annotations

import pytest

from prefixlint.auditing import AuditOptions
from prefixlint.auditing.hash_trace import TRACE_COLUMNS, trace_query, trace_row
from prefixlint.auditing.partition import (
    exclusions,
    partition_key,
    partitioned,
    split_models,
)
from prefixlint.auditing.pipeline import Auditor
from prefixlint.auditing.results import ReplicaLoad
from prefixlint.auditing.routing import assign, replay, route
from prefixlint.auditing.sweep import TraceEntry
from prefixlint.cache import CacheQuery, make_cache_model
from prefixlint.request import ChatRequest


@pytest.mark.parametrize(
    ("name", "capacity", "expected"),
    [
        ("openai", None, True),
        ("openai", 10_000, False),  # a capacity is shared by every namespace
        ("gemini", 10_000, False),
        ("anthropic", 10_000, True),  # takes no capacity
        ("deepseek", None, True),
        ("unlimited", 10_000, True),
        ("vllm", None, False),  # engines: one stream, as one replica serves it
        ("sglang", None, False),
        ("llamacpp", None, False),
        ("belady", None, False),
    ],
)
def test_which_models_are_simulated_per_partition(name, capacity, expected):
    assert partitioned(name, AuditOptions(caches=(name,), capacity_tokens=capacity)) is expected


def test_the_partitioned_models_share_streams_and_every_other_model_has_its_own():
    options = AuditOptions(caches=("vllm", "openai", "unlimited", "sglang"))
    assert split_models(options) == (("openai", "unlimited"), ("vllm", "sglang"))
    assert split_models(AuditOptions(caches=("vllm",))) == ((), ("vllm",))
    capped = AuditOptions(caches=("openai", "anthropic"), capacity_tokens=100)
    assert split_models(capped) == (("anthropic",), ("openai",))


def test_the_partition_is_the_namespace_and_the_first_unit():
    key = partition_key(CacheQuery(tokens=(1, 2, 3)))
    assert partition_key(CacheQuery(tokens=(1, 9, 9, 9))) == key  # later tokens do not count
    assert partition_key(CacheQuery(tokens=(2, 2, 3))) != key
    # a key or salt that only some partitioned models read divides no partition
    assert partition_key(CacheQuery(tokens=(1, 2, 3), cache_key="k")) == key
    assert partition_key(CacheQuery(tokens=(1, 2, 3), cache_salt="s")) == key
    assert partition_key(CacheQuery(tokens=(1, 2, 3), extra_keys=("model:m",))) != key
    assert partition_key(CacheQuery(block_hashes=(1, 2), block_tokens=4)) != key
    assert partition_key(CacheQuery(tokens=())) == partition_key(CacheQuery(tokens=()))


def _replayed_per_partition(name: str, queries: list[CacheQuery]) -> list[int]:
    """Cached tokens of each query, each partition replayed through its own model."""
    models: dict[int, object] = {}
    cached = []
    for query in queries:
        model = models.setdefault(partition_key(query), make_cache_model(name))
        cached.append(model.process(query).cached_tokens)  # type: ignore[attr-defined]
    return cached


def test_per_partition_equals_one_stream_for_the_ceiling():
    # Hand-computed: B reuses 2 tokens of A, D 2 of C, E 3 of A; C and D start elsewhere.
    queries = [
        CacheQuery(tokens=(1, 2, 3, 4)),
        CacheQuery(tokens=(1, 2, 9)),
        CacheQuery(tokens=(5, 6)),
        CacheQuery(tokens=(5, 6, 7)),
        CacheQuery(tokens=(1, 2, 3, 8)),
        CacheQuery(tokens=(1, 2, 3, 8), cache_salt="other"),
        CacheQuery(tokens=(1, 2, 3, 8), cache_key="other"),
    ]
    one = make_cache_model("unlimited")
    assert [one.process(q).cached_tokens for q in queries] == [0, 2, 0, 2, 3, 0, 4]
    assert _replayed_per_partition("unlimited", queries) == [0, 2, 0, 2, 3, 0, 4]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # openai keeps keys apart and ignores salts; the ceiling the other way round
        ("openai", [0, 0, 1920, 1920, 1408]),
        ("unlimited", [0, 2000, 0, 0, 1500]),
    ],
)
def test_per_partition_equals_one_stream_across_keys_and_salts(name, expected):
    prompt = tuple(range(2000))
    queries = [
        CacheQuery(tokens=prompt, cache_key="a", model="gpt-4o"),
        CacheQuery(tokens=prompt, cache_key="b", model="gpt-4o"),
        CacheQuery(tokens=prompt, cache_key="a", cache_salt="s", model="gpt-4o"),
        CacheQuery(tokens=prompt, cache_key="b", cache_salt="t", model="gpt-4o"),
        CacheQuery(tokens=prompt[:1500] + (-1,) * 500, cache_key="a", model="gpt-4o"),
    ]
    one = make_cache_model(name)
    assert [one.process(q).cached_tokens for q in queries] == expected
    assert _replayed_per_partition(name, queries) == expected


def test_a_capacity_ties_partitions_together_so_it_is_one_stream():
    # With room for 4 tokens, C evicts A in one stream, so E misses; per partition it would hit.
    queries = [CacheQuery(tokens=(1, 2, 3, 4)), CacheQuery(tokens=(5, 6, 7, 8))]
    queries.append(CacheQuery(tokens=(1, 2, 3, 4)))
    one = make_cache_model("vllm", block_size=1, capacity_tokens=4)
    assert [one.process(q).cached_tokens for q in queries] == [0, 0, 0]
    assert not partitioned("vllm", AuditOptions(capacity_tokens=4))


def test_a_request_an_earlier_model_rejects_is_left_out_of_the_later_models():
    caches = ("anthropic", "vllm", "openai")
    rejected = {(0, 5): {"anthropic"}, (0, 7): {"vllm", "openai"}, (1, 2): {"openai"}}
    assert exclusions(caches, rejected) == {
        "anthropic": set(),
        "vllm": {(0, 5)},
        "openai": {(0, 5), (0, 7)},
    }


def _text_query() -> CacheQuery:
    auditor = Auditor(AuditOptions(lora_modules=frozenset({"adapter"})), [])
    request = ChatRequest(
        line=3,
        format="anthropic",
        model="adapter",
        system="You are terse.",
        messages=({"role": "user", "content": "secret words"},),
        params={"prompt_cache_key": "tenant-1", "cache_salt": "salt-1"},
        cache_breakpoints=(("system", 3600.0), ("messages", 300.0)),
        timestamp=1_700_000_000.5,
        output_length=12,
    )
    return auditor.prepare(request).query


def test_a_trace_row_gives_back_the_query_and_holds_no_text():
    query = _text_query()
    assert (
        query.breakpoints and query.boundaries and query.extra_keys == (("lora_name", "adapter"),)
    )
    row = trace_row(0, 3, "session-1", query)
    assert tuple(row) == TRACE_COLUMNS
    assert (row["cache_key"], row["cache_salt"]) == ("tenant-1", "salt-1")
    back = trace_query(row)
    assert back == query
    assert back.token_bytes == query.token_bytes
    text_values = [value for value in row.values() if isinstance(value, str)]
    assert not any("secret" in value or "terse" in value for value in text_values)
    assert row["prompt_tokens"] == len(query.tokens or ())


def test_a_trace_row_of_block_hashes_gives_back_the_query():
    query = CacheQuery(block_hashes=(7, -3, 2**62), block_tokens=512, input_length=1200)
    row = trace_row(1, 9, None, query)
    assert row["tokens"] is None
    assert trace_query(row) == query


def _trace(*requests):
    return [TraceEntry(CacheQuery(tokens=tokens), 0, session) for tokens, session in requests]


def test_replicas_are_assigned_apart_from_their_caches():
    # prefix-aware with epsilon 1: the first request goes to 0 (a tie, lowest index); [5, 6]
    # to 1 (no match anywhere, the least loaded); [1, 2, 3] back to 0, which holds its
    # blocks (loads 3 and 2 are within 2 x the mean). With epsilon 0.1, 0 is past the bound.
    trace = _trace(([1, 2, 3], None), ([5, 6], None), ([1, 2, 3], None))
    assert assign(trace, 2, "prefix-aware", epsilon=1.0, block_size=1) == [0, 1, 0]
    assert assign(trace, 2, "prefix-aware", epsilon=0.1, block_size=1) == [0, 1, 1]
    assert assign(trace, 2, "round-robin") == [0, 1, 0]
    assert assign(_trace(([1], "a"), ([2, 3], "b"), ([1], "a")), 2, "session") == [0, 1, 0]
    # Each replica replayed apart, as a cluster does, gives the routing table of one pass.
    assert replay([trace[0].query, trace[2].query], block_size=1) == ReplicaLoad(2, 6, 2)
    streams_seen = []

    def replay_streams(streams):
        streams_seen.append([len(stream) for stream in streams])
        return [replay(stream, None, 1) for stream in streams]

    apart = route(trace, 2, "round-robin", block_size=1, replay_streams=replay_streams)
    assert streams_seen == [[2, 1]]
    assert apart == route(trace, 2, "round-robin", block_size=1)


def test_a_trace_row_round_trips_through_parquet_and_an_old_row_is_refused(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from prefixlint.auditing.hash_trace import trace_schema

    query = _text_query()
    path = tmp_path / "trace.parquet"
    pq.write_table(
        pa.Table.from_pylist([trace_row(0, 3, None, query)], schema=trace_schema()), path
    )
    (row,) = pq.read_table(path).to_pylist()
    assert trace_query(row) == query
    # a trace without the column held either parameter in cache_key: no guess is made
    del row["cache_salt"]
    with pytest.raises(ValueError, match="cache_salt"):
        trace_query(row)
