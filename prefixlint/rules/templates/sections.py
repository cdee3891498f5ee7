"""Where the sections of a prompt template start: Markdown headings and ``<TAG>`` lines.

Prompts are cut into sections by headings (``## Rules``) or by lines that open a tag block
(``<RUNTIME_INFO>``); lines inside a fenced code block (a ``# comment`` in a shell example)
never start one. A template without sections is cut into paragraphs at blank lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

_SECTION_START = re.compile(r"(#{1,6})[ \t]+\S|[ \t]*<[A-Za-z_][\w-]*(?:\s[^<>]*)?>[ \t]*$")
_FENCE = re.compile(r"[ \t]*(```|~~~)")


def lines(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of each line's content (without ``\\r\\n``)."""
    start = 0
    while start <= len(text):
        newline = text.find("\n", start)
        end = len(text) if newline == -1 else newline
        content_end = end - 1 if end > start and text[end - 1] == "\r" else end
        yield start, content_end
        if newline == -1:
            return
        start = newline + 1


def section_lines(text: str) -> Iterator[tuple[int, int, str | None]]:
    """Each line's ``(start, end)`` and the kind of section it starts: ``#``, ``##``, ... for
    a heading, ``<>`` for a tag line, ``None`` for other lines."""
    fence = None
    for start, end in lines(text):
        line = text[start:end]
        opened = _FENCE.match(line)
        if opened and (fence is None or opened.group(1) == fence):
            fence = opened.group(1) if fence is None else None
            yield start, end, None
            continue
        match = None if fence else _SECTION_START.match(line)
        yield start, end, (match.group(1) or "<>") if match else None


def last_section_start(text: str, limit: int) -> int:
    """Start of the last section that begins before ``limit`` (0 when there is only one).

    Headings and tag lines cut sections when the text has any; otherwise a line that follows a
    blank line starts a paragraph.
    """
    headings, paragraphs, after_blank = [], [], False
    for start, end, kind in section_lines(text[:limit]):
        if not text[start:end].strip():
            after_blank = True
            continue
        if kind is not None:
            headings.append(start)
        if after_blank:
            paragraphs.append(start)
        after_blank = False
    starts = headings or paragraphs
    return starts[-1] if starts else 0


def headings(text: str) -> list[tuple[int, str]]:
    """``(start, title)`` of each Markdown heading (outside fenced code), in order."""
    return [
        (start, text[start:end].lstrip("#").strip())
        for start, end, kind in section_lines(text)
        if kind is not None and kind.startswith("#")
    ]
