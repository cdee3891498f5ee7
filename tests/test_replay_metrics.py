import pytest

from prefixlint.replay.metrics import HITS, QUERIES, PrefixCacheCounters, counter_totals
from prefixlint.replay.report import percentile

VLLM_METRICS = """\
# HELP vllm:prefix_cache_queries_total Prefix cache queries, in terms of number of queried tokens.
# TYPE vllm:prefix_cache_queries_total counter
vllm:prefix_cache_queries_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 4096.0
vllm:prefix_cache_queries_created{engine="0",model_name="Qwen/Qwen3-0.6B"} 1.76e+09
vllm:prefix_cache_hits_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 1024.0
vllm:prefix_cache_hits_total{engine="1",model_name="odd } name"} 32
vllm:prompt_tokens_total{engine="0",model_name="Qwen/Qwen3-0.6B"} 4096.0
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (VLLM_METRICS, {QUERIES: 4096.0, HITS: 1056.0}),
        ("vllm:prefix_cache_hits 7\n", {HITS: 7.0}),
        ('vllm:prefix_cache_hits_total{a="b"} not-a-number\n', {}),
        ("# only comments\n\n", {}),
        ('vllm:prefix_cache_hits_total{a="unclosed 3\n', {}),
    ],
)
def test_counter_totals(text, expected):
    assert counter_totals(text, (QUERIES, HITS)) == expected


def test_counters_difference():
    before = PrefixCacheCounters.from_text(VLLM_METRICS)
    after = PrefixCacheCounters(queries=5000.0, hits=1100.0)
    assert after - before == PrefixCacheCounters(queries=904.0, hits=44.0)


def test_counters_absent():
    assert PrefixCacheCounters.from_text("sglang:cache_hit_rate 0.5\n") is None


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([], 50, None),
        ([3.0], 95, 3.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.5),
        ([4.0, 1.0, 3.0, 2.0], 100, 4.0),
        ([0.0, 10.0], 95, 9.5),
    ],
)
def test_percentile(values, q, expected):
    assert percentile(values, q) == expected
