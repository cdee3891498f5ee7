"""Where Anthropic ``cache_control`` breakpoints should go on a log, and whether each pays.

Candidates are the end of the tools, the end of the system prompt (tools and system) and the
end of the last message (the conversation so far: automatic caching, whose entries the next
turn reads back through the ~20-block lookback). Each candidate, with a 5-minute and a 1-hour
TTL, and each breakpoint the log itself places (by component: ``tools``, ``system``,
``messages`` for the last message, else ``tools[i]`` / ``messages[-k]``, counted from the
end), is replayed *alone* through a fresh :class:`~prefixlint.cache.anthropic.AnthropicCache`
over the whole log, so the model's per-model minimum lengths, lookback and TTL refreshes apply.

Break-even, in base input tokens: a read costs 0.1x, so each read token saves 0.9; a write
costs 1.25x (5 minutes) or 2x (1 hour), so each written token costs 0.25 or 1.0 extra.
``net = 0.9 * read_tokens - extra * write_tokens``; a breakpoint pays when net > 0. For each
candidate the better TTL is recommended when it pays (three candidates: within Anthropic's
four breakpoints). A logged breakpoint is flagged when it never pays, naming why: never read
(the component where the prefix before it keeps changing within a session, when one does),
or below the model's minimum, or reads too few to repay the writes.
"""

from __future__ import annotations

import copy
import dataclasses
from collections import Counter
from typing import Any

from prefixlint.auditing.results import BreakpointValue, CacheControlAdvice
from prefixlint.cache.anthropic import AnthropicCache
from prefixlint.cache.base import CacheQuery, prefix_digests
from prefixlint.lru import LRU
from prefixlint.request import ChatRequest, Rendered

READ_SAVING = 0.9
WRITE_EXTRA = {"5m": 0.25, "1h": 1.0}
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
CANDIDATES = ("tools", "system", "messages")
SESSIONS_KEPT = 4096


def candidate_ends(request: ChatRequest, rendered: Rendered) -> dict[str, int]:
    """Token positions where the tools, the system prompt and the last message end."""
    ends: dict[str, int] = {}
    for component in rendered.components:
        name = component.name
        if name.startswith("tools["):
            ends["tools"] = component.token_end
        elif name == "system" or (name == "messages[0]" and _system_first(request)):
            ends["system"] = component.token_end
        elif name.startswith("messages["):
            ends["messages"] = component.token_end
    return ends


def _system_first(request: ChatRequest) -> bool:
    return bool(request.messages) and request.messages[0].get("role") == "system"


def logged_kind(name: str, request: ChatRequest) -> str:
    """A logged breakpoint's component, named so that requests of any length compare."""
    for prefix, count, last in (
        ("tools[", len(request.tools), "tools"),
        ("messages[", len(request.messages), "messages"),
    ):
        if name.startswith(prefix) and name[len(prefix) : -1].isdigit():
            back = count - int(name[len(prefix) : -1])
            return last if back == 1 else f"{prefix}-{back}]"
    return name


def ttl_name(seconds: float) -> str:
    return "1h" if seconds >= TTL_SECONDS["1h"] else "5m"


class _Replay:
    """One breakpoint replayed alone over the log."""

    def __init__(self, component: str, ttl: str) -> None:
        self.component, self.ttl = component, ttl
        self.cache = AnthropicCache()
        self.requests = self.writes = self.reads = 0
        self.write_tokens = self.read_tokens = self.below_minimum = 0
        self.positions: Counter[int] = Counter()
        self.minimums: Counter[int] = Counter()
        self.volatile: Counter[str] = Counter()

    def feed(self, query: CacheQuery, position: int) -> bool:
        """Replay ``query`` with its one breakpoint at ``position``; whether it read."""
        result = self.cache.process(
            dataclasses.replace(query, breakpoints=((position, TTL_SECONDS[self.ttl]),))
        )
        minimum = self.cache.minimum_for(query.model)
        self.requests += 1
        self.positions[position] += 1
        self.minimums[minimum] += 1
        self.below_minimum += position < minimum
        self.writes += result.cache_write_tokens > 0
        self.reads += result.cached_tokens > 0
        self.write_tokens += result.cache_write_tokens
        self.read_tokens += result.cached_tokens
        return result.cached_tokens > 0

    def value(self) -> BreakpointValue:
        net = READ_SAVING * self.read_tokens - WRITE_EXTRA[self.ttl] * self.write_tokens
        return BreakpointValue(
            component=self.component,
            token_position=_most_common(self.positions),
            ttl=self.ttl,
            requests=self.requests,
            writes=self.writes,
            reads=self.reads,
            write_tokens=self.write_tokens,
            read_tokens=self.read_tokens,
            below_minimum=self.below_minimum,
            minimum_tokens=_most_common(self.minimums),
            net_tokens_saved=round(net, 2),
            volatile_component=_most_common(self.volatile) if self.volatile else None,
        )


def _most_common(counts: Counter[Any]) -> Any:
    """The most frequent key, the smallest among equals."""
    return min(counts.items(), key=lambda item: (-item[1], item[0]))[0]


class BreakpointAdvisor:
    """Fed every rendered request of the audit; :meth:`advice` gives the placement."""

    def __init__(self, always: bool) -> None:
        self.always = always  # the anthropic model is audited: advise on every request
        self.requests = 0
        self.candidates = {(c, t): _Replay(c, t) for c in CANDIDATES for t in TTL_SECONDS}
        # Logged breakpoints by (component, ttl), in the order first seen. One marked on every
        # request exactly where its candidate lies replays the same; it mirrors the candidate
        # (only its volatile components are its own) until a request tells them apart.
        self.logged: dict[tuple[str, str], _Replay] = {}
        self.mirrored: dict[tuple[str, str], Counter[str]] = {}
        self.order: list[tuple[str, str]] = []
        # session -> (model, {component: prefix key})
        self.previous: LRU[str, tuple[str | None, Any]] = LRU(SESSIONS_KEPT)

    def feed(self, request: ChatRequest, rendered: Rendered | None, query: CacheQuery) -> None:
        if rendered is None or not (self.always or request.format == "anthropic"):
            return
        self.requests += 1
        candidates = candidate_ends(request, rendered)
        ends = {c.name: c.token_end for c in rendered.components}
        marks = {
            (logged_kind(name, request), ttl_name(seconds)): ends[name]
            for name, seconds in request.cache_breakpoints
            if name in ends
        }
        for key in [k for k in self.mirrored if marks.get(k) != candidates.get(k[0])]:
            self._split(key)
        for key, position in marks.items():
            if key in self.logged or key in self.mirrored:
                continue
            self.order.append(key)
            fresh = key in self.candidates and not self.candidates[key].requests
            if fresh and candidates.get(key[0]) == position:
                self.mirrored[key] = Counter()
            else:
                self.logged[key] = _Replay(*key)
        read = {}
        for kind, position in candidates.items():
            for ttl in TTL_SECONDS:
                read[(kind, ttl)] = self.candidates[(kind, ttl)].feed(query, position)
        keys = self._component_keys(ends, query) if marks else {}
        for key, position in marks.items():
            if key in self.mirrored:
                hit, volatile = read[key], self.mirrored[key]
            else:
                replay = self.logged[key]
                hit, volatile = replay.feed(query, position), replay.volatile
            if not hit:
                changed = self._changed(request, rendered, query, keys, position)
                if changed is not None:
                    volatile[changed] += 1
        if marks and request.session_id is not None:
            self.previous.remember(request.session_id, (query.model, keys))

    def _split(self, key: tuple[str, str]) -> None:
        """A mirrored logged breakpoint goes its own way, from its candidate's state now."""
        replay = copy.deepcopy(self.candidates[key])
        replay.volatile = self.mirrored.pop(key)
        self.logged[key] = replay

    @staticmethod
    def _component_keys(ends: dict[str, int], query: CacheQuery) -> dict[str, bytes]:
        digests = prefix_digests(query, list(ends.values()), None)
        return {name: digests[end][0] for name, end in ends.items()}

    def _changed(
        self,
        request: ChatRequest,
        rendered: Rendered,
        query: CacheQuery,
        keys: dict[str, bytes],
        position: int,
    ) -> str | None:
        """The first component before ``position`` whose prefix differs from the same
        component's in the session's previous request (growth is not a change); ``model``
        when the model changed (its cache entries are apart)."""
        found = self.previous.recall(request.session_id) if request.session_id else None
        if found is None:
            return None
        model, before = found
        if model != query.model:
            return "model"
        for component in rendered.components:
            if component.token_end > position:
                break
            earlier = before.get(component.name)
            if earlier is not None and earlier != keys[component.name]:
                return component.name
        return None

    def _logged(self) -> list[BreakpointValue]:
        values = []
        for key in self.order:
            if key in self.logged:
                values.append(self.logged[key].value())
                continue
            volatile = self.mirrored[key]
            values.append(
                dataclasses.replace(
                    self.candidates[key].value(),
                    volatile_component=_most_common(volatile) if volatile else None,
                )
            )
        return values

    def advice(self) -> CacheControlAdvice | None:
        if not self.requests:
            return None
        candidates = []
        for kind in CANDIDATES:
            replays = [self.candidates[(kind, ttl)] for ttl in TTL_SECONDS]
            values = [replay.value() for replay in replays if replay.requests]
            if not values:
                continue
            best = max(values, key=lambda v: v.net_tokens_saved)
            candidates += [dataclasses.replace(v, recommended=v is best and v.pays) for v in values]
        logged = [dataclasses.replace(value, problem=_problem(value)) for value in self._logged()]
        return CacheControlAdvice(self.requests, candidates, logged)


def _problem(value: BreakpointValue) -> str | None:
    """Why a logged breakpoint does not pay (None when it does)."""
    if value.pays:
        return None
    if value.below_minimum == value.requests:
        return f"below the minimum of {value.minimum_tokens:,} cacheable tokens: never cached"
    if value.reads == 0:
        where = value.volatile_component
        if where is not None:
            return f"never read: the prefix before it changes at {where}"
        return "never read: no later request repeats the prefix before it"
    return f"reads ({value.read_tokens:,} tokens) do not repay the writes ({value.write_tokens:,})"
