"""Texts that say the same thing with different whitespace (``"\\n"`` on one path, ``"\\n\\n"``
on another): each path caches its own prefix, and switching paths loses it."""

from __future__ import annotations

import re

import libcst as cst

_SPACE = re.compile(r"\s+")


def _shape(node: cst.BaseExpression) -> str | None:
    """The text of a literal, with an f-string's holes written as their code."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(node, cst.FormattedString):
        parts = []
        for part in node.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append(part.value)
            elif isinstance(part, cst.FormattedStringExpression):
                parts.append("\0" + cst.Module([]).code_for_node(part.expression) + "\0")
        return "".join(parts)
    return None


def whitespace_drift(values: list[cst.BaseExpression]) -> bool:
    """Every value is a literal, and they differ only in whitespace."""
    shapes = [_shape(value) for value in values]
    texts = [shape for shape in shapes if shape is not None]
    if len(texts) < len(shapes) or len(set(texts)) < 2:
        return False
    return len({_SPACE.sub("", text) for text in texts}) == 1
