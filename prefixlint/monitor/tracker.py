"""Per-route prefix tracking: compare each request with recent ones, warn when the prefix or
the provider's cache reads drop.

For each route the monitor keeps the hashes (never the text) of the last ``history``
requests and what the provider reported for them. A new request is compared with the recent
request sharing the longest serialised prefix:

- ``prefix-break``: the first differing component is not new content (``first-seen``) but a
  changed model or settings, tools, system prompt or earlier message (a cause code from
  :mod:`prefixlint.monitor.causes`);
- ``cache-drop``: the prefix held, yet the provider reported fewer than ``drop_ratio`` of the
  cached tokens it reported for the matching request: ``ttl-expired`` when more than
  ``ttl_s`` passed since it, else ``evicted`` (evicted, or routed to another cache).

Each event is one structured ``WARNING`` on the ``prefixlint.monitor`` logger (the event dict
in the record's ``prefixlint`` attribute), at most once per ``warn_interval_s`` for the same
route, kind, cause and component kind; every event is counted in the metrics.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from types import FrameType
from typing import Any

from prefixlint.codes import FIRST_SEEN
from prefixlint.monitor.causes import divergence
from prefixlint.monitor.fingerprint import RequestPrint, fingerprint
from prefixlint.monitor.metrics import MetricsSink
from prefixlint.request import Usage

LOGGER = logging.getLogger("prefixlint.monitor")
_ROUTE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "prefixlint_route", default=None
)
_LIBRARY_MODULES = (
    "httpx",
    "httpcore",
    "openai",
    "anthropic",
    "prefixlint.monitor",
    "asyncio",
    "anyio",
    "sniffio",
    "contextlib",
    "functools",
    "threading",
    "concurrent",
)


def call_site(skip: tuple[str, ...] = _LIBRARY_MODULES) -> str:
    """``module:function`` of the nearest caller outside the HTTP and SDK libraries."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if not module.startswith(skip):
            return f"{module}:{frame.f_code.co_name}"
        frame = frame.f_back
    return "unknown"


@dataclass(frozen=True)
class MonitorEvent:
    """One warning: what broke, where, and what it cost as far as the provider says."""

    route: str
    kind: str
    cause: str
    component: str | None
    stable_prefix_chars: int
    request_chars: int
    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    previous_cached_tokens: int | None = None
    seconds_since_match: float | None = None

    def as_dict(self) -> dict[str, str | int | float | None]:
        """The event's fields by name."""
        return asdict(self)

    def summary(self) -> str:
        where = f" in {self.component}" if self.component else ""
        cached = ""
        if self.cached_tokens is not None and self.previous_cached_tokens is not None:
            cached = f"; cached tokens {self.previous_cached_tokens} -> {self.cached_tokens}"
        return (
            f"prefix cache {self.kind} on route {self.route!r}: {self.cause}{where}"
            f" (stable prefix {self.stable_prefix_chars} of {self.request_chars} chars{cached})"
        )


@dataclass
class _Record:
    print: RequestPrint
    time: float
    usage: Usage | None = None


@dataclass
class _RouteState:
    recent: deque[_Record]
    last_warned: dict[tuple[str, str, str], float] = field(default_factory=dict)


@dataclass(frozen=True)
class Observation:
    """A request seen on its way out, waiting for the provider's usage."""

    route: str
    record: _Record
    match: _Record | None
    stable_chars: int
    cause: str | None
    component: str | None


class Monitor:
    """Tracks prefix stability and provider cache reads per route; thread-safe."""

    def __init__(
        self,
        *,
        history: int = 16,
        max_routes: int = 1024,
        ttl_s: float = 300.0,
        drop_ratio: float = 0.5,
        warn_interval_s: float = 60.0,
        metrics: Iterable[MetricsSink] = (),
        logger: logging.Logger = LOGGER,
        on_event: Callable[[MonitorEvent], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.history = history
        self.max_routes = max_routes
        self.ttl_s = ttl_s
        self.drop_ratio = drop_ratio
        self.warn_interval_s = warn_interval_s
        self.metrics = tuple(metrics)
        self.logger = logger
        self.on_event = on_event
        self.clock = clock
        self._routes: OrderedDict[str, _RouteState] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    @contextlib.contextmanager
    def route(name: str) -> Iterator[None]:
        """Name the route of the requests made inside the block (threads and tasks apart)."""
        token = _ROUTE.set(name)
        try:
            yield
        finally:
            _ROUTE.reset(token)

    @staticmethod
    def current_route(default: str | None = None) -> str:
        """The route: ``Monitor.route``'s name, else ``default``, else the call site."""
        return _ROUTE.get() or default or call_site()

    def _state(self, route: str) -> _RouteState:
        state = self._routes.get(route)
        if state is None:
            state = self._routes[route] = _RouteState(deque(maxlen=self.history))
            while len(self._routes) > self.max_routes:
                self._routes.popitem(last=False)
        self._routes.move_to_end(route)
        return state

    def observe_request(self, body: dict[str, Any], request_format: str, route: str) -> Observation:
        """Fingerprint a request body and compare it with the route's recent requests."""
        record = _Record(fingerprint(body, request_format), self.clock())
        with self._lock:
            state = self._state(route)
            match, best = None, -1
            blocks = record.print.blocks
            for earlier in reversed(state.recent):
                wanted = best + 1  # to beat the match, share one more block than it
                if earlier.print.blocks[:wanted] != blocks[:wanted]:
                    continue
                shared = record.print.shared_blocks(earlier.print)
                if shared > best:
                    match, best = earlier, shared
            stable = record.print.stable_chars(match.print) if match else 0
            state.recent.append(record)
        cause, component = divergence(match.print, record.print) if match else (None, None)
        for sink in self.metrics:
            sink.request(route, stable)
        return Observation(route, record, match, stable, cause, component)

    def observe_response(
        self, observation: Observation, usage: Usage | None
    ) -> MonitorEvent | None:
        """Record the provider's usage and warn if the prefix or the cache reads dropped."""
        observation.record.usage = usage
        if usage is not None:
            for sink in self.metrics:
                sink.usage(observation.route, usage)
        event = self._event(observation, usage)
        if event is not None:
            self._report(event)
        return event

    def _event(self, observation: Observation, usage: Usage | None) -> MonitorEvent | None:
        match = observation.match
        if match is None:
            return None
        previous = match.usage.cached_tokens if match.usage else None
        cached = usage.cached_tokens if usage else None
        since = observation.record.time - match.time

        def event(kind: str, cause: str) -> MonitorEvent:
            return MonitorEvent(
                observation.route,
                kind,
                cause,
                observation.component,
                observation.stable_chars,
                observation.record.print.chars,
                usage.prompt_tokens if usage else None,
                cached,
                previous,
                round(since, 3),
            )

        if observation.cause is not None and observation.cause != FIRST_SEEN:
            return event("prefix-break", observation.cause)
        if (
            previous
            and cached is not None
            and cached < self.drop_ratio * previous
            and self._prefix_covers(observation.stable_chars, match, previous)
        ):
            return event("cache-drop", "ttl-expired" if since > self.ttl_s else "evicted")
        return None

    @staticmethod
    def _prefix_covers(stable_chars: int, match: _Record, previous_cached: int) -> bool:
        """Whether the stable prefix is at least what the matching request had cached,
        converting characters to tokens at that request's own characters-per-token ratio."""
        prompt = match.usage.prompt_tokens if match.usage else None
        if not prompt:
            return stable_chars >= match.print.chars
        stable_tokens = stable_chars * prompt / max(match.print.chars, 1)
        return stable_tokens >= 0.9 * previous_cached

    def _report(self, event: MonitorEvent) -> None:
        component_kind = (event.component or "").split("[")[0] or "none"
        for sink in self.metrics:
            sink.event(event.route, event.kind, event.cause, component_kind)
        if self.on_event is not None:
            self.on_event(event)
        key = (event.kind, event.cause, component_kind)
        now = self.clock()
        with self._lock:
            warned = self._state(event.route).last_warned
            if now - warned.get(key, float("-inf")) < self.warn_interval_s:
                return
            warned[key] = now
        self.logger.warning(event.summary(), extra={"prefixlint": event.as_dict()})
