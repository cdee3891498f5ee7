"""Texts that say the same thing with different whitespace (``"\\n"`` on one path, ``"\\n\\n"``
on another, ``"\\r\\n".join`` against ``"\\n".join``, a trailing space, ``textwrap.dedent`` on
one path only): each path caches its own prefix, and switching paths loses it."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Iterable

_SPACE = re.compile(r"\s+")
# Calls and methods that change only the whitespace of the text they are given.
_REFLOWS: dict[str, Callable[[str], str]] = {
    "dedent": textwrap.dedent,
    "cleandoc": inspect.cleandoc,
}
_STRIPS: dict[str, Callable[[str], str]] = {
    "strip": str.strip,
    "lstrip": str.lstrip,
    "rstrip": str.rstrip,
}


def _code(node: ast.expr) -> str:
    return "\0" + ast.unparse(node) + "\0"


Resolve = Callable[[ast.Name], ast.expr | None]


def _unresolved(name: ast.Name) -> ast.expr | None:
    return None


def shape(
    node: ast.expr, hole: Callable[[ast.expr], str] = _code, resolve: Resolve = _unresolved
) -> str | None:
    """The text ``node`` makes, its values written by ``hole``: a literal, an f-string, a
    ``+`` of those and values, ``"sep".join(items)``, ``textwrap.dedent(text)`` or
    ``text.strip()``, or a name ``resolve`` gives the text of; ``None`` for any other
    expression."""
    if isinstance(node, ast.Name):
        value = resolve(node)
        return shape(value, hole, resolve) if value is not None else None
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                parts.append(part.value)
            elif isinstance(part, ast.FormattedValue):
                parts.append(hole(part.value))
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _part(node.left, hole, resolve), _part(node.right, hole, resolve)
        if left is None or right is None:
            return None
        return left + right
    if isinstance(node, ast.Call) and not node.keywords:
        return _called(node, hole, resolve)
    return None


def _part(node: ast.expr, hole: Callable[[ast.expr], str], resolve: Resolve) -> str | None:
    """An operand of ``+``: its text, or the hole of a name or call that is no text."""
    text = shape(node, hole, resolve)
    if text is not None:
        return text
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
        return hole(node)
    return None


def _called(node: ast.Call, hole: Callable[[ast.expr], str], resolve: Resolve) -> str | None:
    """``dedent(text)``, ``text.strip()`` or ``"sep".join(items)``."""
    func, given = node.func, node.args
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    if name in _REFLOWS and len(given) == 1:
        text = shape(given[0], hole, resolve)
        return _REFLOWS[name](text) if text is not None else None
    if not isinstance(func, ast.Attribute):
        return None
    receiver = shape(func.value, hole, resolve)
    if receiver is None:
        return None
    if name in _STRIPS and not given:
        return _STRIPS[name](receiver)
    if name == "join" and len(given) == 1 and isinstance(func.value, ast.Constant):
        return receiver + hole(given[0])
    return None


def whitespace_drift(values: Iterable[ast.expr], resolve: Resolve = _unresolved) -> bool:
    """Every value has a shape, and they differ only in whitespace."""
    shapes = [shape(value, resolve=resolve) for value in values]
    texts = [text for text in shapes if text is not None]
    if len(texts) < len(shapes) or len(set(texts)) < 2:
        return False
    return len({_SPACE.sub("", text) for text in texts}) == 1
