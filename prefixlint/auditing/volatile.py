"""Values that change between requests: dates and times, ids, e-mail addresses, and labelled
per-user values.

Shared by the miss attribution (is the first differing character inside such a value?) and
the what-if canonicaliser (move such values out of the stable part of the prompt).

Every pattern stays within one line, so a text's values are its lines' values, and each
distinct line is scanned once (remembered, bounded): a system prompt that gains a new
``Current date and time`` line on every request costs one line's scan per request, not the
whole prompt's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from prefixlint import codes, vocabulary

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_WEEKDAY = r"(?:Mon|Tues?|Wed(?:nes)?|Thu(?:rs)?|Fri|Sat(?:ur)?|Sun)(?:day)?"
_TIME = r"\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[ \t]?[AaPp]\.?[Mm]\.?)?"
_ZONE = r"(?:[ \t]?(?:Z|[+-]\d{2}:?\d{2}|UTC|GMT|[ECMP][SD]T))?"
DATE_TIME = re.compile(
    "|".join(
        [
            rf"\b\d{{4}}-\d{{2}}-\d{{2}}(?:[T ]{_TIME})?{_ZONE}",
            r"\b\d{4}/\d{1,2}/\d{1,2}\b",
            r"\b\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b",
            rf"\b(?:{_WEEKDAY},?[ \t]+)?{_MONTH}\.?[ \t]+\d{{1,2}}(?:st|nd|rd|th)?"
            rf"(?:,?[ \t]+\d{{4}})?\b",
            rf"\b(?:{_WEEKDAY},?[ \t]+)?\d{{1,2}}[ \t]+{_MONTH}\.?(?:,?[ \t]+\d{{4}})?\b",
            rf"\b{_WEEKDAY}\b",
            rf"\b{_TIME}{_ZONE}",
            r"\b1[5-9]\d{8}(?:\d{3})?\b",
        ]
    )
)
UNIQUE_ID = re.compile(
    "|".join(
        [
            r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b",
            # 8+ letters, digits, - or _ with at least three digits and a letter: req_8fJ2kL9x.
            r"\b(?=(?:[\w-]*?\d){3})(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{7,}\b",
            r"\b\d{6,}\b",
        ]
    )
)
# An e-mail address names the person the request is for.
EMAIL = re.compile(r"\b[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+\b")
# "label: value", "label = value" (optionally quoted, as in JSON) or, in prose, "label is
# value" (``The user's name is Dana``), value up to the end of its sentence or line (a dot
# followed by a space ends it; ``v1.2.3`` does not).
_LABELLED = re.compile(
    r"""["']?(?P<label>[A-Za-z][\w .'\u2019-]{0,40}?)["']?"""
    r"""(?:[ \t]*[:=][ \t]*|[ \t]+(?:is|are)[ \t]+)["']?"""
    r"""(?P<value>(?:[^\n"',;.]|\.(?=\S))*[^\s"',;.])"""
)


@dataclass(frozen=True)
class VolatileValue:
    """A span of text whose value is expected to change: ``code`` says what kind."""

    code: str
    start: int
    end: int


def find_values(text: str) -> Iterator[VolatileValue]:
    """Every date/time, id, e-mail address and labelled volatile value in ``text``, in order
    of start."""
    offset = 0
    for line in text.split("\n"):
        for code, start, end in _line_values(line):
            yield VolatileValue(code, offset + start, offset + end)
        offset += len(line) + 1


@lru_cache(maxsize=65_536)
def _line_values(line: str) -> tuple[tuple[str, int, int], ...]:
    """The values of one line as ``(code, start, end)``, in order of start (widest first)."""
    found = [
        (code, m.start(), m.end())
        for code, pattern in (
            (codes.TIMESTAMP, DATE_TIME),
            (codes.UNIQUE_ID, UNIQUE_ID),
            (codes.PER_USER, EMAIL),
        )
        for m in pattern.finditer(line)
    ]
    for match in _LABELLED.finditer(line):
        code = vocabulary.classify_name(match.group("label"))
        if code:
            found.append((code, match.start("value"), match.end("value")))
    return tuple(sorted(found, key=lambda v: (v[1], -v[2])))


def value_at(text: str, offset: int) -> VolatileValue | None:
    """The widest volatile value that covers ``offset`` (or ends right at it), if any.

    Values lie within a line, so only the line holding ``offset`` is looked at."""
    first = text.rfind("\n", 0, offset) + 1
    last = text.find("\n", offset)
    best = None
    for code, start, end in _line_values(text[first : len(text) if last < 0 else last]):
        start, end = first + start, first + end
        covers = start <= offset <= end and start < end
        if covers and (best is None or end - start > best.end - best.start):
            best = VolatileValue(code, start, end)
    return best


@lru_cache(maxsize=4096)
def without_values(text: str) -> tuple[str, tuple[str, ...]]:
    """``text`` with its date/time and id values removed (labelled ones too), and the values.

    Overlapping values are merged, so every character is removed at most once. Remembered
    per text: system prompts and tool descriptions repeat on every request.
    """
    kept, removed, position = [], [], 0
    for value in find_values(text):
        start = max(value.start, position)
        if start >= value.end:
            continue
        kept.append(text[position:start])
        removed.append(text[start : value.end])
        position = value.end
    kept.append(text[position:])
    return "".join(kept), tuple(removed)
