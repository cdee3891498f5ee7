"""Rendering logged requests for the audit, in this process or in worker processes.

With ``audit --jobs N`` each worker reads the logs itself and renders and tokenizes the
requests routed to it: every request of one session (or, without one, of one first message)
goes to the same worker, so the renderer's memos of earlier turns stay warm. A worker sends
back compact renderings (text, token ids as packed bytes, component and media boundaries as
tuples) in batches, through a bounded queue; the main process reads the logs too, takes each
request's rendering from its worker's queue in log order and runs the cache models and
attribution as ``-j 1`` does, so the report is the same. Workers start as ``check -j``'s do
(:func:`prefixlint.linting.workers.isolated_start`): nothing from the current folder is
imported.
"""

from __future__ import annotations

import json
import os
import queue
import traceback
import zlib
from array import array
from collections import deque
from collections.abc import Callable, Sequence
from multiprocessing import get_context
from multiprocessing.process import BaseProcess
from multiprocessing.queues import Queue
from typing import Any

from prefixlint.auditing.options import AuditError, AuditOptions
from prefixlint.chat import Renderer, TemplateError, get_renderer
from prefixlint.linting.workers import isolated_start
from prefixlint.request import ChatRequest, Component, MediaItem, Rendered
from prefixlint.sources.logs import SkippedLine, read_log

# What code reading a request of an unexpected shape raises (None where a dict should be).
SHAPE_ERRORS = (TypeError, ValueError, AttributeError, KeyError, IndexError, RecursionError)
# Renderings per message from a worker, and messages a worker may queue ahead of the audit:
# a worker holds at most BATCH * (QUEUED + 1) renderings the main process has not taken.
BATCH = 16
QUEUED = 4
# Seconds between checks that a worker the audit waits for is still alive.
POLL_SECONDS = 1.0

# A rendering as sent by a worker: text, token ids (array("q") bytes), components as
# (name, char_start, char_end, token_start, token_end), template, media as (offset, length,
# identity); or the reason the request cannot be rendered.
Compact = tuple[str, bytes, tuple[tuple[str, int, int, int, int], ...], str, tuple[Any, ...]]


def renderer_for(options: AuditOptions) -> Renderer:
    """The renderer the audit's options ask for."""
    return get_renderer(
        options.template,
        options.tokenizer,
        engine=options.engine,
        image_tokens=options.image_tokens,
        vision_processor=options.vision_processor,
    )


def render_or_reason(
    render: Callable[[ChatRequest], Rendered], request: ChatRequest
) -> Rendered | str:
    """``render(request)``, or why it fails (the reason its skipped line gives)."""
    try:
        return render(request)
    except TemplateError as exc:
        return str(exc)
    except SHAPE_ERRORS as exc:
        # A shape the log readers let through: the line is skipped, the audit goes on.
        return f"cannot render: {type(exc).__name__}: {exc}"


def route(request: ChatRequest, session: str | None, workers: int) -> int:
    """The worker that renders ``request``: by its session, else by its first message (or
    system prompt), with a hash that is the same in every process."""
    if session is not None:
        key = "s" + session
    elif request.messages:
        key = "m" + json.dumps(request.messages[0], sort_keys=True, default=repr)
    else:
        key = "p" + (request.system or "")
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % workers


def compact(rendered: Rendered) -> Compact:
    """``rendered`` in the form a worker sends: tuples, strings and bytes only."""
    components = tuple(
        (c.name, c.char_start, c.char_end, c.token_start, c.token_end) for c in rendered.components
    )
    media = tuple((m.offset, m.length, m.identity) for m in rendered.media)
    return rendered.text, rendered.packed, components, rendered.template, media


def expand(sent: Compact) -> Rendered:
    """The rendering :func:`compact` sent."""
    text, packed, components, template, media = sent
    return Rendered(
        text=text,
        tokens=tuple(array("q", packed)),
        components=tuple(Component(*c) for c in components),
        template=template,
        known_packed=packed,
        media=tuple(MediaItem(*m) for m in media),
    )


def session_of(request: ChatRequest, key: str | None) -> str | None:
    """The request's session: the logged ``session_id``, or the field ``key`` names.

    ``key`` is a request field (``route``, ``model``), a dotted path into the logged
    ``metadata`` (``metadata.user_id``) or into the other request parameters (``user``,
    ``prompt_cache_key``, ``conversation.id``).
    """
    if key is None:
        return request.session_id
    if key in ("session_id", "route", "model"):
        attribute = getattr(request, key)
        return None if attribute is None else str(attribute)
    value: Any = request.params
    path = key.split(".")
    if path[0] == "metadata":
        value, path = request.metadata, path[1:]
    for part in path:
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return None if value is None else str(value)


def _work(
    options: AuditOptions,
    files: Sequence[str],
    folder: str,
    index: int,
    workers: int,
    out: Queue[Any],
) -> None:
    """A worker: render the requests of ``files`` routed to worker ``index`` into ``out``."""
    os.chdir(folder)
    out.put("ready")
    try:
        renderer = renderer_for(options)
        batch: list[Compact | str] = []
        for file in files:
            for item in read_log(file, format=options.log_format, limits=options.log_limits):
                if isinstance(item, SkippedLine) or item.hash_ids is not None:
                    continue
                if route(item, session_of(item, options.session_key), workers) != index:
                    continue
                rendered = render_or_reason(renderer.render, item)
                batch.append(rendered if isinstance(rendered, str) else compact(rendered))
                if len(batch) == BATCH:
                    out.put(batch)
                    batch = []
        out.put(batch)
    except BaseException:
        out.put(("failed", traceback.format_exc()))
        raise


class RenderPool:
    """Worker processes that render the requests of ``files``; :meth:`take` hands each
    request's rendering over in log order. Use as a context manager."""

    def __init__(self, options: AuditOptions, files: Sequence[str], workers: int) -> None:
        context = get_context("spawn")
        self.options = options
        self.workers = workers
        self.waiting: list[deque[Compact | str]] = [deque() for _ in range(workers)]
        self.processes: list[BaseProcess] = []
        with isolated_start(()) as folder:
            # Queues start multiprocessing's resource tracker: safely too.
            self.queues: list[Queue[Any]] = [context.Queue(QUEUED) for _ in range(workers)]
            for index, out in enumerate(self.queues):
                process = context.Process(
                    target=_work,
                    args=(options, tuple(files), folder, index, workers, out),
                    daemon=True,
                )
                process.start()
                self.processes.append(process)
            try:
                for index in range(workers):  # started in the empty folder, before it goes
                    if self._get(index) != "ready":
                        raise AuditError("an audit worker did not start")
            except BaseException:
                self.close()
                raise

    def __enter__(self) -> RenderPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers (those still rendering are ended)."""
        for process in self.processes:
            if process.is_alive():
                process.terminate()
            process.join()
        for out in self.queues:
            out.close()
            out.join_thread()

    def _get(self, index: int) -> Any:
        while True:
            try:
                return self.queues[index].get(timeout=POLL_SECONDS)
            except queue.Empty:
                if not self.processes[index].is_alive():
                    raise AuditError(
                        f"an audit worker died (exit code {self.processes[index].exitcode})"
                    ) from None

    def take(self, request: ChatRequest) -> Rendered | str:
        """The rendering of ``request``, the next text request of the logs, or the reason
        it cannot be rendered."""
        index = route(request, session_of(request, self.options.session_key), self.workers)
        waiting = self.waiting[index]
        while not waiting:
            sent = self._get(index)
            if isinstance(sent, tuple):
                raise AuditError(f"an audit worker failed:\n{sent[1]}")
            waiting.extend(sent)
        item = waiting.popleft()
        return item if isinstance(item, str) else expand(item)
