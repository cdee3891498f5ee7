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

REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")
# A high surrogate escape not followed by a low one, or a low one not preceded by a high one.
_LONE_SURROGATE = re.compile(
    r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2})"
    r"|(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}"
)


class ShapeError(Exception):
    """A field of the line has a type that the audit cannot use."""


def _kind(value) -> str:
    return type(value).__name__


def lone_surrogate(text: str, record) -> str | None:
    """A reason when the decoded ``record`` of line ``text`` holds a lone surrogate.

    The line's text is searched first (cheap, and it finds nothing in almost every line);
    only a candidate escape costs a full check of the decoded value.
    """
    if "\\u" not in text or _LONE_SURROGATE.search(text) is None:
        return None
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"text holds a lone surrogate (U+{ord(exc.object[exc.start]):04X})"
    except RecursionError:
        return "malformed JSON: nested too deeply"
    return None


def _optional_text(value, name: str) -> None:
    if value is not None and not isinstance(value, str):
        raise ShapeError(f"{name} is not a string (got {_kind(value)})")


def _check_content(content, name: str) -> None:
    parts = content if isinstance(content, list) else [content]
    for index, part in enumerate(parts):
        if isinstance(part, dict) and "type" in part and not isinstance(part["type"], str):
            where = f"{name}[{index}]" if isinstance(content, list) else name
            raise ShapeError(f"{where}.type is not a string (got {_kind(part['type'])})")


def _check_tool_calls(calls, name: str) -> None:
    if not calls:
        return
    if not isinstance(calls, list):
        raise ShapeError(f"{name} is not a list (got {_kind(calls)})")
    for index, call in enumerate(calls):
        if not isinstance(call, dict):
            raise ShapeError(f"{name}[{index}] is not an object (got {_kind(call)})")
        function = call.get("function", {})
        if not isinstance(function, dict):
            raise ShapeError(f"{name}[{index}].function is not an object (got {_kind(function)})")


def _scalar(value, name: str) -> None:
    """Ids and names are compared and hashed: they cannot be objects or arrays."""
    if isinstance(value, (dict, list)):
        raise ShapeError(f"{name} is not a string (got {_kind(value)})")


def _check_tool(index: int, tool) -> None:
    name = f"tools[{index}]"
    if not isinstance(tool, dict):
        raise ShapeError(f"{name} is not an object (got {_kind(tool)})")
    _scalar(tool.get("name"), f"{name}.name")
    function = tool.get("function", {})
    if not isinstance(function, dict):
        raise ShapeError(f"{name}.function is not an object (got {_kind(function)})")
    _scalar(function.get("name"), f"{name}.function.name")


def check_message(index: int, message) -> None:
    """Raise :class:`ShapeError` unless ``message`` has the types rendering reads."""
    name = f"messages[{index}]"
    if not isinstance(message, dict):
        raise ShapeError(f"{name} is not an object (got {_kind(message)})")
    _optional_text(message.get("role"), f"{name}.role")
    _check_content(message.get("content"), f"{name}.content")
    for field in REASONING_FIELDS:
        _optional_text(message.get(field), f"{name}.{field}")
    _check_tool_calls(message.get("tool_calls"), f"{name}.tool_calls")
    _scalar(message.get("tool_call_id"), f"{name}.tool_call_id")


def _finite_or_none(value) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def _count(value, name: str) -> None:
    if value is not None and (not isinstance(value, int) or value < 0):
        raise ShapeError(f"{name!r} is not a count of tokens")


def check_fields(fields: dict) -> None:
    """Check (and, for ids and times, normalise) a log reader's fields in place.

    A session id or route that is not a string becomes its text (as an envelope's session
    id does); a timestamp that is not a finite number becomes unknown.
    """
    _optional_text(fields.get("model"), "'model'")
    _optional_text(fields.get("system"), "'system'")
    for index, message in enumerate(fields.get("messages", ())):
        check_message(index, message)
    for index, tool in enumerate(fields.get("tools", ())):
        _check_tool(index, tool)
    for key in ("input_length", "output_length"):
        _count(fields.get(key), key)
    for key in ("session_id", "route"):
        value = fields.get(key)
        if value is not None and not isinstance(value, str):
            fields[key] = str(value)
    if "timestamp" in fields:
        fields["timestamp"] = _finite_or_none(fields["timestamp"])
