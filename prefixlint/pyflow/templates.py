"""``str.format`` templates in Python string literals: their fields, and where one is written."""

from __future__ import annotations

import re

from prefixlint.types import Span

# A replacement field: ``{question}``, ``{doc.title!r}``, ``{n:>4}`` (``{{`` is a brace).
FIELD = re.compile(r"\{([A-Za-z_][\w.]*)(?:![rsa])?(?::[^{}]*)?\}")


def masked(text: str) -> str:
    """``text`` with escaped braces (``{{``, ``}}``) blanked, so they never read as fields."""
    return text.replace("{{", "\0\0").replace("}}", "\0\0")


def template_fields(text: str) -> list[str]:
    """The field names of a template, in order."""
    return [match.group(1) for match in FIELD.finditer(masked(text))]


def static_part(text: str) -> str:
    """The text of a template piece without its fields."""
    return FIELD.sub("", text).replace("\0", "")


def span_within(whole: Span, raw: str, piece: str) -> Span:
    """Where ``piece`` is first written in ``raw``, the source of the literal at ``whole``."""
    index = raw.find(piece)
    if index < 0:
        return whole
    line_start = raw.rfind("\n", 0, index) + 1
    line = whole.line + raw.count("\n", 0, index)
    column = index - line_start + 1 + (whole.column - 1 if line == whole.line else 0)
    return Span(whole.path, line, column, line, column + len(piece))
