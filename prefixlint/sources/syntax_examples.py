"""Placeholders that a prompt shows as examples of a template language's syntax.

A prompt that documents a template language writes its placeholders in code spans: "Holes
are dotted lookups only (`{{ user.name }}`, `{{ $index }}`, literals like `{{ true }}`)". A
paragraph whose code spans include a placeholder holding a literal (`{{ true }}`, `{{ 0 }}`,
`{{ "x" }}`), which no prompt has a reason to fill, documents the syntax: each code span of
that paragraph that starts with a placeholder is an example, not a value.
"""

from __future__ import annotations

import re

_LITERAL_SPAN = re.compile(
    r"`\{\{[ \t]*(?:true|false|null|none|-?\d+(?:\.\d+)?|'[^'`\n]*'|\"[^\"`\n]*\")[ \t]*\}\}`",
    re.IGNORECASE,
)
_SPAN = re.compile(r"(?<![\\`])`(?=\{\{)[^`\n]+`(?!`)")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def example_spans(text: str) -> list[tuple[int, int]]:
    """Sorted, disjoint ``(start, end)`` of the code spans that show syntax examples."""
    if "`{{" not in text:
        return []
    spans: set[tuple[int, int]] = set()
    for literal in _LITERAL_SPAN.finditer(text):
        breaks = [m.end() for m in _PARAGRAPH_BREAK.finditer(text, 0, literal.start())]
        start = breaks[-1] if breaks else 0
        after = _PARAGRAPH_BREAK.search(text, literal.end())
        end = after.start() if after else len(text)
        spans.update(span.span() for span in _SPAN.finditer(text, start, end))
    return sorted(spans)
