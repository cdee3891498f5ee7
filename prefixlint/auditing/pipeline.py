"""The streaming audit: read each logged request, render it, feed every selected cache model,
attribute the misses, and keep one small record per request and cache model.

Nothing but the records, a bounded attribution state and a few example windows outlives a
request, so memory grows with the number of requests only by one record each.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from prefixlint.auditing.advice import assumptions, fix_first
from prefixlint.auditing.attribution import (
    Attributor,
    Divergence,
    MissCause,
    cause_for,
    example_views,
)
from prefixlint.auditing.breakpoints import BreakpointAdvisor
from prefixlint.auditing.options import ENGINE_MODELS, AuditError, AuditOptions, new_cache_model
from prefixlint.auditing.planning import Planner
from prefixlint.auditing.prices import GpuTimePrice, Price, PriceTable
from prefixlint.auditing.rendering import (
    SHAPE_ERRORS,
    RenderPool,
    render_or_reason,
    renderer_for,
    session_of,
)
from prefixlint.auditing.results import (
    AuditReport,
    Example,
    ReplicaLoad,
    RequestRecord,
    Skipped,
)
from prefixlint.auditing.source_link import SourceIndex, refined_cause
from prefixlint.auditing.whatif_schedule import WhatIfSchedule
from prefixlint.cache import CacheModel, CacheQuery
from prefixlint.cache.base import CacheResult, InvalidQuery
from prefixlint.cache.query import build_query
from prefixlint.chat import DEFAULT_ENGINE, DEFAULT_TEMPLATE, Renderer
from prefixlint.collector import paced_collector
from prefixlint.request import ChatRequest, Rendered
from prefixlint.sources.logs import SkippedLine, read_log

# The passes over the logs, in order (``run_audit``'s ``on_phase``): reading for an offline
# cache model (belady), the audit itself (with the what-if re-simulation along), the what-if
# re-simulation of the fixes found too late to catch up (see whatif_schedule).
READING, AUDITING, WHAT_IF = "reading", "auditing", "what-if"
PHASES = (READING, AUDITING, WHAT_IF)
# Models that cache nothing unless the request marks breakpoints (Anthropic cache_control).
BREAKPOINT_ONLY_MODELS = frozenset({"anthropic"})


@dataclass(frozen=True)
class Prepared:
    """A request ready for the cache models: its query and, for text logs, its rendering."""

    request: ChatRequest
    query: CacheQuery
    rendered: Rendered | None
    units: Sequence[int]
    unit_tokens: int


class PrepareError(Exception):
    """A request that cannot be rendered or queried; the message is its skipped line's reason."""


class RequestPreparer:
    """Renders requests and builds their cache queries, as the audit's options ask."""

    def __init__(self, options: AuditOptions) -> None:
        self.options = options
        self.renderer: Renderer | None = None
        if options.template != DEFAULT_TEMPLATE or options.engine != DEFAULT_ENGINE:
            # A template or engine that cannot be used fails the audit, not every line.
            self._renderer()

    def _renderer(self) -> Renderer:
        if self.renderer is None:
            self.renderer = renderer_for(self.options)
        return self.renderer

    def render(self, request: ChatRequest) -> Rendered:
        return self._renderer().render(request)

    def prepare(self, request: ChatRequest, rendered: Rendered | str | None = None) -> Prepared:
        """Build ``request``'s cache query from its block hashes or from ``rendered`` (default:
        render it here); raises :class:`PrepareError` when it cannot be audited."""
        try:
            return self._prepare(request, rendered)
        except InvalidQuery as exc:
            raise PrepareError(str(exc)) from None
        except SHAPE_ERRORS as exc:
            raise PrepareError(f"cannot render: {type(exc).__name__}: {exc}") from None

    def _prepare(self, request: ChatRequest, rendered: Rendered | str | None) -> Prepared:
        if request.hash_ids is not None:
            query = CacheQuery(
                block_hashes=request.hash_ids,
                block_tokens=self.options.trace_block_tokens,
                input_length=request.input_length,
                timestamp=request.timestamp,
                output_tokens=request.output_length or 0,
                model=request.model,
            )
            return Prepared(request, query, None, request.hash_ids, self.options.trace_block_tokens)
        if rendered is None:
            rendered = render_or_reason(self.render, request)
        if isinstance(rendered, str):
            raise PrepareError(rendered)
        query = build_query(request, rendered, self.options.lora_modules)
        return Prepared(request, query, rendered, rendered.tokens, 1)


# What the cache models say about one request: each model's result, or why one rejects it.
Outcome = dict[str, CacheResult] | str


def simulate(models: Mapping[str, CacheModel], query: CacheQuery) -> Outcome:
    """Run ``query`` through ``models``, in order, until one rejects it."""
    results = {}
    for name, model in models.items():
        try:
            results[name] = model.process(query)
        except InvalidQuery as exc:
            return f"cache model {name} rejects the request: {exc}"
    return results


class Precomputed(Protocol):
    """Renderings and cache outcomes computed elsewhere (``audit --executor ray``), handed
    over as the audit reads the logs."""

    def take(self, request: ChatRequest) -> Rendered | str:
        """The rendering of ``request``, the next text request of the logs, or why it
        cannot be rendered."""

    def outcome(self, file_index: int, line: int) -> Outcome:
        """What the cache models say about the request on ``line`` of log ``file_index``."""

    def replay_replicas(self, streams: Sequence[Sequence[CacheQuery]]) -> list[ReplicaLoad]:
        """The routing what-if's replicas, each replayed over its stream of queries."""


class Auditor:
    """Feeds requests through rendering, the cache models, attribution and the what-if runs."""

    def __init__(
        self, options: AuditOptions, files: Sequence[str], sources: SourceIndex | None = None
    ) -> None:
        self.options = options
        self.models = {name: new_cache_model(name, options) for name in options.caches}
        self.preparer = RequestPreparer(options)
        self.attributor = Attributor(max_snapshots=options.max_snapshots)
        self.prices = options.prices or PriceTable.load()
        self.report = AuditReport(
            files=list(files), cache_models=list(options.caches), prices_version=self.prices.version
        )
        self.report.assumptions = assumptions(options, self.models, self.prices.version)
        self.report.group_by = options.group_by
        self.what_if: WhatIfSchedule | None = None
        if sources is None and options.source_paths:
            sources = SourceIndex.build(options.source_paths)
        self.sources = sources
        self.conversations: list[int] = []

    def render(self, request: ChatRequest) -> Rendered:
        return self.preparer.render(request)

    def prepare(self, request: ChatRequest, rendered: Rendered | str | None = None) -> Prepared:
        """:meth:`RequestPreparer.prepare`."""
        return self.preparer.prepare(request, rendered)

    def skip(self, file: str, line: int, reason: str) -> None:
        self.report.skipped.append(Skipped(file, line, reason))

    def feed_or_skip(self, file: str, prepared: Prepared, outcome: Outcome | None = None) -> None:
        """:meth:`feed`, or, when the request has a shape that attribution cannot read, skip
        it (with what it had recorded) so that the audit goes on."""
        records, conversations = len(self.report.records), len(self.conversations)
        try:
            self.feed(file, prepared, outcome)
        except SHAPE_ERRORS as exc:
            del self.report.records[records:]
            del self.conversations[conversations:]
            self.skip(file, prepared.request.line, f"cannot audit: {type(exc).__name__}: {exc}")

    def feed(self, file: str, prepared: Prepared, outcome: Outcome | None = None) -> None:
        """Run one prepared request through every cache model (or take their ``outcome``,
        computed elsewhere) and record it.

        A request that a cache model rejects (the provider would answer 400) is skipped.
        """
        request = prepared.request
        results = simulate(self.models, prepared.query) if outcome is None else outcome
        if isinstance(results, str):
            self.skip(file, request.line, results)
            return
        session = session_of(request, self.options.session_key)
        divergence, conversation = self.attributor.observe(
            request, prepared.rendered, prepared.units, prepared.unit_tokens, session
        )
        observed = request.usage.cached_tokens if request.usage else None
        prices = self.prices_for(request)
        group = self.group_of(request, session)
        unmarked = not prepared.query.breakpoints
        causes = set()
        for name, result in results.items():
            no_breakpoint = unmarked and name in BREAKPOINT_ONLY_MODELS
            cause = cause_for(
                divergence,
                result,
                no_breakpoint=no_breakpoint,
                namespace_params=self.models[name].namespace_params,
            )
            record = self._record(file, request, session, name, result, cause, divergence)
            record.observed_cached = observed
            record.group = group
            price = prices[name]
            if price is not None:
                record.cost_usd = price.cost(
                    result.prompt_tokens, result.cached_tokens, result.cache_write_tokens
                )
            self.report.records.append(record)
            if record.cause:
                causes.add(record.cause)
        self.conversations.append(conversation)
        if self.what_if is not None:
            logged = {
                name: (r.prompt_tokens, r.cached_tokens, r.cache_write_tokens)
                for name, r in results.items()
            }
            self.what_if.feed(request, conversation, logged, prices, causes)

    def group_of(self, request: ChatRequest, session: str | None) -> str | None:
        """The request's ``--group-by`` value (``session``: the session the audit used)."""
        key = self.options.group_by
        if key is None:
            return None
        return session if key == "session" else session_of(request, key)

    def prices_for(self, request: ChatRequest) -> dict[str, Price | GpuTimePrice | None]:
        """Each cache model's price for ``request``: the price table's for the logged model,
        or the GPU time of prefill for a self-hosted engine when the options give one."""
        listed = self.prices.lookup(request.model)
        gpu = self.options.gpu_price()
        return {
            name: gpu if gpu is not None and name in ENGINE_MODELS else listed
            for name in self.models
        }

    def _record(
        self,
        file: str,
        request: ChatRequest,
        session: str | None,
        name: str,
        result: CacheResult,
        cause: MissCause,
        divergence: Divergence,
    ) -> RequestRecord:
        located = cause.located
        code = cause.code
        source: tuple[tuple[str, int, str], ...] = ()
        if located and code is not None and self.sources is not None:
            code, source = self._linked(code, divergence)
        record = RequestRecord(
            file=file,
            line=request.line,
            session_id=session,
            model_cache=name,
            timestamp=request.timestamp,
            prompt_tokens=result.prompt_tokens,
            cached_tokens=result.cached_tokens,
            cache_write_tokens=result.cache_write_tokens,
            cause=code,
            component=cause.component,
            divergence_char=divergence.char if located else None,
            divergence_token=divergence.token if located else None,
            predecessor_line=divergence.predecessor_line if cause.code and cause.cost else None,
            cost_tokens=cause.cost,
            observed_cached=None,
            source=source,
        )
        if located:
            self._keep_example(file, record, divergence)
        return record

    def _linked(
        self, code: str, divergence: Divergence
    ) -> tuple[str, tuple[tuple[str, int, str], ...]]:
        """A located miss's cause, refined by the source lines whose static text precedes
        the change (``audit --source``), and those lines."""
        if divergence.char is None or not divergence.renderings or self.sources is None:
            return code, ()
        refs = self.sources.locate(divergence.renderings[1].text[: divergence.char], code)
        return refined_cause(code, refs), tuple((r.path, r.line, r.code) for r in refs)

    def _keep_example(self, file: str, record: RequestRecord, divergence: Divergence) -> None:
        examples = self.report.examples.setdefault((record.model_cache, record.cause), [])
        if len(examples) < self.options.examples_per_cause:
            before, after = example_views(divergence, self.options.full_text)
            examples.append(
                Example(
                    file=file,
                    line=record.line,
                    predecessor_line=divergence.predecessor_line,
                    component=record.component,
                    char=divergence.char,
                    token=divergence.token,
                    before=before,
                    after=after,
                )
            )


def run_audit(
    files: Sequence[str],
    options: AuditOptions,
    *,
    on_line: Callable[[], None] | None = None,
    on_prepared: Callable[[Prepared], None] | None = None,
    sources: SourceIndex | None = None,
    on_phase: Callable[[str], None] | None = None,
    precomputed: Precomputed | None = None,
) -> AuditReport:
    """Audit the logs in ``files`` (``-`` is stdin), in order, as one stream of requests.

    ``on_phase`` is called as each pass over the logs starts (:data:`PHASES`), ``on_line``
    once per log line of every pass (progress); ``on_prepared`` once per request that
    rendered (token dumps); ``sources`` links misses to source lines (default: those of
    ``options.source_paths``, if any). Raises ``LogReadError`` for an unreadable file and
    :class:`AuditError` for bad options.

    The what-if re-simulation runs along the audit, for the fixes whose causes the audit
    finds (:mod:`prefixlint.auditing.whatif_schedule`); standard input is read once, with
    every fix simulated along the way.
    With ``precomputed``, the renderings and cache outcomes come from there instead
    (:mod:`prefixlint.auditing.distributed`); everything else is done here, as without it.
    """
    with paced_collector():
        return _audit(
            files, options, on_line, on_prepared, sources, on_phase or _no_phase, precomputed
        )


def _no_phase(name: str) -> None:
    """No progress display."""


def _audit(
    files: Sequence[str],
    options: AuditOptions,
    on_line: Callable[[], None] | None,
    on_prepared: Callable[[Prepared], None] | None,
    sources: SourceIndex | None,
    on_phase: Callable[[str], None],
    precomputed: Precomputed | None,
) -> AuditReport:
    auditor = Auditor(options, files, sources)
    rereadable = "-" not in files
    offline = [m for m in auditor.models.values() if hasattr(m, "prepare")]
    if offline and precomputed is None:
        if not rereadable:
            raise AuditError("offline cache models (belady) read the log twice: give a file, not -")
        on_phase(READING)
        queries = [prepared.query for _, _, prepared in _prepared(auditor, files, on_line)]
        for model in offline:
            model.prepare(queries)
    if options.what_if:
        auditor.what_if = WhatIfSchedule(auditor, files)

    def count_line() -> None:
        auditor.report.lines_read += 1
        if on_line is not None:
            on_line()

    advisor = BreakpointAdvisor(always="anthropic" in options.caches)
    planner = Planner(options) if Planner.wanted(options) else None
    on_phase(AUDITING)
    taken = _prepared(auditor, files, count_line, auditor.skip, precomputed)
    for index, file, prepared in taken:
        if on_prepared is not None:
            on_prepared(prepared)
        records = len(auditor.report.records)
        outcome = None if precomputed is None else precomputed.outcome(index, prepared.request.line)
        auditor.feed_or_skip(file, prepared, outcome)
        if len(auditor.report.records) > records:
            advisor.feed(prepared.request, prepared.rendered, prepared.query)
            if planner is not None:
                session = session_of(prepared.request, options.session_key)
                planner.add(prepared.request, prepared.rendered, prepared.query, session)
    report = auditor.report
    if planner is not None:
        planner.finish(report, None if precomputed is None else precomputed.replay_replicas)
    report.cache_control = advisor.advice()
    if auditor.what_if is not None:
        report.what_if = auditor.what_if.results(lambda: on_phase(WHAT_IF), on_line)
    report.fix_first = fix_first(report, options)
    return report


def _prepared(
    auditor: Auditor,
    files: Sequence[str],
    on_line: Callable[[], None] | None = None,
    on_skip: Callable[[str, int, str], None] | None = None,
    precomputed: Precomputed | None = None,
) -> Iterator[tuple[int, str, Prepared]]:
    """Every request of ``files`` that renders, in order, with its file's index and name;
    ``on_skip`` hears of the others.

    The renderings come from ``precomputed`` when given; else, with ``options.jobs`` above 1
    (and files, not standard input), worker processes render and tokenize
    (:class:`RenderPool`). This process reads the logs and builds the queries.
    """
    options = auditor.options
    with contextlib.ExitStack() as stack:
        pool: RenderPool | Precomputed | None = precomputed
        if pool is None and options.jobs > 1 and "-" not in files:
            pool = stack.enter_context(RenderPool(options, files, options.jobs))
        for index, file in enumerate(files):
            for item in read_log(file, format=options.log_format, limits=options.log_limits):
                if on_line is not None:
                    on_line()
                if isinstance(item, SkippedLine):
                    if on_skip is not None:
                        on_skip(file, item.line, item.reason)
                    continue
                rendered = None if pool is None or item.hash_ids is not None else pool.take(item)
                try:
                    prepared = auditor.prepare(item, rendered)
                except PrepareError as exc:
                    if on_skip is not None:
                        on_skip(file, item.line, str(exc))
                    continue
                yield index, file, prepared
