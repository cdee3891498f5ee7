"""Read an engine's prefix-cache counters from its Prometheus ``/metrics`` text.

vLLM exports ``vllm:prefix_cache_queries`` (prompt tokens looked up) and
``vllm:prefix_cache_hits`` (tokens found), as counters, so the exposition names them with a
``_total`` suffix and one sample per label set (model, engine); see vLLM
``vllm/v1/metrics/loggers.py``. The difference of two scrapes is what a replay added.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

QUERIES = "vllm:prefix_cache_queries"
HITS = "vllm:prefix_cache_hits"


def _split_sample(line: str) -> tuple[str, str] | None:
    """``(metric name, value text)`` of one exposition line, labels dropped."""
    if "{" in line:
        name, _, rest = line.partition("{")
        in_quotes = escaped = False
        for index, char in enumerate(rest):
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_quotes = not in_quotes
            elif char == "}" and not in_quotes:
                fields = rest[index + 1 :].split()
                return (name.strip(), fields[0]) if fields else None
        return None
    fields = line.split()
    return (fields[0], fields[1]) if len(fields) >= 2 else None


def counter_samples(text: str, names: tuple[str, ...]) -> Iterator[tuple[int, str, str]]:
    """``(line number, counter name, value text)`` of each sample of a counter in ``names``
    (exposed as ``NAME`` or ``NAME_total``), one per label set, in the order of the text."""
    wanted = {name: name for name in names} | {f"{name}_total": name for name in names}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        sample = _split_sample(line)
        if sample is not None and sample[0] in wanted:
            yield number, wanted[sample[0]], sample[1]


def counter_totals(text: str, names: tuple[str, ...]) -> dict[str, float]:
    """The sum over label sets of each counter in ``names`` (``NAME`` or ``NAME_total``);
    samples whose value is not a number are left out."""
    totals: dict[str, float] = {}
    for _, family, text_value in counter_samples(text, names):
        try:
            value = float(text_value)
        except ValueError:
            continue
        totals[family] = totals.get(family, 0.0) + value
    return totals


@dataclass(frozen=True)
class PrefixCacheCounters:
    """vLLM's prefix-cache counters at one scrape, in tokens."""

    queries: float
    hits: float

    @classmethod
    def from_text(cls, text: str) -> PrefixCacheCounters | None:
        totals = counter_totals(text, (QUERIES, HITS))
        if QUERIES not in totals or HITS not in totals:
            return None
        return cls(queries=totals[QUERIES], hits=totals[HITS])

    def __sub__(self, earlier: PrefixCacheCounters) -> PrefixCacheCounters:
        return PrefixCacheCounters(self.queries - earlier.queries, self.hits - earlier.hits)
