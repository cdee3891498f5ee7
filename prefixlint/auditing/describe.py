"""Words for causes and numbers, shared by the terminal and HTML reports."""

from __future__ import annotations

from collections.abc import Iterable

from prefixlint import registry
from prefixlint.auditing.results import WhatIf

CAUSE_TEXT = {
    "first-seen": "new content, never cached before",
    "evicted": "was cached, evicted for capacity",
    "ttl-expired": "was cached, expired",
    "below-minimum": "shorter than the smallest cacheable prefix (PFX302)",
    "content-changed": "earlier content changed (no specific pattern proven)",
    "tool-arguments-reserialised": "an earlier tool call's arguments serialised another way",
}


def cause_label(cause: str) -> str:
    """``PFX101 volatile-timestamp-in-prefix`` for a rule code, a phrase for other causes."""
    if cause.startswith("PFX"):
        try:
            return f"{cause} {registry.doc(cause).name}"
        except KeyError:
            return cause
    return f"{cause}: {CAUSE_TEXT[cause]}" if cause in CAUSE_TEXT else cause


def percent(rate: float) -> str:
    return f"{rate * 100:.1f}%"


def dollars(value: float | None) -> str:
    """``$0.0381``, ``-$0.0026`` (a fix that costs money), or ``-`` when unknown."""
    if value is None:
        return "-"
    return f"{'-' if value < 0 else ''}${abs(value):,.4f}"


def tokens_count(value: float | None) -> str:
    """``5.6 M``, ``884 k``, ``312``, or ``-`` when unknown."""
    if value is None:
        return "-"
    for size, unit in ((1e9, " G"), (1e6, " M"), (1e3, " k")):
        if abs(value) >= size:
            return f"{value / size:.1f}{unit}"
    return f"{value:.0f}"


def duration(seconds: float) -> str:
    """``6 min 21 s``, ``3 h 5 min``, ``2 d 4 h``."""
    whole = round(seconds)
    days, rest = divmod(whole, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, secs = divmod(rest, 60)
    parts = [(days, "d"), (hours, "h"), (minutes, "min"), (secs, "s")]
    shown = [f"{n} {unit}" for n, unit in parts if n][:2]
    return " ".join(shown) or "0 s"


def headline(entry: WhatIf, seen: Iterable[str] = ()) -> str:
    """``fixing PFX101 raises the hit rate from 12.0% to 81.0% (vllm)``.

    Names the fix's codes that were ``seen`` among the causes, else all of its codes.
    """
    codes = [c for c in entry.codes if c in set(seen)] or list(entry.codes)
    what = "fixing everything" if entry.fix == "all" else "fixing " + ", ".join(codes)
    return (
        f"{what} raises the hit rate from {percent(entry.base.hit_rate)} to "
        f"{percent(entry.fixed.hit_rate)} ({entry.model_cache})"
    )
