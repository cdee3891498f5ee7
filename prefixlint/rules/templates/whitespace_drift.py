"""PFX402 in templates: trailing whitespace, and blank-line separators that drift.

Trailing spaces are invisible and editors strip them on save, so the prompt's bytes (and its
cached prefix) change with whoever touched the file last; the safe fix removes them. Sections
(Markdown headings, ``<TAG>`` lines) separated by different numbers of blank lines are the
same drift waiting to happen: code that assembles or reformats the prompt normalises them, and
``\\n\\n`` and ``\\n\\n\\n`` are different tokens. That is reported with a display-only fix,
since which separator is right is the author's choice.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from prefixlint import registry
from prefixlint.context import RuleContext
from prefixlint.sources.templates import TemplateDocument
from prefixlint.types import Applicability, Diagnostic

CODE = "PFX402"
_SECTION_START = re.compile(r"#{1,6} \S|<[A-Za-z_][\w-]*>\s*$")
_MIN_SECTIONS = 3


@registry.register(CODE, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    yield from _trailing_whitespace(document)
    yield from _separator_drift(document)


def _lines(text: str) -> Iterator[tuple[int, int]]:
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


def _trailing_whitespace(document: TemplateDocument) -> Iterator[Diagnostic]:
    text = document.text
    static = document.parsed.static
    for start, end in _lines(text):
        stripped = len(text[start:end].rstrip(" \t"))
        if start + stripped == end or not static.is_literal(start + stripped, end):
            continue
        change = [(start + stripped, end, "")]
        fix = document.fix(change, Applicability.SAFE, "Remove trailing whitespace")
        yield registry.diagnostic(
            CODE,
            "trailing whitespace: invisible bytes that editors strip, changing the prompt",
            document.span(start + stripped, end),
            fix=fix,
        )


def _separator_drift(document: TemplateDocument) -> Iterator[Diagnostic]:
    text = document.text
    blank_run, blank_start, seen_content = 0, 0, False
    boundaries: list[tuple[int, int, int]] = []  # section line start, blank lines, gap start
    for start, end in _lines(text):
        if not text[start:end].strip():
            blank_start = start if blank_run == 0 else blank_start
            blank_run += 1
            continue
        is_section = _SECTION_START.match(text, start, end) is not None
        if seen_content and is_section and blank_run and document.block_depth(start) == 0:
            boundaries.append((start, blank_run, blank_start))
        seen_content, blank_run = True, 0
    if len(boundaries) < _MIN_SECTIONS:
        return
    counts = Counter(blank for _, blank, _ in boundaries)
    usual, usual_count = counts.most_common(1)[0]
    if usual_count * 2 <= len(boundaries):
        return
    for start, blank, gap_start in boundaries:
        if blank == usual:
            continue
        change = [(gap_start, start, "\n" * usual)]
        fix = document.fix(change, Applicability.DISPLAY_ONLY, f"Use {usual} blank line(s) here")
        yield registry.diagnostic(
            CODE,
            f"{blank} blank line(s) before this section but {usual} before {usual_count} others:"
            " separators drift when the prompt is reassembled or reformatted",
            document.span(start, document.line_bounds(start)[1] - 1),
            fix=fix,
        )
