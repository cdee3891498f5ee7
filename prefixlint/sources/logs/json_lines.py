"""JSON decoding of log lines that decodes a repeated message or tool list only once.

A turn-by-turn log repeats a conversation's whole history (and its tool list) on every line,
so most of a line is text that an earlier line already held. :class:`LineDecoder` returns
what ``json.loads`` returns, but it walks the top of the line itself (objects two levels
deep and the arrays in them) and remembers text it decoded there: each object or array of
at least :data:`PROBE` characters that is an element of such an array, each such array
whose elements all came from memory, and, after an element that came from memory, the run
of elements that followed it to the end of its array (the rest of a conversation, which
the next turn repeats). When a later line holds a remembered text at the same kind of
position, it is not decoded again: the later line gets the same value objects.

This is exact because a JSON object or array is closed by its own last character (and so is
a run of elements whose last one is an object, an array or a string): when the text at a
position starts with a complete text decoded before, what is there is that text, whatever
follows. A line the walk does not expect (malformed JSON, a byte
order mark, anything unusual) is decoded by ``json.loads`` itself, so errors are the ones
it raises.

Walking costs Python work per element, more than ``json.loads`` on a line that nothing
before repeats; it is not paused there, as the shared values make every later stage cheaper
and an interleaved log opens with many first turns before its lines start to repeat
(``bench/audit.py``: a stamped log read and audited 2-3x faster than when walking paused).

Values returned for repeated text are shared between lines: callers must not mutate them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from prefixlint.sources.logs.base import JsonObject

PROBE = 128
"""Elements shorter than this are decoded every time; longer ones are found by their first
``PROBE`` characters."""
CANDIDATES = 4
"""Remembered elements per probe (the newest): more cost a comparison each on a miss."""
CAPACITY = 1 << 24
"""Characters of text remembered; past it the decoder forgets everything and
starts again."""
WALKED_OBJECT_DEPTH = 2
"""Objects nested at most this deep (the line itself is depth 0) are walked member by
member; deeper ones are decoded whole."""

_SPACE = re.compile(r"[ \t\n\r]*")
_BLANK = " \t\n\r"
# The C scanner ``json.loads`` runs: the value at a position and where it ends.
_scan: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder().scan_once  # type: ignore[attr-defined]  # set by __init__, absent from the stubs


class _Unexpected(Exception):
    """The walk met something it leaves to ``json.loads``."""


def _blank_end(text: str, pos: int) -> int:
    """Past the whitespace that starts at ``pos`` (``_SPACE`` also matches an empty run)."""
    match = _SPACE.match(text, pos)
    return match.end() if match is not None else pos


def _skip_blank(text: str, pos: int) -> int:
    """``pos``, or past the whitespace that starts there (tested first: usually none)."""
    return _blank_end(text, pos) if text[pos] in _BLANK else pos


def _after_element(text: str, pos: int, closer: str) -> tuple[bool, int]:
    """After an element of an object or array: ``(True, past the closer)`` at its end,
    else ``(False, the start of the next element)``."""
    pos = _skip_blank(text, pos)
    if text[pos] == closer:
        return True, pos + 1
    if text[pos] != ",":
        raise _Unexpected
    return False, _skip_blank(text, pos + 1)


class LineDecoder:
    """``json.loads`` for the lines of one log, sharing the values of repeated elements."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._capacity = capacity
        self._known: dict[str, list[tuple[str, Any]]] = {}
        self._following: dict[int, tuple[Any, str, tuple[Any, ...]]] = {}
        self._size = 0

    def __call__(self, text: str) -> Any:
        try:
            value, end = self._value(text, _blank_end(text, 0), 0)
            if _blank_end(text, end) != len(text):
                raise _Unexpected
        except (_Unexpected, ValueError, StopIteration, IndexError, RecursionError):
            value = json.loads(text)
        return value

    def _value(self, text: str, pos: int, depth: int) -> tuple[Any, int]:
        char = text[pos]
        if char == "{" and depth < WALKED_OBJECT_DEPTH:
            return self._object(text, pos, depth + 1)
        if char == "[":
            return self._array(text, pos)
        return _scan(text, pos)

    def _object(self, text: str, pos: int, depth: int) -> tuple[JsonObject, int]:
        result: dict[str, Any] = {}
        pos = _blank_end(text, pos + 1)
        if text[pos] == "}":
            return result, pos + 1
        while True:
            if text[pos] != '"':
                raise _Unexpected
            key, pos = _scan(text, pos)
            pos = _skip_blank(text, pos)
            if text[pos] != ":":
                raise _Unexpected
            value, pos = self._value(text, _skip_blank(text, pos + 1), depth)
            result[key] = value
            closed, pos = _after_element(text, pos, "}")
            if closed:
                return result, pos

    def _array(self, text: str, pos: int) -> tuple[list[Any], int]:
        """The array at ``pos``, from memory as far as its text was seen before."""
        start = pos
        recalled = self._recall(text, pos)
        if recalled is not None:
            return recalled
        result: list[Any] = []
        all_recalled = True
        anchor: tuple[Any, int, int] | None = None  # value, count and end of an element
        closed: tuple[int, int] | None = None  # count and end after an object, array or string
        pos = _blank_end(text, pos + 1)
        if text[pos] == "]":
            return result, pos + 1
        while True:
            first = text[pos]
            recalled = self._recall(text, pos) if first in "{[" else None
            if recalled is None:
                all_recalled = False
                value, pos = self._decoded(text, pos)
                result.append(value)
            else:
                value, pos = recalled
                result.append(value)
                anchor = (value, len(result), pos)
                follow = self._following.get(id(value))
                if follow is not None and follow[0] is value and text.startswith(follow[1], pos):
                    result.extend(follow[2])
                    pos += len(follow[1])
            if first in '{["':
                closed = (len(result), pos)
            ended, pos = _after_element(text, pos, "]")
            if ended:
                if all_recalled:
                    self._remember(text[start:pos], result)
                elif anchor is not None and closed is not None and closed[0] > anchor[1]:
                    value, count, end = anchor
                    self._follow(value, text[end : closed[1]], tuple(result[count : closed[0]]))
                return result, pos

    def _recall(self, text: str, pos: int) -> tuple[Any, int] | None:
        """The value whose remembered text starts at ``pos``, and where it ends."""
        for raw, value in self._known.get(text[pos : pos + PROBE], ()):
            if text.startswith(raw, pos):
                return value, pos + len(raw)
        return None

    def _decoded(self, text: str, pos: int) -> tuple[Any, int]:
        """The value at ``pos``, decoded; an object or array is remembered."""
        value, end = _scan(text, pos)
        if text[pos] in "{[":
            self._remember(text[pos:end], value)
        return value, end

    def _remember(self, raw: str, value: Any) -> None:
        """Remember an object or array by its text."""
        if not PROBE <= len(raw) <= self._capacity:
            return
        self._make_room(len(raw))
        entries = self._known.setdefault(raw[:PROBE], [])
        entries.insert(0, (raw, value))
        self._size += len(raw)
        if len(entries) > CANDIDATES:
            self._size -= len(entries.pop()[0])

    def _follow(self, element: Any, raw: str, values: tuple[Any, ...]) -> None:
        """Remember the text and values that followed ``element`` up to the end of an array
        (its last element an object, array or string, which closes the text)."""
        if len(raw) > self._capacity:
            return
        self._make_room(len(raw))
        before = self._following.get(id(element))
        if before is not None:
            self._size -= len(before[1])
        self._following[id(element)] = (element, raw, values)
        self._size += len(raw)

    def _make_room(self, size: int) -> None:
        if self._size + size > self._capacity:
            self._known.clear()
            self._following.clear()
            self._size = 0
