"""What-if canonicalisers: each rewrites a request as the fixed application would have sent it.

One per family of causes:

- ``volatile`` (PFX101-104): dates, times, ids and labelled per-user values leave the system
  prompt and the tool definitions and are appended to the last message instead.
- ``order`` (PFX201, PFX202, PFX204): one tool set per conversation (every tool seen in it so
  far), sorted by name, every JSON object with sorted keys, tool-call arguments and JSON tool
  results re-serialised with sorted keys.
- ``whitespace`` (PFX401-403): text NFC-normalised, invisible characters dropped, line endings
  unified, trailing spaces and blank lines removed.
- ``history`` (PFX501, PFX502, PFX504): the conversation is append-only: each request is the
  previous request of its conversation (as rewritten) plus the messages that are new.
- ``params`` (PFX601): the model and parameters of a conversation's first request throughout.

Conversations are the ones the attribution found (same session, or the predecessor it chose),
and the state kept per conversation is bounded like the attribution's.
"""

from __future__ import annotations

import dataclasses
import json
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from prefixlint.auditing.classify import tool_name
from prefixlint.auditing.volatile import without_values
from prefixlint.chat import content_text
from prefixlint.chat.messages import marshalled
from prefixlint.codes import (
    ENVIRONMENT,
    HISTORY_EDIT,
    INVISIBLE,
    KEY_ORDER,
    LINE_ENDINGS,
    PARAMETER_CHANGE,
    PER_USER,
    PLAIN_TEXT,
    SLIDING_WINDOW,
    SYSTEM_ROLES,
    TIMESTAMP,
    TOOL_OUTPUT,
    TOOL_SET,
    UNIQUE_ID,
    UNORDERED,
    WHITESPACE_DRIFT,
)
from prefixlint.lru import LRU
from prefixlint.request import ChatRequest
from prefixlint.sequences import SameItemsMemo

MAX_CONVERSATIONS = 4096


def _map_text(message: dict[str, Any], rewrite: Callable[[str], str]) -> dict[str, Any]:
    """``message`` with its text content rewritten (a string, or the text of each part)."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": rewrite(content)}
    if isinstance(content, list):
        parts = [
            {**part, "text": rewrite(part["text"])}
            if isinstance(part, dict) and isinstance(part.get("text"), str)
            else part
            for part in content
        ]
        return {**message, "content": parts}
    return message


def _map_strings(value: Any, rewrite: Callable[[str], str]) -> Any:
    """Every string inside a JSON-like value rewritten (keys kept)."""
    if isinstance(value, str):
        return rewrite(value)
    if isinstance(value, dict):
        return {k: _map_strings(v, rewrite) for k, v in value.items()}
    if isinstance(value, list):
        return [_map_strings(v, rewrite) for v in value]
    return value


def sorted_keys(value: Any) -> Any:
    """A JSON-like value with every object's keys in sorted order."""
    if isinstance(value, dict):
        return {k: sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(v) for v in value]
    return value


def normalise_whitespace(text: str) -> str:
    """NFC, no invisible characters, ``\\n`` line ends, no trailing spaces or blank lines."""
    text = unicodedata.normalize("NFC", text.translate(PLAIN_TEXT))
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines if line.strip())


class Canonicaliser:
    """Rewrites requests for one family of causes; ``codes`` are the causes it removes."""

    family: str = ""
    codes: tuple[str, ...] = ()

    def rewrite(self, request: ChatRequest, conversation: int) -> ChatRequest:
        raise NotImplementedError


class Whitespace(Canonicaliser):
    family, codes = "whitespace", (LINE_ENDINGS, WHITESPACE_DRIFT, INVISIBLE)

    def rewrite(self, request: ChatRequest, conversation: int) -> ChatRequest:
        return dataclasses.replace(
            request,
            system=None if request.system is None else normalise_whitespace(request.system),
            messages=tuple(_map_text(m, normalise_whitespace) for m in request.messages),
            tools=tuple(_map_strings(t, normalise_whitespace) for t in request.tools),
        )


class Order(Canonicaliser):
    family, codes = "order", (UNORDERED, KEY_ORDER, TOOL_SET)

    def __init__(self) -> None:
        self.tool_sets: LRU[int, dict[str, Any]] = LRU(MAX_CONVERSATIONS)

    def rewrite(self, request: ChatRequest, conversation: int) -> ChatRequest:
        tools = dict(self.tool_sets.recall(conversation) or {})
        tools.update((tool_name(t) or json.dumps(t, sort_keys=True), t) for t in request.tools)
        self.tool_sets.remember(conversation, tools)
        ordered = tuple(sorted_keys(tools[name]) for name in sorted(tools, key=str))
        return dataclasses.replace(
            request, tools=ordered, messages=tuple(_sorted_json(m) for m in request.messages)
        )


def _resorted(text: str) -> str:
    try:
        value = json.loads(text)
    except (TypeError, ValueError):
        return text
    if not isinstance(value, (dict, list)):
        return text
    return json.dumps(sorted_keys(value), ensure_ascii=False)


def _sorted_json(message: dict[str, Any]) -> dict[str, Any]:
    """Tool-call arguments and JSON tool results with sorted keys."""
    if message.get("role") == "tool":
        message = _map_text(message, _resorted)
    calls = message.get("tool_calls")
    if not calls:
        return message
    rewritten = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                arguments = _resorted(arguments)
            else:
                arguments = sorted_keys(arguments)
            call = {**call, "function": {**function, "arguments": arguments}}
        rewritten.append(call)
    return {**message, "tool_calls": rewritten}


def _stripper(sink: list[str]) -> Callable[[str], str]:
    """A function that removes volatile values from a text and collects them in ``sink``."""

    def strip(text: str) -> str:
        kept, removed = without_values(text)
        sink.extend(removed)
        return kept

    return strip


class Volatile(Canonicaliser):
    """Values leave the system prompt and tools for the newest message, and stay with it.

    A message the conversation already sent is sent again as it was rewritten then, so the
    values it carried stay in history and the history stays a prefix. Values are written
    again only when they changed since the conversation last carried them (a date once a
    day, a per-request id every request).
    """

    family, codes = (
        "volatile",
        (TIMESTAMP, UNIQUE_ID, PER_USER, ENVIRONMENT),
    )

    def __init__(self) -> None:
        self.previous: LRU[int, tuple[Any, Any, Any]] = LRU(MAX_CONVERSATIONS)
        self.tool_lists: LRU[bytes, tuple[tuple[dict[str, Any], ...], list[str]]] = LRU(64)
        self._same_tools = SameItemsMemo(self._strip_tools)

    def _stripped_tools(
        self, tools: tuple[dict[str, Any], ...]
    ) -> tuple[tuple[dict[str, Any], ...], list[str]]:
        """The tools without values, and the values."""
        stripped, values = self._same_tools(tools)
        return stripped, list(values)

    def _strip_tools(
        self, tools: Sequence[dict[str, Any]]
    ) -> tuple[tuple[dict[str, Any], ...], list[str]]:
        """Remembered by the tools' ``marshal`` bytes (exact, and cheaper than their text), as
        tool lists repeat."""
        key = marshalled(tuple(tools))
        known = None if key is None else self.tool_lists.recall(key)
        if known is None:
            values: list[str] = []
            known = (tuple(_map_strings(t, _stripper(values)) for t in tools), values)
            if key is not None:
                self.tool_lists.remember(key, known)
        return known

    def rewrite(self, request: ChatRequest, conversation: int) -> ChatRequest:
        moved: list[str] = []
        strip = _stripper(moved)
        system = None if request.system is None else strip(request.system)
        tools, tool_values = self._stripped_tools(request.tools)
        moved.extend(tool_values)
        raw = list(request.messages)
        head = len(_split_system(raw)[0])
        before_raw, before, carried = self.previous.recall(conversation) or ((), (), ())
        messages = [_map_text(m, strip) for m in raw[:head]]
        for index in range(head, len(raw)):
            sent = index < len(before_raw) and before_raw[index] == raw[index]
            messages.append(before[index] if sent else raw[index])
        newest_is_new = len(raw) > head and not (
            len(raw) <= len(before_raw) and before_raw[len(raw) - 1] == raw[-1]
        )
        if moved and newest_is_new and tuple(moved) != carried:
            newest = messages[-1]
            tail = "\n\n" + "; ".join(moved)
            messages[-1] = {**newest, "content": content_text(newest.get("content")) + tail}
            carried = tuple(moved)
        self.previous.remember(conversation, (raw, messages, carried))
        return dataclasses.replace(request, system=system, tools=tools, messages=tuple(messages))


class History(Canonicaliser):
    family, codes = "history", (HISTORY_EDIT, SLIDING_WINDOW, TOOL_OUTPUT)

    def __init__(self) -> None:
        self.previous: LRU[int, tuple[Any, Any]] = LRU(MAX_CONVERSATIONS)

    def rewrite(self, request: ChatRequest, conversation: int) -> ChatRequest:
        head, talk = _split_system(request.messages)
        before = self.previous.recall(conversation)
        rewritten = talk if before is None else before[1] + _new_messages(before[0], talk)
        self.previous.remember(conversation, (talk, rewritten))
        return dataclasses.replace(request, messages=tuple(head + rewritten))


def _split_system(
    messages: Sequence[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    index = 0
    while index < len(messages) and messages[index].get("role") in SYSTEM_ROLES:
        index += 1
    return list(messages[:index]), list(messages[index:])


def _new_messages(
    previous: list[dict[str, Any]], current: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The messages of ``current`` that came after ``previous`` ended: those after the last
    occurrence of ``previous``'s final message, else those beyond ``previous``'s length."""
    if current[: len(previous)] == previous:
        return current[len(previous) :]
    if previous:
        for index in range(len(current) - 1, -1, -1):
            if current[index] == previous[-1]:
                return current[index + 1 :]
    return current[len(previous) :]


class Params(Canonicaliser):
    family, codes = "params", (PARAMETER_CHANGE,)

    def __init__(self) -> None:
        self.first: LRU[int, tuple[str | None, Any]] = LRU(MAX_CONVERSATIONS)

    def rewrite(self, request: ChatRequest, conversation: int) -> ChatRequest:
        first = self.first.recall(conversation)
        if first is None:
            self.first.remember(conversation, (request.model, request.params))
            return request
        return dataclasses.replace(request, model=first[0], params=first[1])


class Together(Canonicaliser):
    """Every family at once, in an order where each sees the others' output."""

    family = "all"

    def __init__(self, parts: Sequence[Canonicaliser]) -> None:
        self.parts = list(parts)
        self.codes = tuple(code for part in self.parts for code in part.codes)

    def rewrite(self, request: ChatRequest, conversation: int) -> ChatRequest:
        for part in self.parts:
            request = part.rewrite(request, conversation)
        return request


FAMILIES: tuple[type[Canonicaliser], ...] = (Volatile, Order, Whitespace, History, Params)
# The order in which the families are applied together: each sees the others' output.
TOGETHER_ORDER: tuple[type[Canonicaliser], ...] = (Whitespace, Order, Volatile, Params, History)


def canonicalisers(causes: Iterable[str] | None = None) -> list[Canonicaliser]:
    """A fresh canonicaliser per family (only those that remove one of ``causes``, when
    given), then, for more than one, one that applies them all."""
    wanted = None if causes is None else set(causes)
    chosen = [f for f in FAMILIES if wanted is None or wanted & set(f.codes)]
    fixes: list[Canonicaliser] = [f() for f in chosen]
    if len(chosen) > 1:
        fixes.append(Together([f() for f in TOGETHER_ORDER if f in chosen]))
    return fixes
