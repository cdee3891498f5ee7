"""Observed against predicted: a vLLM ``/metrics`` scrape against the audit's ``vllm`` model.

vLLM counts ``vllm:prefix_cache_queries`` (prompt tokens looked up in the prefix cache) and
``vllm:prefix_cache_hits`` (tokens found), exposed as ``..._total`` counters with one sample
per engine and model (``vllm/v1/metrics/loggers.py``; older servers export them as
``vllm:gpu_prefix_cache_queries`` / ``_hits``, read when the new names are absent). One scrape
gives the counters since the server started; two (before and after the logged traffic) give
their difference, which is what that traffic did. The engine's hit rate, hits / queries, is
compared with the ``vllm`` model's cached / prompt tokens over the log; past the tolerance the
check warns, since then either the model's settings (block size, capacity) or the log (not the
traffic the scrape counted) do not match the deployment.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from prefixlint.auditing.describe import percent
from prefixlint.auditing.results import AuditReport, EngineCheck
from prefixlint.replay.metrics import HITS, QUERIES, counter_samples

DEFAULT_TOLERANCE = 0.05
LEGACY = {QUERIES: "vllm:gpu_prefix_cache_queries", HITS: "vllm:gpu_prefix_cache_hits"}


class MetricsError(Exception):
    """A scrape that cannot be read or lacks the counters; the message names file and line."""


def read_scrape(path: str) -> tuple[float, float]:
    """``(queries, hits)`` summed over the label sets of one Prometheus text scrape."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MetricsError(f"{path}: cannot read the scrape: {exc}") from None
    names = (QUERIES, HITS, *LEGACY.values())
    totals: dict[str, float] = {}
    seen = set()
    for number, family, value in counter_samples(text, names):
        seen.add(number)
        try:
            count = float(value)
        except ValueError:
            count = math.nan
        total = totals.get(family, 0.0) + count
        if not math.isfinite(total) or count < 0:
            message = f"{path}:{number}: {family} value {value!r} is not a token count"
            raise MetricsError(message)
        totals[family] = total
    wanted = {*names, *(f"{name}_total" for name in names)}
    for number, raw in enumerate(text.splitlines(), 1):
        if number not in seen and re.split(r"[{\s]", raw.strip(), maxsplit=1)[0] in wanted:
            raise MetricsError(f"{path}:{number}: malformed sample line: {raw.strip()[:80]!r}")
    for current, legacy in LEGACY.items():
        if current not in totals and legacy in totals:
            totals[current] = totals[legacy]
    missing = [name for name in (QUERIES, HITS) if name not in totals]
    if missing:
        raise MetricsError(f"{path}: no {' or '.join(missing)} counter in the scrape")
    return totals[QUERIES], totals[HITS]


def engine_check(
    report: AuditReport, paths: Sequence[str], tolerance: float = DEFAULT_TOLERANCE
) -> EngineCheck:
    """The engine's counters over ``paths`` (one scrape, or before and after) against the
    report's ``vllm`` totals."""
    if "vllm" not in report.cache_models:
        raise MetricsError("--vllm-metrics compares with the vllm cache model: add --cache vllm")
    if not 1 <= len(paths) <= 2:
        count = len(paths)
        raise MetricsError(f"--vllm-metrics takes one scrape or two (before, after), not {count}")
    queries, hits = read_scrape(paths[-1])
    if len(paths) == 2:
        before_queries, before_hits = read_scrape(paths[0])
        queries, hits = queries - before_queries, hits - before_hits
        if queries < 0 or hits < 0:
            raise MetricsError(
                f"{paths[1]}: the counters went down since {paths[0]} (the engine restarted?)"
            )
    if hits > queries:
        raise MetricsError(f"{paths[-1]}: more prefix-cache hits than queries")
    totals = report.totals("vllm")
    return EngineCheck(
        files=tuple(paths),
        queried_tokens=queries,
        hit_tokens=hits,
        predicted_prompt_tokens=totals.prompt_tokens,
        predicted_cached_tokens=totals.cached_tokens,
        tolerance=tolerance,
    )


def warning(check: EngineCheck) -> str | None:
    """What to say when the engine and the model disagree (None when they agree)."""
    if check.agrees:
        return None
    return (
        f"the engine's hit rate {percent(check.observed_hit_rate)} differs from the vllm model's "
        f"{percent(check.predicted_hit_rate)} by {abs(check.difference) * 100:.1f} points "
        f"(tolerance {check.tolerance * 100:.1f}): check --block-size and --capacity-tokens "
        f"against the server, and that the log is the traffic the scrape counted "
        f"({check.queried_tokens:,.0f} tokens queried, {check.predicted_prompt_tokens:,} in the "
        "log)"
    )


def check_dict(check: EngineCheck | None) -> dict[str, Any] | None:
    """The check as JSON data (null when no scrape was given)."""
    if check is None:
        return None
    return {
        "files": list(check.files),
        "queried_tokens": _number(check.queried_tokens),
        "hit_tokens": _number(check.hit_tokens),
        "observed_hit_rate": round(check.observed_hit_rate, 6),
        "predicted_prompt_tokens": check.predicted_prompt_tokens,
        "predicted_cached_tokens": check.predicted_cached_tokens,
        "predicted_hit_rate": round(check.predicted_hit_rate, 6),
        "difference": round(check.difference, 6),
        "tolerance": check.tolerance,
        "agrees": check.agrees,
        "warning": warning(check),
    }


def _number(value: float) -> int | float | None:
    if not math.isfinite(value):
        return None
    return int(value) if value.is_integer() else value


def summary_line(check: EngineCheck) -> str:
    """One line: observed against predicted, and whether they agree."""
    verdict = "they agree" if check.agrees else "they DISAGREE"
    return (
        f"vLLM /metrics ({', '.join(check.files)}): observed hit rate "
        f"{percent(check.observed_hit_rate)} ({check.hit_tokens:,.0f} of "
        f"{check.queried_tokens:,.0f} queried tokens), vllm model "
        f"{percent(check.predicted_hit_rate)} ({check.predicted_cached_tokens:,} of "
        f"{check.predicted_prompt_tokens:,}): "
        f"{check.difference * 100:+.1f} points; {verdict} (tolerance "
        f"{check.tolerance * 100:.1f} points)"
    )


def print_check(check: EngineCheck | None, console: Console) -> None:
    if check is None:
        return
    console.print(Text(summary_line(check)), soft_wrap=True)
    message = warning(check)
    if message is not None:
        console.print(Text(f"warning: {message}", style="bold red"), soft_wrap=True)


def check_html(check: EngineCheck | None) -> str:
    if check is None:
        return ""
    message = warning(check)
    note = f"<p><b>Warning:</b> {escape(message)}</p>" if message else ""
    return f"<h2>Observed against predicted (vLLM)</h2><p>{escape(summary_line(check))}</p>{note}"
