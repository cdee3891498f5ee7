"""What an audit produces: one record per request and cache model, and summaries of them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

SKIPPED_SAMPLE = 1000
"""Skipped lines kept with their reasons; past them only the counts grow."""
REASON_KINDS = 100
"""Kinds of skip reason counted apart; rarer ones are counted together."""
OTHER_REASONS = "other reasons"
_DIGITS = re.compile(r"\d+")


@dataclass(slots=True)
class RequestRecord:
    """One request as one cache model saw it, and why its uncached tokens were not cached.

    ``cost_tokens`` are the tokens the cause cost: what the predecessor would have supplied
    minus what was cached. ``observed_cached`` is the provider's reported count, ``None``
    when the log does not report it.
    """

    file: str
    line: int
    session_id: str | None
    model_cache: str
    timestamp: float | None
    prompt_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    cause: str | None
    component: str | None
    divergence_char: int | None
    divergence_token: int | None
    predecessor_line: int | None
    cost_tokens: int
    observed_cached: int | None
    cost_usd: float | None = None
    # The source lines the miss is linked to (audit --source): (path, line, code).
    source: tuple[tuple[str, int, str], ...] = ()
    group: str | None = None  # the value of --group-by's field


@dataclass(frozen=True)
class Example:
    """Where one miss happened: a short escaped window of both requests at the divergence."""

    file: str
    line: int
    predecessor_line: int | None
    component: str | None
    char: int | None
    token: int | None
    before: str
    after: str


@dataclass(frozen=True)
class Skipped:
    file: str
    line: int
    reason: str


def reason_kind(reason: str) -> str:
    """A skip reason with its numbers as ``N`` (``at column N``), to count alike reasons."""
    return _DIGITS.sub("N", reason[:120])


class SkippedLines:
    """The lines an audit skipped: how many, how many per kind of reason, and the first
    :data:`SKIPPED_SAMPLE` of them, so that a log of millions of bad lines keeps memory
    bounded. ``len()`` is the count; iterating gives the sample."""

    def __init__(self, sample: int = SKIPPED_SAMPLE, kinds: int = REASON_KINDS) -> None:
        self.count = 0
        self.sample: list[Skipped] = []
        self.by_reason: dict[str, int] = {}
        self._sample_size = sample
        self._kinds = kinds
        self._last: tuple[str, str] = ("", "")  # a run of equal reasons costs no regex

    def append(self, entry: Skipped) -> None:
        self.count += 1
        if len(self.sample) < self._sample_size:
            self.sample.append(entry)
        reason, kind = self._last
        if entry.reason != reason:
            kind = reason_kind(entry.reason)
            if kind not in self.by_reason and len(self.by_reason) >= self._kinds:
                kind = OTHER_REASONS
            self._last = (entry.reason, kind)
        self.by_reason[kind] = self.by_reason.get(kind, 0) + 1

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Skipped]:
        return iter(self.sample)

    @property
    def truncated(self) -> bool:
        """Whether some skipped lines are counted but not kept."""
        return self.count > len(self.sample)


@dataclass
class Totals:
    """Sums over a set of records."""

    requests: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None

    @property
    def hit_rate(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def add(self, prompt: int, cached: int, written: int, cost: float | None) -> None:
        self.requests += 1
        self.prompt_tokens += prompt
        self.cached_tokens += cached
        self.cache_write_tokens += written
        if cost is not None:
            self.cost_usd = (self.cost_usd or 0.0) + cost

    def merge(self, other: Totals) -> None:
        """Add ``other``'s sums to these."""
        self.requests += other.requests
        self.prompt_tokens += other.prompt_tokens
        self.cached_tokens += other.cached_tokens
        self.cache_write_tokens += other.cache_write_tokens
        if other.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + other.cost_usd


@dataclass
class CauseTotals:
    requests: int = 0
    uncached_tokens: int = 0
    cost_tokens: int = 0


@dataclass
class UsageComparison:
    """Provider-reported cached tokens against the prediction, on requests that report them."""

    requests: int = 0
    observed_cached: int = 0
    predicted_cached: int = 0
    prompt_tokens: int = 0


@dataclass(frozen=True)
class WhatIf:
    """The log re-simulated as if the application fixed one family of causes (or all)."""

    fix: str
    codes: tuple[str, ...]
    model_cache: str
    base: Totals
    fixed: Totals

    @property
    def gain(self) -> float:
        return self.fixed.hit_rate - self.base.hit_rate

    @property
    def prefill_saved(self) -> int:
        base_uncached = self.base.prompt_tokens - self.base.cached_tokens
        return base_uncached - (self.fixed.prompt_tokens - self.fixed.cached_tokens)

    @property
    def cost_saved(self) -> float | None:
        if self.base.cost_usd is None or self.fixed.cost_usd is None:
            return None
        return self.base.cost_usd - self.fixed.cost_usd


@dataclass(frozen=True)
class FixFirst:
    """One fix, with what it saves over the log and per day at the log's rate."""

    fix: str
    codes: tuple[str, ...]
    model_cache: str
    hit_rate_before: float
    hit_rate_after: float
    prefill_tokens_saved: int
    prefill_tokens_per_day: float | None
    ttft_saved_ms: float | None  # mean per request
    usd_saved: float | None
    usd_per_day: float | None
    basis: str


@dataclass(frozen=True)
class BreakpointValue:
    """One ``cache_control`` breakpoint (a candidate, or one the log places) replayed alone
    through the anthropic cache model over the log: what it writes and reads, and the input
    tokens it saves net of the write premium (reads save 0.9x, writes cost 0.25x or 1x extra).
    """

    component: str
    token_position: int  # the most common position over the requests
    ttl: str  # "5m" or "1h"
    requests: int
    writes: int
    reads: int
    write_tokens: int
    read_tokens: int
    below_minimum: int  # requests whose prefix there is shorter than the model's minimum
    minimum_tokens: int
    net_tokens_saved: float
    recommended: bool = False
    problem: str | None = None  # a logged breakpoint's: why it does not pay
    volatile_component: str | None = None  # where the prefix before it changes

    @property
    def pays(self) -> bool:
        return self.net_tokens_saved > 0


@dataclass
class CacheControlAdvice:
    """Where ``cache_control`` breakpoints pay on this log, and how the logged ones fare."""

    requests: int
    candidates: list[BreakpointValue] = field(default_factory=list)
    logged: list[BreakpointValue] = field(default_factory=list)


@dataclass(frozen=True)
class EngineCheck:
    """vLLM's own prefix-cache counters (a ``/metrics`` scrape, or the difference of two)
    against the audit's ``vllm`` prediction for the same log, in tokens."""

    files: tuple[str, ...]
    queried_tokens: float
    hit_tokens: float
    predicted_prompt_tokens: int
    predicted_cached_tokens: int
    tolerance: float  # largest hit-rate difference still called agreement

    @property
    def observed_hit_rate(self) -> float:
        return self.hit_tokens / self.queried_tokens if self.queried_tokens else 0.0

    @property
    def predicted_hit_rate(self) -> float:
        prompt = self.predicted_prompt_tokens
        return self.predicted_cached_tokens / prompt if prompt else 0.0

    @property
    def difference(self) -> float:
        """Observed minus predicted hit rate."""
        return self.observed_hit_rate - self.predicted_hit_rate

    @property
    def agrees(self) -> bool:
        return abs(self.difference) <= self.tolerance


GROUP_LIMIT = 20


@dataclass
class GroupTotals:
    """One ``--group-by`` value's requests: totals, tokens lost, and tokens lost per cause."""

    name: str
    totals: Totals = field(default_factory=Totals)
    cost_tokens: int = 0
    causes: dict[str, int] = field(default_factory=dict)

    @property
    def uncached_tokens(self) -> int:
        return self.totals.prompt_tokens - self.totals.cached_tokens

    @property
    def top_cause(self) -> str | None:
        costly = {cause: cost for cause, cost in self.causes.items() if cost}
        return max(costly, key=lambda c: (costly[c], c)) if costly else None

    def merge(self, other: GroupTotals) -> None:
        self.totals.merge(other.totals)
        self.cost_tokens += other.cost_tokens
        for cause, cost in other.causes.items():
            self.causes[cause] = self.causes.get(cause, 0) + cost


@dataclass(frozen=True)
class SweepPoint:
    """One eviction policy at one KV capacity (``audit --sweep``)."""

    policy: str
    capacity_tokens: int
    capacity_bytes: int | None
    hit_rate: float
    prefill_tokens: int


@dataclass(frozen=True)
class CapacitySweep:
    """The hit-rate curves of ``audit --sweep``; ``knees`` maps each policy to its knee
    capacity in tokens (see :mod:`prefixlint.auditing.sweep`)."""

    block_size: int
    working_set_tokens: int
    ceiling_hit_rate: float
    bytes_per_token: int | None
    geometry: str | None
    points: list[SweepPoint]
    knees: dict[str, int]


@dataclass(frozen=True)
class ReplicaLoad:
    """What one replica was sent and hit (``audit --replicas``)."""

    requests: int
    prompt_tokens: int
    cached_tokens: int

    @property
    def hit_rate(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


@dataclass(frozen=True)
class Routing:
    """A routing what-if: requests spread over replicas, each with its own cache."""

    router: str
    epsilon: float
    capacity_tokens: int | None
    replicas: list[ReplicaLoad]

    @property
    def hit_rate(self) -> float:
        prompt = sum(r.prompt_tokens for r in self.replicas)
        return sum(r.cached_tokens for r in self.replicas) / prompt if prompt else 0.0

    @property
    def imbalance(self) -> float:
        """The busiest replica's prompt tokens over the mean (1.0: perfectly even)."""
        loads = [r.prompt_tokens for r in self.replicas]
        mean = sum(loads) / len(loads)
        return max(loads) / mean if mean else 1.0


@dataclass
class AuditReport:
    """Everything one audit found, in log order."""

    files: list[str]
    cache_models: list[str]
    records: list[RequestRecord] = field(default_factory=list)
    skipped: SkippedLines = field(default_factory=SkippedLines)
    lines_read: int = 0
    examples: dict[tuple[str, str | None], list[Example]] = field(default_factory=dict)
    what_if: list[WhatIf] = field(default_factory=list)
    prices_version: str | None = None
    # Per cache model, what its figures assume (capacity, granularity, rendering, prices).
    assumptions: dict[str, dict[str, str]] = field(default_factory=dict)
    fix_first: list[FixFirst] = field(default_factory=list)
    group_by: str | None = None
    # Anthropic cache_control placement (logs in that format, or the anthropic model).
    cache_control: CacheControlAdvice | None = None
    # The engine's observed hit rate against the vllm model's (audit --vllm-metrics).
    engine_check: EngineCheck | None = None
    # Hit rate against KV capacity per eviction policy (audit --sweep).
    sweep: CapacitySweep | None = None
    # Requests spread over replicas by a router (audit --replicas).
    routing: Routing | None = None

    def records_for(self, model_cache: str) -> Iterable[RequestRecord]:
        return (r for r in self.records if r.model_cache == model_cache)

    def totals(self, model_cache: str | None = None) -> Totals:
        totals = Totals()
        for record in self.records:
            if model_cache is None or record.model_cache == model_cache:
                totals.add(
                    record.prompt_tokens,
                    record.cached_tokens,
                    record.cache_write_tokens,
                    record.cost_usd,
                )
        return totals

    def by_cause(self, model_cache: str | None = None) -> dict[str, CauseTotals]:
        """Uncached tokens grouped by cause (hits without a cause are left out), largest first."""
        causes: dict[str, CauseTotals] = {}
        for record in self.records:
            if record.cause is None or (model_cache and record.model_cache != model_cache):
                continue
            entry = causes.setdefault(record.cause, CauseTotals())
            entry.requests += 1
            entry.uncached_tokens += record.prompt_tokens - record.cached_tokens
            entry.cost_tokens += record.cost_tokens
        return dict(sorted(causes.items(), key=lambda kv: (-kv[1].uncached_tokens, kv[0])))

    def by_source(self, model_cache: str) -> dict[tuple[str, int, str], CauseTotals]:
        """Misses grouped by the source line they are linked to (``audit --source``), costliest
        first; a miss linked to several lines counts on each."""
        lines: dict[tuple[str, int, str], CauseTotals] = {}
        for record in self.records_for(model_cache):
            for source in record.source:
                entry = lines.setdefault(source, CauseTotals())
                entry.requests += 1
                entry.uncached_tokens += record.prompt_tokens - record.cached_tokens
                entry.cost_tokens += record.cost_tokens
        return dict(sorted(lines.items(), key=lambda kv: (-kv[1].cost_tokens, kv[0])))

    def by_group(self, model_cache: str, limit: int = GROUP_LIMIT) -> list[GroupTotals]:
        """Totals per ``--group-by`` value, the most uncached tokens first; past ``limit``
        groups the rest are summed into one row named ``(N other groups)``."""
        groups: dict[str | None, GroupTotals] = {}
        for record in self.records_for(model_cache):
            entry = groups.setdefault(record.group, GroupTotals(record.group or "(none)"))
            entry.totals.add(
                record.prompt_tokens,
                record.cached_tokens,
                record.cache_write_tokens,
                record.cost_usd,
            )
            entry.cost_tokens += record.cost_tokens
            if record.cause:
                entry.causes[record.cause] = entry.causes.get(record.cause, 0) + record.cost_tokens
        ranked = sorted(groups.values(), key=lambda g: (-g.uncached_tokens, g.name))
        if len(ranked) <= limit:
            return ranked
        rest = GroupTotals(f"({len(ranked) - limit + 1} other groups)")
        for group in ranked[limit - 1 :]:
            rest.merge(group)
        return [*ranked[: limit - 1], rest]

    def usage(self, model_cache: str) -> UsageComparison:
        comparison = UsageComparison()
        for record in self.records_for(model_cache):
            if record.observed_cached is not None:
                comparison.requests += 1
                comparison.observed_cached += record.observed_cached
                comparison.predicted_cached += record.cached_tokens
                comparison.prompt_tokens += record.prompt_tokens
        return comparison
