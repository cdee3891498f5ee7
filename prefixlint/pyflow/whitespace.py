"""Texts that say the same thing with different whitespace (``"\\n"`` on one path, ``"\\n\\n"``
on another): each path caches its own prefix, and switching paths loses it."""

from __future__ import annotations

import ast
import re

_SPACE = re.compile(r"\s+")


def _shape(node: ast.expr) -> str | None:
    """The text of a literal, with an f-string's holes written as their code."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append(part.value)
            elif isinstance(part, ast.FormattedValue):
                parts.append("\0" + ast.unparse(part.value) + "\0")
        return "".join(parts)
    return None


def whitespace_drift(values: list[ast.expr]) -> bool:
    """Every value is a literal, and they differ only in whitespace."""
    shapes = [_shape(value) for value in values]
    texts = [shape for shape in shapes if shape is not None]
    if len(texts) < len(shapes) or len(set(texts)) < 2:
        return False
    return len({_SPACE.sub("", text) for text in texts}) == 1
