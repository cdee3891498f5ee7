"""When each what-if fix is simulated: alongside the audit's own pass over the logs.

The fixes worth simulating are those for the causes the audit finds, known only as it goes.
A fix starts at the request where one of its causes is first found: it is caught up on the
requests before (that prefix of the logs is read again and each request rewritten, rendered
and fed to the fix's models), then fed each later request right after the audit, while the
renderer still holds the request's messages, so only the components the fix changes are
encoded anew. ``all`` (every family found, applied together) starts again whenever another
family is found. Each fix's models see the same requests in the same order as in a
separate pass after the audit, so its figures are the same.

Catch-ups are bounded: one runs only while the requests already replayed by catch-ups are
no more than the ones it would replay, so they replay at most twice the log. Fixes found
after that are simulated in one more pass over the logs, after the audit (the ``what-if``
phase). Standard input cannot be read again: there, every fix is simulated from the start.
Nothing is kept per request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Protocol

from prefixlint.auditing.canonical import Canonicaliser, canonicalisers
from prefixlint.auditing.options import AuditOptions
from prefixlint.auditing.prices import GpuTimePrice, Price
from prefixlint.auditing.results import AuditReport, WhatIf
from prefixlint.auditing.whatif import Simulation, ranked
from prefixlint.request import ChatRequest, Rendered
from prefixlint.sources.logs import SkippedLine, read_log

Logged = Mapping[str, tuple[int, int, int]]
Prices = Mapping[str, Price | GpuTimePrice | None]


class AuditState(Protocol):
    """What the schedule reads of the audit (``prefixlint.auditing.pipeline.Auditor``)."""

    options: AuditOptions
    report: AuditReport
    conversations: list[int]

    def render(self, request: ChatRequest) -> Rendered: ...

    def prices_for(self, request: ChatRequest) -> dict[str, Price | GpuTimePrice | None]: ...


class WhatIfSchedule:
    """Starts, catches up and feeds the what-if simulations as the audit finds causes."""

    def __init__(self, audit: AuditState, files: Sequence[str]) -> None:
        self.audit = audit
        self.files = list(files)
        self.rereadable = "-" not in files
        self.found: set[str] = set()
        self.running: list[Simulation] = []
        self.deferred: list[Canonicaliser] = []
        self.replayed = 0
        if not self.rereadable:
            self.running = [self._simulation(fix) for fix in canonicalisers()]

    def _simulation(self, fix: Canonicaliser) -> Simulation:
        return Simulation(fix, self.audit.options, self.audit.render)

    def feed(
        self,
        request: ChatRequest,
        conversation: int,
        logged: Logged,
        prices: Prices,
        causes: set[str],
    ) -> None:
        """The request the audit just recorded (``causes``: its records' causes), after
        starting the fixes for causes found for the first time; a trace request (block
        hashes, no text) has nothing a fix could rewrite."""
        if self.rereadable and not causes <= self.found:
            self.found |= causes
            self._start(len(self.audit.conversations) - 1)
        if request.hash_ids is not None:
            return
        for simulation in self.running:
            simulation.feed(request, conversation, logged, prices)

    def _start(self, position: int) -> None:
        """Start the fixes the causes found so far call for and that are not running yet,
        caught up on the first ``position`` audited requests, or defer them."""
        wanted = canonicalisers(self.found)
        known = {(s.fix.family, s.fix.codes) for s in self.running}
        known |= {(fix.family, fix.codes) for fix in self.deferred}
        new = [fix for fix in wanted if (fix.family, fix.codes) not in known]
        if not new:
            return
        families = {fix.family for fix in new}
        self.running = [s for s in self.running if s.fix.family not in families]
        self.deferred = [fix for fix in self.deferred if fix.family not in families]
        if self.deferred or self.replayed > position:
            self.deferred += new
            return
        started = [self._simulation(fix) for fix in new]
        for fed in audited(self.audit, self.files, position):
            for simulation in started:
                simulation.feed(*fed)
        self.replayed += position
        self.running += started

    def results(
        self, on_phase: Callable[[], None], on_line: Callable[[], None] | None
    ) -> list[WhatIf]:
        """The fixes ranked (see :func:`ranked`), after simulating the deferred ones in one
        more pass over the logs (``on_phase`` announces it, ``on_line`` hears each line)."""
        if self.deferred:
            on_phase()
            started = [self._simulation(fix) for fix in self.deferred]
            for fed in audited(self.audit, self.files, None, on_line):
                for simulation in started:
                    simulation.feed(*fed)
            self.running += started
            self.deferred = []
        return ranked(self.running, self.audit.report)


def audited(
    audit: AuditState,
    files: Sequence[str],
    count: int | None,
    on_line: Callable[[], None] | None = None,
) -> Iterator[tuple[ChatRequest, int, Logged, Prices]]:
    """Read the logs again: the text requests among the first ``count`` the audit recorded
    (None: all), each with its conversation, its logged tokens per model and its prices."""
    report = audit.report
    models = len(report.cache_models)
    fed = 0
    if count == 0:
        return
    for file in files:
        for request in read_log(
            file, format=audit.options.log_format, limits=audit.options.log_limits
        ):
            if on_line is not None:
                on_line()
            if isinstance(request, SkippedLine):
                continue
            records = report.records[fed * models : (fed + 1) * models]
            if not records or (records[0].file, records[0].line) != (file, request.line):
                continue  # not rendered, or rejected by a cache model, in the audit
            if request.hash_ids is None:
                logged = {
                    r.model_cache: (r.prompt_tokens, r.cached_tokens, r.cache_write_tokens)
                    for r in records
                }
                yield request, audit.conversations[fed], logged, audit.prices_for(request)
            fed += 1
            if fed == count:
                return
