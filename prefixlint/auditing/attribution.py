"""Miss attribution: which earlier request each request should have reused, and why it did not.

The predecessor is, in order of preference: the last request of the same session
(``session_id`` or the ``--session-key`` field); without a session, the last request whose
whole conversation (its non-system messages, at least two) begins this one's (a session
inferred from a shared conversation head); otherwise the earlier request that shares the
longest token prefix or, when that one does not share the whole head (system prompt and
tools), the latest with the same head or one that differs from it only in volatile values.
The first differing token is mapped back to a component and classified
(:mod:`prefixlint.auditing.classify`); a session's first request, compared with another
session's, keeps only the causes a prefix shared by conversations can carry. The cost is what
the predecessor would have supplied minus what the cache model actually served.

State stays small: a bounded, least-recently-used set of snapshots (the last request of each
session plus recent ones), a bounded index of chained block hashes for the longest-prefix
search, and bounded indexes of conversation and head hashes.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from prefixlint import codes
from prefixlint.auditing import classify
from prefixlint.auditing.diff import escape, window
from prefixlint.auditing.message_chain import MessageChain, message_chain, opening
from prefixlint.auditing.prefix_index import PrefixIndex
from prefixlint.auditing.prefix_keys import BlockKeys
from prefixlint.auditing.volatile import without_values
from prefixlint.cache.base import ROUTED_NAMESPACE, SALTED_NAMESPACE, CacheResult
from prefixlint.chat import content_text
from prefixlint.lru import LRU
from prefixlint.request import ChatRequest, Component, Rendered
from prefixlint.sequences import common_prefix_length

# The longest-prefix index keys every 16-token block (a request that shares a few more tokens
# than another, such as the previous turn of a conversation, is told apart from it).
INDEX_BLOCK = 16
# Bytes per token in ``Rendered.packed`` (native signed 64-bit integers).
PACKED_WIDTH = 8
# How far before its end a predecessor's tokens or text usually stop being repeated.
NEAR_END = 512
_DIGIT_TOKEN = re.compile(r"[\w.\-]*\d[\w.\-]*")
# The fields that name a namespace in some cache model, in the order a change is named.
ROUTING_PARAMS = ("model", *sorted((ROUTED_NAMESPACE | SALTED_NAMESPACE) - {"model"}))
# Causes that only a conversation's own earlier request can show.
CONVERSATION_ONLY = frozenset(
    {
        codes.CONTENT_CHANGED,
        codes.TOOL_SET,
        codes.PARAMETER_CHANGE,
        codes.HISTORY_EDIT,
        codes.SLIDING_WINDOW,
        codes.TOOL_OUTPUT,
        codes.ARGUMENTS_RESERIALISED,
        codes.NON_MONOTONIC,
    }
)


@dataclass(slots=True)
class Snapshot:
    """What attribution keeps of a request: its data, text, tokens and components, its
    longest-prefix index keys and its conversation's hashes."""

    seq: int
    line: int
    conversation: int
    request: ChatRequest
    rendered: Rendered | None
    units: tuple[int, ...]
    keys: BlockKeys
    chain: MessageChain | None


@dataclass(slots=True)
class Divergence:
    """How a request relates to its predecessor (no predecessor: everything ``None``/0)."""

    predecessor_line: int | None = None
    predecessor_tokens: int = 0
    shared_tokens: int = 0
    code: str | None = None
    component: str | None = None
    char: int | None = None
    token: int | None = None
    routing_changed: tuple[str, ...] = ()
    same_conversation: bool = False
    session_opening: bool = False
    renderings: tuple[Rendered, Rendered] | None = None

    @property
    def diverged(self) -> bool:
        return self.code is not None and self.code != codes.FIRST_SEEN

    def routing_for(self, namespace_params: frozenset[str]) -> str | None:
        """The first changed field of ``routing_changed`` that a cache with
        ``namespace_params`` reads, if any."""
        return next((p for p in self.routing_changed if p in namespace_params), None)


def index_block(unit_tokens: int) -> int:
    """Units per longest-prefix index key (block hashes are one unit per block)."""
    return INDEX_BLOCK if unit_tokens == 1 else 1


class Attributor:
    """Finds each request's predecessor and where, and why, the two diverge."""

    def __init__(self, *, max_snapshots: int = 1024, max_index: int = 200_000) -> None:
        self.snapshots: LRU[int, Snapshot] = LRU(max_snapshots)
        self.sessions: LRU[str, int] = LRU(max_snapshots * 4)
        self.conversations: LRU[Hashable, int] = LRU(max_index)
        self.prefixes = PrefixIndex(max_index)
        # How a conversation opens -> the latest request that opened so and had no session
        # predecessor: the next such request reuses its conversation hashes.
        self.openings: LRU[Hashable, int] = LRU(max_snapshots * 4)
        # A request's head with its volatile values masked -> the latest request with it.
        self.heads: LRU[Hashable, int] = LRU(max_snapshots * 4)
        # A hash of a request's head as rendered, and its model -> the latest request with it.
        self.exact_heads: LRU[int, int] = LRU(max_snapshots * 4)
        self.seq = 0

    def observe(
        self,
        request: ChatRequest,
        rendered: Rendered | None,
        units: Sequence[int],
        unit_tokens: int,
        session: str | None,
    ) -> tuple[Divergence, int]:
        """Attribute ``request`` against its predecessor, then remember it.

        ``units`` are token ids, or block hashes of ``unit_tokens`` tokens each (Mooncake
        traces); returns the divergence and the request's conversation number.
        """
        self.seq += 1
        units = tuple(units)
        predecessor = self._session_predecessor(session)
        chain = self._chain(request, rendered, predecessor)
        talk = chain.hashes if chain else []
        if session is None:
            predecessor = self._inferred_predecessor(talk)
        same_conversation = predecessor is not None
        block = index_block(unit_tokens)
        heads = None if rendered is None else (exact_head(request, rendered), head_key(request))
        if predecessor is None:
            keys = BlockKeys(units, block)
            predecessor = self._longest_prefix(keys)
            shared = _shared_units(predecessor, units, rendered) if predecessor else 0
            predecessor, shared = self._alike_head(
                heads, request, rendered, units, predecessor, shared
            )
        else:
            shared = _shared_units(predecessor, units, rendered)
            keys = BlockKeys(units, block, predecessor.keys, shared)
        if predecessor is None:
            divergence, conversation = Divergence(), self.seq
        else:
            divergence = self._diverge(
                predecessor, request, rendered, units, shared, unit_tokens, same_conversation
            )
            if session is not None and not same_conversation:
                as_session_opening(divergence)
            conversation = predecessor.conversation if same_conversation else self.seq
        snapshot = Snapshot(
            self.seq, request.line, conversation, request, rendered, units, keys, chain
        )
        self.snapshots.remember(self.seq, snapshot)
        if session is not None:
            self.sessions.remember(session, self.seq)
        if talk:
            self.conversations.remember(talk[-1], self.seq)
        self.prefixes.put(keys, self.seq)
        if heads is not None:
            self.exact_heads.remember(heads[0], self.seq)
            self.heads.remember(heads[1], self.seq)
        return divergence, conversation

    def _alike_head(
        self,
        heads: tuple[int, Hashable] | None,
        request: ChatRequest,
        rendered: Rendered | None,
        units: tuple[int, ...],
        predecessor: Snapshot | None,
        shared: int,
    ) -> tuple[Snapshot | None, int]:
        """When ``predecessor`` (the longest shared prefix) does not share the request's whole
        head (system prompt and tools), the latest request with the same head, else the latest
        whose head differs only in volatile values (``heads``: :func:`exact_head` and
        :func:`head_key`), if remembered: that is what the request should have reused, unless
        ``predecessor``'s head too differs only in volatile values and it shares more. (Block
        keys name only the latest request of a shared block, which may end inside the head;
        a longer shared prefix with another prompt, or another model, says nothing.)"""
        if heads is None or rendered is None or shared >= _head_tokens(request, rendered):
            return predecessor, shared
        for seq in (self.exact_heads.get(heads[0]), self.heads.get(heads[1])):
            alike = self.snapshots.get(seq) if seq is not None else None
            if alike is None or alike is predecessor:
                continue
            shared_alike = _shared_units(alike, units, rendered)
            if shared_alike >= shared or not _alike_heads(predecessor, request, heads[1]):
                return alike, shared_alike
        return predecessor, shared

    def _session_predecessor(self, session: str | None) -> Snapshot | None:
        """The last request of a known session, if remembered: the session is the
        conversation, another session is never the same one."""
        if session is None:
            return None
        seq = self.sessions.recall(session)
        return self.snapshots.recall(seq) if seq is not None else None

    def _inferred_predecessor(self, talk: list[int]) -> Snapshot | None:
        """An earlier request whose whole conversation (two messages at least, one opening
        message is too common to tell conversations apart) begins this one, if remembered."""
        for key in reversed(talk[1:]):
            seq = self.conversations.get(key)
            found: Snapshot | None = self.snapshots.recall(seq) if seq is not None else None
            if found is not None:
                return found
        return None

    def _chain(
        self, request: ChatRequest, rendered: Rendered | None, predecessor: Snapshot | None
    ) -> MessageChain | None:
        """The request's conversation hashes (none without text), taking what it can from
        those of its session's predecessor or else of the latest request that opened alike."""
        if rendered is None:
            return None
        hint = predecessor
        first = opening(request.messages) if hint is None else None
        if first is not None:
            seq = self.openings.get(first)
            hint = self.snapshots.get(seq) if seq is not None else None
            self.openings.remember(first, self.seq)
        return message_chain(request.messages, hint.chain if hint else None)

    def _longest_prefix(self, keys: BlockKeys) -> Snapshot | None:
        """The most recent remembered request that shares the most index keys."""
        best = None
        for seq in self.prefixes.holders(keys):
            found = self.snapshots.get(seq)
            if found is not None:
                best = found
        return best

    def _diverge(
        self,
        predecessor: Snapshot,
        request: ChatRequest,
        rendered: Rendered | None,
        units: tuple[int, ...],
        shared_units: int,
        unit_tokens: int,
        same_conversation: bool,
    ) -> Divergence:
        divergence = Divergence(
            predecessor_line=predecessor.line,
            predecessor_tokens=_reusable_tokens(
                predecessor,
                unit_tokens,
                same_conversation,
                shared_units * unit_tokens,
                _head_tokens(request, rendered) if rendered is not None else None,
            ),
            shared_tokens=min(shared_units * unit_tokens, _tokens_of(request, units, unit_tokens)),
            same_conversation=same_conversation,
        )
        changed = classify.changed_params(predecessor.request, request)
        divergence.routing_changed = tuple(p for p in ROUTING_PARAMS if p in changed)
        if shared_units >= len(predecessor.units):
            return divergence
        divergence.token = shared_units * unit_tokens
        if rendered is None or predecessor.rendered is None:
            # Without text, a different conversation that shares the head cannot be told from
            # an edit: only a known session makes the divergence a change of content.
            if same_conversation:
                divergence.code = codes.CONTENT_CHANGED
            else:
                divergence.code = codes.FIRST_SEEN
                divergence.predecessor_tokens = divergence.shared_tokens
            return divergence
        before_text, after_text = predecessor.rendered.text, rendered.text
        char = _prefix_length(before_text, after_text)
        divergence.char = char
        divergence.renderings = (predecessor.rendered, rendered)
        if char >= len(before_text):
            # The texts agree; the tokens differ where BPE merged across the old ending.
            divergence.code, divergence.component = codes.GLUED, _component_at(rendered, char)
            return divergence
        if _component_at(predecessor.rendered, char) == "generation_prompt":
            divergence.code = codes.FIRST_SEEN
            divergence.component = _component_at(rendered, char)
            return divergence
        component = _component_at(rendered, char) or "generation_prompt"
        first = _first_message(request, rendered)
        if not same_conversation and first is not None and component == first.name:
            # Another conversation, which differs from here on: this one's own first message
            # is new content, whatever the predecessor has in its place.
            divergence.code, divergence.component = codes.FIRST_SEEN, component
            return divergence
        divergence.code, divergence.component = classify.classify(
            predecessor.request, request, component, same_conversation
        )
        return divergence


def _alike_heads(snapshot: Snapshot | None, request: ChatRequest, key: Hashable) -> bool:
    """Whether ``snapshot``'s request has the head ``key`` of ``request`` (:func:`head_key`,
    which holds the model) and the same cache key."""
    if snapshot is None or head_key(snapshot.request) != key:
        return False
    changed = classify.changed_params(snapshot.request, request)
    return not any(p in ROUTING_PARAMS for p in changed)


def as_session_opening(divergence: Divergence) -> None:
    """A known session's first request, compared with another session's: only what a prefix
    shared by conversations can carry is a cause (a volatile value, an order, whitespace);
    another tool set, history or text is another conversation's, so those are first-seen.
    So is a request in another namespace of the cache (:func:`cause_for` knows which fields
    each cache reads): it could never have been reused."""
    if divergence.code in CONVERSATION_ONLY:
        divergence.code = codes.FIRST_SEEN
    divergence.session_opening = True


def example_views(divergence: Divergence, full_text: bool = False) -> tuple[str, str]:
    """Escaped windows of both requests at the divergence or, with ``full_text``, the whole
    components there."""
    if divergence.renderings is None or divergence.char is None:
        return "", ""
    char = divergence.char
    if not full_text:
        before, after = divergence.renderings
        return window(before.text, char), window(after.text, char)
    views = []
    for rendered in divergence.renderings:
        component = rendered.component_at_char(min(char, len(rendered.text) - 1))
        start, end = (component.char_start, component.char_end) if component else (0, 0)
        views.append(escape(rendered.text[start:end]))
    return views[0], views[1]


def _component_at(rendered: Rendered, char: int) -> str | None:
    component = rendered.component_at_char(char)
    return component.name if component else None


def exact_head(request: ChatRequest, rendered: Rendered) -> int:
    """A hash of the request's head (system prompt and tools) as rendered tokens and of its
    model (a hint only: the tokens a candidate shares are counted before it is chosen)."""
    return hash((rendered.packed[: _head_tokens(request, rendered) * PACKED_WIDTH], request.model))


def head_key(request: ChatRequest) -> Hashable:
    """The request's system prompt masked (:func:`masked_system`), its tool names and its
    model: equal for requests whose heads differ only in volatile values."""
    texts = [request.system or ""]
    for message in request.messages:
        if message.get("role") not in codes.SYSTEM_ROLES:
            break
        texts.append(content_text(message.get("content")))
    masked = tuple(masked_system(text) for text in texts)
    return masked, tuple(classify.tool_name(t) for t in request.tools), request.model


@lru_cache(maxsize=1024)
def masked_system(text: str) -> str:
    """``text`` without its volatile-value lines (``Current date and time: ...``) and blank
    lines (a value line goes with the blank line that sets it apart), with dates, ids and
    every token holding a digit masked in the other lines."""
    return "\n".join(filter(None, map(_masked_line, text.split("\n"))))


@lru_cache(maxsize=65_536)
def _masked_line(line: str) -> str | None:
    """One line of :func:`masked_system` (``None``: a volatile-value line, dropped); lines
    are remembered, as a stamped system prompt differs from the last one in a line or two."""
    if classify.volatile_lines_code(line) is not None:
        return None
    return _DIGIT_TOKEN.sub("#", without_values(line)[0])


def _first_message(request: ChatRequest, rendered: Rendered) -> Component | None:
    """The rendered component of the request's first conversation (non-system) message."""
    for index, message in enumerate(request.messages):
        if message.get("role") not in codes.SYSTEM_ROLES:
            name = f"messages[{index}]"
            return next((c for c in rendered.components if c.name == name), None)
    return None


def _head_tokens(request: ChatRequest, rendered: Rendered) -> int:
    """Where the request's first conversation message starts, in tokens (the end of its
    system prompt and tools); the whole prompt when it has none."""
    first = _first_message(request, rendered)
    return first.token_start if first is not None else len(rendered.tokens)


def _reusable_tokens(
    snapshot: Snapshot,
    unit_tokens: int,
    same_conversation: bool,
    shared: int,
    own_head: int | None,
) -> int:
    """What the predecessor could supply: all of it within a conversation. A predecessor not
    known to be of the same conversation counts as one when the two share the conversation's
    first message; otherwise only the head both have: what comes before that message in the
    predecessor, at most this request's own head (``own_head``, in tokens)."""
    total = _tokens_of(snapshot.request, snapshot.units, unit_tokens)
    if same_conversation or snapshot.rendered is None:
        return total
    first = _first_message(snapshot.request, snapshot.rendered)
    if first is None or shared >= first.token_end:
        return total
    return first.token_start if own_head is None else min(first.token_start, own_head)


def _shared_units(before: Snapshot, units: tuple[int, ...], rendered: Rendered | None) -> int:
    """How many leading units ``before`` and ``units`` share; compared as packed bytes (a
    token is ``PACKED_WIDTH`` of them) when both are the tokens of a rendering."""
    if (
        before.rendered is not None
        and rendered is not None
        and _is_packed(before.units, before.rendered)
        and _is_packed(units, rendered)
    ):
        return _prefix_length(before.rendered.packed, rendered.packed) // PACKED_WIDTH
    return _prefix_length(before.units, units)


def _prefix_length(before: Sequence[Any], after: Sequence[Any]) -> int:
    """``common_prefix_length`` of a request's and its predecessor's tokens or text, which
    mostly agree up to the last few hundred elements of the shorter one."""
    return common_prefix_length(before, after, min(len(before), len(after)) - NEAR_END)


def _is_packed(units: tuple[int, ...], rendered: Rendered | None) -> bool:
    """Whether ``units`` are ``rendered``'s tokens (so its packed tokens stand for them)."""
    return rendered is not None and units is rendered.tokens


def _tokens_of(request: ChatRequest, units: Sequence[int], unit_tokens: int) -> int:
    if unit_tokens == 1:
        return len(units)
    return request.input_length or len(units) * unit_tokens


@dataclass(frozen=True, slots=True)
class MissCause:
    """Why one request missed on one cache model: the cause, the tokens it cost, the
    component or parameter it names, and whether the divergence located it (so its
    character and token places apply)."""

    code: str | None
    cost: int = 0
    component: str | None = None
    located: bool = False


def cause_for(
    divergence: Divergence,
    result: CacheResult,
    *,
    no_breakpoint: bool = False,
    namespace_params: frozenset[str] = frozenset(ROUTING_PARAMS),
) -> MissCause:
    """The cause of one request's miss on one cache model; the one place that decides it.

    ``namespace_params`` are the fields the model's namespaces follow (its
    ``namespace_params``): a change of another field is never the cause there. In order:
    PFX303 when ``no_breakpoint`` says the request marked no breakpoint on a model that
    caches only at breakpoints; PFX601 when such a field changed within a conversation and
    the cache served less than the prefix the two share (the predecessor's entries are in
    another namespace, whatever else changed); the divergence's cause when it cost tokens;
    the cache's own reason (``evicted``, ``ttl-expired``, ``below-minimum``, ``first-seen``).
    A predecessor from another conversation counts a routing change only when the cache
    served less than half the prefix the two share; from another known session, a routing
    change makes the request first-seen.
    """
    supplied = min(divergence.predecessor_tokens, result.prompt_tokens)
    cost = max(0, supplied - result.cached_tokens)
    if no_breakpoint:
        # Nothing could have been cached, whatever else changed.
        if cost > 0:
            return MissCause(codes.BREAKPOINT, cost, "cache_control")
        return MissCause(codes.FIRST_SEEN if result.uncached_tokens else None)
    routing = divergence.routing_for(namespace_params)
    diverged = divergence.diverged
    if routing and divergence.session_opening:
        # Another session's request in another namespace could never have been reused.
        routing, diverged = None, False
    # A cache that served all the two share (llama-server serves one model whatever a
    # request names) lost only what no cache could reuse: the predecessor's generation prompt.
    if (
        routing
        and cost > 0
        and result.cached_tokens < divergence.shared_tokens
        and divergence.same_conversation
    ):
        return MissCause(codes.PARAMETER_CHANGE, cost, routing)
    if diverged and cost > 0:
        return MissCause(divergence.code, cost, divergence.component, located=True)
    reason = result.miss_reason
    if reason in ("evicted", "ttl-expired", "below-minimum"):
        return MissCause(reason, cost)
    if (
        reason == codes.FIRST_SEEN
        and routing
        and result.cached_tokens < divergence.shared_tokens / 2
    ):
        # The same tokens, but the cache that held them was not searched: a cache that
        # isolates models or keys serves little or nothing of the shared prefix.
        return MissCause(codes.PARAMETER_CHANGE, cost, routing)
    return MissCause(reason)
