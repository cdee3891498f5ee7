"""What to fix first, per day, with time to first token and money on a stated basis."""

from pathlib import Path

import pytest

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.auditing.advice import fix_first, log_span_seconds, price_basis
from prefixlint.auditing.describe import duration, tokens_count
from prefixlint.auditing.prices import GpuTimePrice
from prefixlint.auditing.results import AuditReport, RequestRecord, Totals, WhatIf

BREAKERS = (
    Path(__file__).resolve().parent.parent / "fixtures" / "logs" / "tau_openai_breakers.jsonl"
)


def _record(timestamp):
    return RequestRecord(
        file="log", line=1, session_id=None, model_cache="vllm", timestamp=timestamp,
        prompt_tokens=100, cached_tokens=0, cache_write_tokens=0, cause=None, component=None,
        divergence_char=None, divergence_token=None, predecessor_line=None, cost_tokens=0,
        observed_cached=None,
    )  # fmt: skip


def _report(times, saved_by_fix):
    base = Totals(requests=len(times), prompt_tokens=10_000, cached_tokens=2_000, cost_usd=1.0)
    entries = [
        WhatIf(fix, (code,), "vllm", base, Totals(len(times), 10_000, 2_000 + saved, 0, 0.5))
        for fix, code, saved in saved_by_fix
    ]
    return AuditReport(["log"], ["vllm"], records=[_record(t) for t in times], what_if=entries)


def test_fixes_ranked_by_prefill_saved_and_scaled_to_a_day():
    report = _report([0.0, 1800.0, 3600.0], [("order", "PFX201", 300), ("volatile", "PFX101", 900)])
    report.what_if.append(WhatIf("all", ("PFX101",), "vllm", report.what_if[0].base, Totals()))
    rows = fix_first(report, AuditOptions(prefill_tokens_per_second=1000.0))
    assert [r.fix for r in rows] == ["volatile", "order"]
    volatile = rows[0]
    assert volatile.prefill_tokens_saved == 900
    assert volatile.prefill_tokens_per_day == pytest.approx(900 * 24)
    assert volatile.ttft_saved_ms == pytest.approx(900 / 3 / 1000 * 1000)
    assert volatile.usd_saved == pytest.approx(0.5)
    assert volatile.usd_per_day == pytest.approx(0.5 * 24)


def test_without_timestamps_or_throughput_nothing_is_guessed():
    report = _report([None, None], [("volatile", "PFX101", 900)])
    (row,) = fix_first(report, AuditOptions())
    assert log_span_seconds(report) is None
    assert (row.prefill_tokens_per_day, row.ttft_saved_ms, row.usd_per_day) == (None, None, None)


def test_price_basis_says_what_a_dollar_means():
    gpu = AuditOptions(prefill_tokens_per_second=8000.0, gpu_hour_usd=3.0)
    assert price_basis("vllm", "v1", gpu).startswith("GPU time of prefill: $3 per GPU-hour")
    assert "stand-in for a self-hosted engine" in price_basis("vllm", "v1", AuditOptions())
    assert price_basis("openai", "v1", gpu).endswith("(prices v1)")
    assert GpuTimePrice(3.0, 8000.0).cost(8100, 100) == pytest.approx(8000 / 8000 / 3600 * 3.0)


def test_engine_models_are_priced_by_gpu_time_when_asked():
    options = dict(caches=("vllm", "openai"), what_if=False)
    listed = run_audit([str(BREAKERS)], AuditOptions(**options))
    gpu = run_audit(
        [str(BREAKERS)],
        AuditOptions(**options, prefill_tokens_per_second=8000.0, gpu_hour_usd=3.0),
    )
    vllm = gpu.totals("vllm")
    uncached = vllm.prompt_tokens - vllm.cached_tokens
    assert vllm.cost_usd == pytest.approx(uncached / 8000 / 3600 * 3.0)
    assert gpu.totals("openai").cost_usd == pytest.approx(listed.totals("openai").cost_usd)
    assert gpu.assumptions["vllm"]["prices"].startswith("GPU time of prefill")
    assert "ceiling" in gpu.assumptions["vllm"]["capacity"]
    assert gpu.assumptions["vllm"]["granularity"] == "blocks of 16 tokens"
    bounded = run_audit([str(BREAKERS)], AuditOptions(**options, capacity_tokens=50_000))
    assert bounded.assumptions["vllm"]["capacity"] == "50,000 tokens of KV cache"


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(381, "6 min 21 s"), (11_100, "3 h 5 min"), (187_200, "2 d 4 h"), (0.2, "0 s")],
)
def test_duration(seconds, text):
    assert duration(seconds) == text


def test_tokens_count():
    assert [tokens_count(v) for v in (None, 312, 884_433.8, 5_578_509, 2.5e9)] == [
        "-", "312", "884.4 k", "5.6 M", "2.5 G",
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("settings", "capacity"),
    [
        ({}, "4 slots (unified KV cache) and a host-RAM prompt cache of 8,192 MiB"),
        (
            {"slots": 2},
            "2 slots (a KV cache per slot) and a host-RAM prompt cache of 8,192 MiB",
        ),
        (
            {"slots": 1, "kv_unified": True, "cache_ram_mib": 0},
            "1 slot (unified KV cache) and no host-RAM prompt cache",
        ),
        (
            {"cache_ram_mib": -1, "cache_reuse": 64},
            "4 slots (unified KV cache) and an unbounded host-RAM prompt cache, "
            "chunks of 64+ tokens reused",
        ),
    ],
)
def test_llamacpp_capacity_names_its_slots_and_prompt_cache(settings, capacity):
    options = AuditOptions(caches=("llamacpp",), what_if=False, **settings)
    report = run_audit([str(BREAKERS)], options)
    assert report.assumptions["llamacpp"]["capacity"] == capacity
