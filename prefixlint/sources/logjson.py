"""JSON decoding of log lines that decodes a repeated array element only once.

A turn-by-turn log repeats a conversation's whole history (and its tool list) on every line,
so most of a line is text that an earlier line already held. :class:`LineDecoder` returns
what ``json.loads`` returns, but it walks the top of the line itself (objects two levels
deep, the arrays in them) and remembers each array element that is an object or an array of
at least :data:`PROBE` characters. When a later line holds the same text at an element's
position, the element is not decoded again: the later line gets the same value object.

This is exact because a JSON object or array is closed by its own last character: when the
text at a position starts with the complete text of an element decoded before, the element
there is that text, whatever follows. A line the walk does not expect (malformed JSON, a
byte order mark, anything unusual) is decoded by ``json.loads`` itself, so errors are the
ones it raises.

Values returned for repeated elements are shared between lines: callers must not mutate them.
"""

from __future__ import annotations

import json
import re
from typing import Any

PROBE = 128
"""Elements shorter than this are decoded every time; longer ones are found by their first
``PROBE`` characters."""
CANDIDATES = 4
"""Remembered elements per probe (the newest): more cost a comparison each on a miss."""
CAPACITY = 1 << 25
"""Characters of element text remembered; past it the decoder forgets everything and
starts again."""
WALKED_OBJECT_DEPTH = 2
"""Objects nested at most this deep (the line itself is depth 0) are walked member by
member; deeper ones are decoded whole."""

_SPACE = re.compile(r"[ \t\n\r]*")
_scan = json.JSONDecoder().scan_once


class _Unexpected(Exception):
    """The walk met something it leaves to ``json.loads``."""


class LineDecoder:
    """``json.loads`` for the lines of one log, sharing the values of repeated elements."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        self._known: dict[str, list[tuple[str, Any]]] = {}
        self._size = 0

    def __call__(self, text: str) -> Any:
        try:
            value, end = self._value(text, _SPACE.match(text).end(), 0)
            if _SPACE.match(text, end).end() != len(text):
                raise _Unexpected
        except (_Unexpected, ValueError, StopIteration, IndexError, RecursionError):
            return json.loads(text)
        return value

    def _value(self, text: str, pos: int, depth: int) -> tuple[Any, int]:
        char = text[pos]
        if char == "{" and depth < WALKED_OBJECT_DEPTH:
            return self._object(text, pos, depth + 1)
        if char == "[":
            return self._array(text, pos)
        return _scan(text, pos)

    def _object(self, text: str, pos: int, depth: int) -> tuple[dict, int]:
        result: dict[str, Any] = {}
        pos = _SPACE.match(text, pos + 1).end()
        if text[pos] == "}":
            return result, pos + 1
        while True:
            if text[pos] != '"':
                raise _Unexpected
            key, pos = _scan(text, pos)
            pos = _SPACE.match(text, pos).end()
            if text[pos] != ":":
                raise _Unexpected
            value, pos = self._value(text, _SPACE.match(text, pos + 1).end(), depth)
            result[key] = value
            pos = _SPACE.match(text, pos).end()
            if text[pos] == "}":
                return result, pos + 1
            if text[pos] != ",":
                raise _Unexpected
            pos = _SPACE.match(text, pos + 1).end()

    def _array(self, text: str, pos: int) -> tuple[list, int]:
        result: list[Any] = []
        pos = _SPACE.match(text, pos + 1).end()
        if text[pos] == "]":
            return result, pos + 1
        while True:
            if text[pos] in "{[":
                value, pos = self._element(text, pos)
            else:
                value, pos = _scan(text, pos)
            result.append(value)
            pos = _SPACE.match(text, pos).end()
            if text[pos] == "]":
                return result, pos + 1
            if text[pos] != ",":
                raise _Unexpected
            pos = _SPACE.match(text, pos + 1).end()

    def _element(self, text: str, pos: int) -> tuple[Any, int]:
        """The object or array at ``pos``, from memory when its text was decoded before."""
        probe = text[pos : pos + PROBE]
        for raw, value in self._known.get(probe, ()):
            if text.startswith(raw, pos):
                return value, pos + len(raw)
        value, end = _scan(text, pos)
        if end - pos >= PROBE:
            self._remember(probe, text[pos:end], value)
        return value, end

    def _remember(self, probe: str, raw: str, value: Any) -> None:
        if len(raw) > self._capacity:
            return
        if self._size + len(raw) > self._capacity:
            self._known.clear()
            self._size = 0
        entries = self._known.setdefault(probe, [])
        entries.insert(0, (raw, value))
        self._size += len(raw)
        if len(entries) > CANDIDATES:
            self._size -= len(entries.pop()[0])
