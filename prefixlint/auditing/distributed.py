"""``audit --executor ray``: the audit's heavy stages on a Ray cluster, the same report.

1. **Trace** (Ray Data, one task per log file and shard): each task reads its file and
   renders, tokenizes and builds the cache query of the requests routed to its shard (by
   session, else by first message, as ``audit --jobs`` routes them, so the renderer's memos
   stay warm), into rows of the compact hash trace (:mod:`prefixlint.auditing.hash_trace`)
   beside each rendering. ``--trace-out DIR`` writes the trace as Parquet.
2. **Simulation**: the trace is split into ordered streams
   (:mod:`prefixlint.auditing.partition`), each replayed through fresh cache models: the
   partitioned models' streams grouped by a Ray Data shuffle on the partition, every other
   model one Ray task over all the trace's blocks, all at once.
3. **Attribution and reports**, in the driver, with :func:`run_audit`: the driver reads the
   logs again (skipped lines are counted and reported as a local run does), takes each
   request's rendering and cache outcome from the cluster in log order, and runs
   attribution, the breakpoint advice, the sweep and the what-if pass as a local run does;
   the routing what-if's replicas are replayed on the cluster, one task each. Attribution
   stays in one ordered stream because a request's predecessor may belong to any earlier
   request (a session's first request is compared with the longest shared prefix of the
   whole log).

Ray is imported here only, and this module only by ``audit --executor ray``.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import os
from collections.abc import Callable, Generator, Iterator, Sequence
from types import ModuleType
from typing import Any

from prefixlint.auditing.hash_trace import TRACE_COLUMNS, trace_query, trace_row, trace_schema
from prefixlint.auditing.options import AuditError, AuditOptions, new_cache_model
from prefixlint.auditing.partition import exclusions, split_models
from prefixlint.auditing.pipeline import (
    Outcome,
    Prepared,
    PrepareError,
    RequestPreparer,
    run_audit,
)
from prefixlint.auditing.rendering import Compact, expand, render_or_reason, route, session_of
from prefixlint.auditing.results import AuditReport, ReplicaLoad
from prefixlint.auditing.routing import replay
from prefixlint.auditing.source_link import SourceIndex
from prefixlint.auditing.sweep import DEFAULT_BLOCK_SIZE
from prefixlint.cache.base import CacheQuery, CacheResult, InvalidQuery
from prefixlint.request import ChatRequest, Rendered
from prefixlint.sources.logs import LogReadError, SkippedLine, read_log

MISSING_RAY = "--executor ray needs Ray: pip install 'prefixlint[ray]' (or make ray)"
# Trace rows per Arrow table a trace task yields.
BATCH_ROWS = 256
# The columns that carry a rendering from a trace task to the driver (never in the trace).
RENDERING_COLUMNS = (
    "shard",
    "kind",
    "reason",
    "text",
    "template",
    "component_names",
    "component_char_starts",
    "component_char_ends",
    "component_token_starts",
    "component_token_ends",
)
TEXT, HASHES = "text", "hashes"


def load_ray() -> ModuleType:
    """The ``ray`` module with Ray Data, or an :class:`AuditError` saying how to install it."""
    try:
        import ray
        import ray.data
    except ImportError:
        raise AuditError(MISSING_RAY) from None
    return ray


def run_distributed(
    files: Sequence[str],
    options: AuditOptions,
    *,
    address: str | None = None,
    trace_out: str | None = None,
    on_line: Callable[[], None] | None = None,
    on_prepared: Callable[[Prepared], None] | None = None,
    sources: SourceIndex | None = None,
    on_phase: Callable[[str], None] | None = None,
) -> AuditReport:
    """:func:`run_audit` with the trace and the simulation on Ray: at ``address``, or a
    local Ray started (or joined) as ``ray.init()`` does; one already initialised in this
    process is used as it is."""
    if "-" in files:
        raise AuditError("--executor ray reads log files, not standard input")
    for path in files:  # an unreadable log is a one-line error before any cluster work
        next(read_log(path, format=options.log_format), None)  # closed once dropped
    ray = load_ray()
    started = not ray.is_initialized()
    if started:
        ray.init(
            address=address,
            include_dashboard=False,
            log_to_driver=False,
            logging_level=logging.ERROR,
        )
    try:
        _quiet(ray)
        try:
            precomputed = RayPrecomputed(ray, files, options, trace_out)
        except (LogReadError, AuditError) as exc:
            # A task's error, raised here as Ray's wrapper of it: the error alone.
            raise type(exc)(str(getattr(exc, "cause", exc))) from None
        try:
            return run_audit(
                files,
                options,
                on_line=on_line,
                on_prepared=on_prepared,
                sources=sources,
                on_phase=on_phase,
                precomputed=precomputed,
            )
        finally:
            precomputed.close()
    finally:
        if started:
            ray.shutdown()


def _quiet(ray: ModuleType) -> None:
    """No Ray Data progress bars, execution plans or logged task errors on the audit's
    output (a task's error is raised to the driver, which reports it)."""
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = False
    context.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.CRITICAL)


def worker_path(path: str) -> str:
    """A log path as a task on any node opens it: URLs as they are, local paths absolute."""
    return path if "://" in path else os.path.abspath(path)


def shard_of(request: ChatRequest, session: str | None, shards: int) -> int:
    """The trace task of ``request``: a text request as ``audit --jobs`` routes it, a
    block-hash request without a session by its line (it has no text to route by)."""
    if request.hash_ids is not None and session is None:
        return request.line % shards
    return route(request, session, shards)


def trace_rows(
    options: AuditOptions, path: str, file_index: int, shard: int, shards: int
) -> Iterator[list[dict[str, Any]]]:
    """The trace rows, with renderings, of the requests of one log routed to ``shard``,
    in batches."""
    preparer = RequestPreparer(options)
    batch = []
    for item in read_log(path, format=options.log_format, limits=options.log_limits):
        if isinstance(item, SkippedLine):
            continue
        session = session_of(item, options.session_key)
        if shard_of(item, session, shards) != shard:
            continue
        batch.append(_row(preparer, file_index, shard, item, session))
        if len(batch) == BATCH_ROWS:
            yield batch
            batch = []
    yield batch


def _row(
    preparer: RequestPreparer,
    file_index: int,
    shard: int,
    request: ChatRequest,
    session: str | None,
) -> dict[str, Any]:
    """One request's trace row and rendering (or why it has none; a request whose query
    cannot be built has no trace columns, and the driver skips it as a local run does)."""
    row: dict[str, Any] = {"file_index": file_index, "line": request.line, "shard": shard}
    row["kind"] = HASHES if request.hash_ids is not None else TEXT
    rendered: Rendered | str | None = None
    if request.hash_ids is None:
        rendered = render_or_reason(preparer.render, request)
    if isinstance(rendered, str):
        row["reason"] = rendered
        return row
    try:
        prepared = preparer.prepare(request, rendered)
    except PrepareError:
        prepared = None
    if rendered is not None:
        components = rendered.components
        row.update(
            text=rendered.text,
            template=rendered.template,
            tokens=rendered.packed,
            media_offsets=[m.offset for m in rendered.media],
            media_lengths=[m.length for m in rendered.media],
            media_identities=[m.identity for m in rendered.media],
            component_names=[c.name for c in components],
            component_char_starts=[c.char_start for c in components],
            component_char_ends=[c.char_end for c in components],
            component_token_starts=[c.token_start for c in components],
            component_token_ends=[c.token_end for c in components],
        )
    if prepared is not None:
        row.update(trace_row(file_index, request.line, session, prepared.query))
    return row


def rendering_of(row: dict[str, Any]) -> Rendered | str:
    """The rendering a trace task sent, or why it could not render."""
    if row["reason"] is not None:
        return str(row["reason"])
    components = zip(
        row["component_names"],
        row["component_char_starts"],
        row["component_char_ends"],
        row["component_token_starts"],
        row["component_token_ends"],
        strict=True,
    )
    media = zip(row["media_offsets"], row["media_lengths"], row["media_identities"], strict=True)
    sent: Compact = (row["text"], row["tokens"], tuple(components), row["template"], tuple(media))
    return expand(sent)


def _rows_schema() -> Any:
    import pyarrow as pa

    schema = trace_schema()
    strings = pa.list_(pa.string())
    integers = pa.list_(pa.int64())
    for name, kind in (
        ("shard", pa.int64()),
        ("kind", pa.string()),
        ("reason", pa.string()),
        ("text", pa.string()),
        ("template", pa.string()),
        ("component_names", strings),
        ("component_char_starts", integers),
        ("component_char_ends", integers),
        ("component_token_starts", integers),
        ("component_token_ends", integers),
    ):
        schema = schema.append(pa.field(name, kind))
    return schema


class TraceTask:
    """Ray Data's batch function for the trace stage: one (log, shard) item per call."""

    def __init__(self, options: AuditOptions, paths: Sequence[str], shards: int) -> None:
        self.options, self.paths, self.shards = options, tuple(paths), shards

    def __call__(self, item: dict[str, Any]) -> Iterator[Any]:
        import pyarrow as pa

        schema = _rows_schema()
        for file_index, shard in zip(item["file_index"], item["shard"], strict=True):
            path = self.paths[int(file_index)]
            for batch in trace_rows(self.options, path, int(file_index), int(shard), self.shards):
                yield pa.Table.from_pylist(batch, schema=schema)


def simulate_stream(
    tables: Sequence[Any],
    models: Sequence[str],
    options: AuditOptions,
    excluded: dict[str, set[tuple[int, int]]],
) -> Any:
    """One ordered stream (Arrow tables of trace rows, in any order) through fresh
    ``models``, leaving out each model's ``excluded`` requests: a table of outcomes."""
    import pyarrow as pa

    schema = trace_schema()
    parts = [t.select(list(TRACE_COLUMNS)).cast(schema) for t in tables if t.num_rows]
    table = pa.concat_tables(parts) if parts else schema.empty_table()
    rows = table.sort_by([("file_index", "ascending"), ("line", "ascending")]).to_pylist()
    queries = [trace_query(row) for row in rows]
    out = []
    for name in models:
        out += _replay_model(name, options, rows, queries, excluded.get(name, set()))
    return pa.Table.from_pylist(out, schema=_outcome_schema())


def simulate_blocks(
    models: Sequence[str],
    options: AuditOptions,
    excluded: dict[str, set[tuple[int, int]]],
    *tables: Any,
) -> Any:
    """:func:`simulate_stream` of the trace blocks a task was given (Ray resolves each block
    passed as an argument of its own)."""
    return simulate_stream(tables, models, options, excluded)


def _replay_model(
    name: str,
    options: AuditOptions,
    rows: list[dict[str, Any]],
    queries: list[CacheQuery],
    excluded: set[tuple[int, int]],
) -> list[dict[str, Any]]:
    model = new_cache_model(name, options)
    prepare = getattr(model, "prepare", None)
    if prepare is not None:  # an offline model (belady) reads its whole stream first
        prepare(queries)
    out = []
    for row, query in zip(rows, queries, strict=True):
        key = (row["file_index"], row["line"])
        if key in excluded:
            continue
        result: dict[str, Any] = {"file_index": key[0], "line": key[1], "model": name}
        try:
            found = model.process(query)
        except InvalidQuery as exc:
            result["rejected"] = f"cache model {name} rejects the request: {exc}"
        else:
            result.update(
                prompt_tokens=found.prompt_tokens,
                cached_tokens=found.cached_tokens,
                cache_write_tokens=found.cache_write_tokens,
                miss_reason=found.miss_reason,
                longest_available=found.longest_available,
            )
        out.append(result)
    return out


def _outcome_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [
            ("file_index", pa.int64()),
            ("line", pa.int64()),
            ("model", pa.string()),
            ("prompt_tokens", pa.int64()),
            ("cached_tokens", pa.int64()),
            ("cache_write_tokens", pa.int64()),
            ("miss_reason", pa.string()),
            ("longest_available", pa.int64()),
            ("rejected", pa.string()),
        ]
    )


def _trace_only(table: Any) -> Any:
    """The trace columns of the rows that have a query."""
    import pyarrow.compute as pc

    return table.filter(pc.is_valid(table.column("prompt_tokens"))).select(list(TRACE_COLUMNS))


def _texts(table: Any) -> Any:
    """The rows that carry a rendering (or its failure), with what rebuilds it."""
    import pyarrow.compute as pc

    columns = ["file_index", "line", "tokens", "media_offsets", "media_lengths"]
    columns += ["media_identities", *RENDERING_COLUMNS]
    return table.filter(pc.equal(table.column("kind"), TEXT)).select(columns)


def _row_count(table: Any) -> int:
    """A block's rows (a Ray task: the block stays on the cluster)."""
    return int(table.num_rows)


def block_start(table: Any) -> tuple[int, int, int] | None:
    """Where a block of trace-task rows starts: its log, shard and first line (``None``: no
    rows). A block holds rows of one task, in log order."""
    if table.num_rows == 0:
        return None
    first = table.slice(0, 1).to_pylist()[0]
    return first["file_index"], first["shard"], first["line"]


def _found(
    found: dict[tuple[int, int], tuple[dict[str, CacheResult], dict[str, str]]],
    row: dict[str, Any],
) -> None:
    """Add one outcome row of a stream to ``found``."""
    results, reasons = found.setdefault((row["file_index"], row["line"]), ({}, {}))
    if row["rejected"] is not None:
        reasons[row["model"]] = row["rejected"]
        return
    results[row["model"]] = CacheResult(
        prompt_tokens=row["prompt_tokens"],
        cached_tokens=row["cached_tokens"],
        cache_write_tokens=row["cache_write_tokens"],
        miss_reason=row["miss_reason"],
        longest_available=row["longest_available"],
    )


class RayPrecomputed:
    """Builds the trace and runs the simulation on Ray, then hands the renderings and cache
    outcomes to :func:`run_audit` (:class:`prefixlint.auditing.pipeline.Precomputed`)."""

    def __init__(
        self, ray: ModuleType, files: Sequence[str], options: AuditOptions, trace_out: str | None
    ) -> None:
        self.ray, self.options = ray, options
        self.shards = shards = max(1, int(ray.cluster_resources().get("CPU", 1)))
        items = [{"file_index": i, "shard": s} for i in range(len(files)) for s in range(shards)]
        task = TraceTask(options, [worker_path(f) for f in files], shards)
        rows = (
            ray.data.from_items(items, override_num_blocks=len(items))
            .map_batches(task, batch_size=1, batch_format="numpy")
            .materialize()
        )
        trace = rows.map_batches(_trace_only, batch_format="pyarrow").materialize()
        if trace_out is not None:
            trace.sort(["file_index", "line"]).write_parquet(trace_out)
        self.outcomes = self._simulate(trace)
        self.renderings = self._in_log_order(rows.to_arrow_refs(), len(files))

    def _in_log_order(self, blocks: list[Any], files: int) -> Generator[dict[str, Any], None, None]:
        """The rows with renderings, in log order: each log's shards merged by line, a block
        fetched from the cluster only when its turn comes."""
        starts = self.ray.get([self.ray.remote(block_start).remote(block) for block in blocks])
        chains: dict[tuple[int, int], list[tuple[int, Any]]] = {}
        for block, start in zip(blocks, starts, strict=True):
            if start is not None:
                chains.setdefault(start[:2], []).append((start[2], block))
        for file_index in range(files):
            shards = [
                sorted(chains.get((file_index, s), []), key=lambda c: c[0])
                for s in range(self.shards)
            ]
            yield from heapq.merge(*map(self._chain_rows, shards), key=lambda row: row["line"])

    def _chain_rows(self, chain: list[tuple[int, Any]]) -> Iterator[dict[str, Any]]:
        """The rows with renderings of one shard's blocks, fetched one block at a time."""
        for _, block in chain:
            yield from _texts(self.ray.get(block)).to_pylist()

    def _simulate(self, trace: Any) -> dict[tuple[int, int], Outcome]:
        """Every request's outcome, leaving out of each model's streams the requests an
        earlier model rejects (a second round only when a model rejects some)."""
        caches = self.options.caches
        excluded: dict[str, set[tuple[int, int]]] = {name: set() for name in caches}
        while True:
            found = self._run_streams(trace, excluded)
            rejected = {key: set(reasons) for key, (_, reasons) in found.items() if reasons}
            needed = exclusions(caches, rejected)
            if all(needed[name] <= excluded[name] for name in caches):
                break
            excluded = needed
        outcomes: dict[tuple[int, int], Outcome] = {}
        for key, (results, reasons) in found.items():
            first = next((name for name in caches if name in reasons), None)
            if first is not None:
                outcomes[key] = reasons[first]
            else:
                outcomes[key] = {name: results[name] for name in caches}
        return outcomes

    def _run_streams(
        self, trace: Any, excluded: dict[str, set[tuple[int, int]]]
    ) -> dict[tuple[int, int], tuple[dict[str, CacheResult], dict[str, str]]]:
        """Each request's results and rejections, by model, over one simulation round: the
        partitioned models grouped by partition, each other model one task over the whole
        trace, all at once."""
        shared, alone = split_models(self.options)
        options, ray = self.options, self.ray
        refs = trace.to_arrow_refs()
        sizes = ray.get([ray.remote(_row_count).remote(ref) for ref in refs])
        blocks = [ref for ref, size in zip(refs, sizes, strict=True) if size]
        whole = ray.remote(simulate_blocks)
        pending = [whole.remote((name,), options, excluded, *blocks) for name in alone]
        tables: Iterator[Any] = iter(())
        if shared and blocks:
            # Empty blocks are left out: Ray Data may give them no columns, which its
            # shuffle cannot join with the others.
            trace = ray.data.from_arrow_refs(blocks)

            def run_partition(group: Any) -> Any:
                return simulate_stream([group], shared, options, excluded)

            grouped = trace.groupby("partition", num_partitions=self.shards)
            done = grouped.map_groups(run_partition, batch_format="pyarrow")
            tables = done.iter_batches(batch_format="pyarrow", batch_size=None)
        found: dict[tuple[int, int], tuple[dict[str, CacheResult], dict[str, str]]] = {}
        for table in itertools.chain(tables, ray.get(pending)):
            for row in table.to_pylist():
                _found(found, row)
        return found

    def close(self) -> None:
        """Stop reading renderings from the cluster (those the audit did not take)."""
        self.renderings.close()

    def take(self, request: ChatRequest) -> Rendered | str:
        row = next(self.renderings, None)
        if row is None or row["line"] != request.line:
            raise AuditError(f"line {request.line}: the cluster's renderings are out of step")
        return rendering_of(row)

    def outcome(self, file_index: int, line: int) -> Outcome:
        return self.outcomes.pop((file_index, line))

    def replay_replicas(self, streams: Sequence[Sequence[CacheQuery]]) -> list[ReplicaLoad]:
        block_size = self.options.block_size or DEFAULT_BLOCK_SIZE
        remote = self.ray.remote(replay)
        capacity = self.options.capacity_tokens
        loads: list[ReplicaLoad] = self.ray.get(
            [remote.remote(list(stream), capacity, block_size) for stream in streams]
        )
        return loads
