"""Type checks on what a log reader took from one line, so that a line of the wrong shape is
skipped with a reason instead of failing later (in rendering, pricing or attribution).

JSON can put any type anywhere: a ``model`` that is an object, a ``role`` that is a list, a
content block whose ``type`` is an object, reasoning that is a number, a ``\\ud800`` escape
that decodes to a lone surrogate (text that cannot be encoded again). :func:`check_fields`
raises :class:`ShapeError` with a one-line reason naming the field; it never quotes the
line's text.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable

from prefixlint.sources.logs.base import JsonObject, RequestFields

REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
# The messages and tools checked, by identity: a log's decoder hands out repeated ones as
# the same objects, so a turn-by-turn log checks each of them once, its conversations
# interleaved or not. Each is held, so that its id is not reused while it is here; past
# MAX_CHECKED the memo starts again.
_checked: dict[int, object] = {}
MAX_CHECKED = 1 << 15
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_HIGH = frozenset("89abAB")


class ShapeError(Exception):
    """A field of the line has a type that the audit cannot use."""


def _kind(value: object) -> str:
    return type(value).__name__


def _unpaired_escape(text: str) -> bool:
    """Whether ``text`` holds a surrogate escape that is not half of a pair (an escaped
    backslash before it can make this a false alarm, never a miss)."""
    high_end = -1  # where the last unpaired high surrogate escape ended
    for match in _SURROGATE_ESCAPE.finditer(text):
        if match.group()[3] in _HIGH:
            if high_end >= 0:
                return True
            high_end = match.end()
        elif high_end != match.start():
            return True
        else:
            high_end = -1
    return high_end >= 0


def lone_surrogate(text: str, record: object) -> str | None:
    """A reason when the decoded ``record`` of line ``text`` holds a lone surrogate.

    The line's text is searched first (one regular expression scan: it finds nothing in
    almost every line); only an unpaired escape costs a full check of the decoded value.
    """
    if not _unpaired_escape(text):
        return None
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"text holds a lone surrogate (U+{ord(exc.object[exc.start]):04X})"
    except RecursionError:
        return "malformed JSON: nested too deeply"
    return None


class _Misfit(Exception):
    """A value of the wrong type at ``where`` (relative to the message or tool checked)."""

    def __init__(self, where: str, expected: str, value: object) -> None:
        super().__init__(f"{where} is not {expected} (got {_kind(value)})")


def _text(value: object, where: str) -> None:
    if value is not None and not isinstance(value, str):
        raise _Misfit(where, "a string", value)


def _scalar(value: object, where: str) -> None:
    """Ids and names are compared and hashed: they cannot be objects or arrays."""
    if isinstance(value, (dict, list)):
        raise _Misfit(where, "a string", value)


def _object(value: object, where: str) -> JsonObject:
    if not isinstance(value, dict):
        raise _Misfit(where, "an object", value)
    return value


def _content(content: object) -> None:
    parts = content if isinstance(content, list) else (content,)
    for index, part in enumerate(parts):
        if not isinstance(part, dict):
            continue
        where = f".content[{index}]" if isinstance(content, list) else ".content"
        if not isinstance(part.get("type", ""), str):
            raise _Misfit(where + ".type", "a string", part["type"])
        if part.get("type") == "text":
            # A text part's text is rendered and compared: a number or object there is a
            # request the provider rejects, not text.
            _text(part.get("text"), where + ".text")


def _tool_calls(calls: object) -> None:
    if not isinstance(calls, list):
        raise _Misfit(".tool_calls", "a list", calls)
    for index, call in enumerate(calls):
        if not isinstance(call, dict) or not isinstance(call.get("function", {}), dict):
            inner = call if not isinstance(call, dict) else call["function"]
            where = f".tool_calls[{index}]" + ("" if inner is call else ".function")
            raise _Misfit(where, "an object", inner)


def _message(value: object) -> None:
    message = _object(value, "")
    _text(message.get("role"), ".role")
    _content(message.get("content"))
    for field in REASONING_FIELDS:
        _text(message.get(field), "." + field)
    if message.get("tool_calls"):
        _tool_calls(message["tool_calls"])
    _scalar(message.get("tool_call_id"), ".tool_call_id")


def _tool(value: object) -> None:
    tool = _object(value, "")
    _scalar(tool.get("name"), ".name")
    function = _object(tool.get("function", {}), ".function")
    _scalar(function.get("name"), ".function.name")


def _check_all(items: Iterable[object], check: Callable[[object], None], name: str) -> None:
    """``check`` each of ``items`` not checked before; a misfit names the item
    (``messages[3].role``)."""
    for index, item in enumerate(items):
        if _checked.get(id(item)) is not item:
            try:
                check(item)
            except _Misfit as misfit:
                raise ShapeError(f"{name}[{index}]{misfit}") from None
            if len(_checked) >= MAX_CHECKED:
                _checked.clear()
            _checked[id(item)] = item


def _finite_or_none(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _count(value: object, name: str) -> None:
    if value is not None and (not isinstance(value, int) or value < 0):
        raise ShapeError(f"{name!r} is not a count of tokens")


def check_fields(fields: RequestFields) -> None:
    """Check (and, for ids and times, normalise) a log reader's fields in place.

    A session id or route that is not a string becomes its text (as an envelope's session
    id does); a timestamp that is not a finite number becomes unknown.
    """
    for key in ("model", "system"):
        try:
            _text(fields.get(key), repr(key))
        except _Misfit as misfit:
            raise ShapeError(str(misfit)) from None
    _check_all(fields.get("messages", ()), _message, "messages")
    _check_all(fields.get("tools", ()), _tool, "tools")
    for key in ("input_length", "output_length"):
        _count(fields.get(key), key)
    for key in ("session_id", "route"):
        value = fields.get(key)
        if value is not None and not isinstance(value, str):
            fields[key] = str(value)
    if "timestamp" in fields:
        fields["timestamp"] = _finite_or_none(fields["timestamp"])
