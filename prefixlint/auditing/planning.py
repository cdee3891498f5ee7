"""The audit's capacity-planning hook: keep each audited request's cache query (compact: its
block hashes), then run the capacity sweep (``--sweep``) and the routing what-if
(``--replicas``) over them."""

from __future__ import annotations

from prefixlint.auditing.options import AuditError, AuditOptions
from prefixlint.auditing.results import AuditReport
from prefixlint.auditing.routing import ReplayStreams, route
from prefixlint.auditing.sweep import (
    DEFAULT_BLOCK_SIZE,
    TraceEntry,
    compact_query,
    leading_tokens,
    run_sweep,
)
from prefixlint.cache.base import CacheQuery, InvalidQuery
from prefixlint.cache.chain_memo import ChainHashMemo
from prefixlint.request import ChatRequest, Rendered


class Planner:
    """Collects the audited requests when the options ask for a sweep or a routing what-if."""

    def __init__(self, options: AuditOptions) -> None:
        self.options = options
        self.trace: list[TraceEntry] = []
        self._memo = ChainHashMemo(options.block_size or DEFAULT_BLOCK_SIZE)

    @staticmethod
    def wanted(options: AuditOptions) -> bool:
        return options.sweep or options.replicas is not None

    def add(
        self,
        request: ChatRequest,
        rendered: Rendered | None,
        query: CacheQuery,
        session: str | None,
    ) -> None:
        compact = compact_query(query, self._memo)
        self.trace.append(TraceEntry(compact, leading_tokens(request, rendered), session))

    def finish(self, report: AuditReport, replay_streams: ReplayStreams | None = None) -> None:
        """Run what the options ask for and put the results on ``report``;
        ``replay_streams`` replays the routing what-if's replicas (default: here)."""
        options = self.options
        block_size = options.block_size or DEFAULT_BLOCK_SIZE
        try:
            if options.sweep:
                report.sweep = run_sweep(
                    self.trace,
                    options.sweep_capacities or None,
                    block_size=block_size,
                    bytes_per_token=options.kv_bytes_per_token,
                    geometry=options.geometry_name,
                )
            if options.replicas is not None:
                report.routing = route(
                    self.trace,
                    options.replicas,
                    options.router,
                    epsilon=options.router_epsilon,
                    capacity_tokens=options.capacity_tokens,
                    block_size=block_size,
                    replay_streams=replay_streams,
                )
        except (ValueError, InvalidQuery) as exc:
            raise AuditError(str(exc)) from None
