"""Small readings of ``ast`` nodes shared by the analyses: a call's arguments in order, the
value of a string literal, the index or slice of a subscript."""

from __future__ import annotations

import ast
from typing import NamedTuple


class Arg(NamedTuple):
    """One argument of a call: ``keyword`` is ``None`` for a positional one, ``star`` is
    ``"*"`` or ``"**"`` for an unpacked one, and ``value`` is the expression passed."""

    keyword: str | None
    star: str
    value: ast.expr


def arguments(call: ast.Call) -> list[Arg]:
    """The arguments of ``call``: the positional ones, then the keywords."""
    found = [
        Arg(None, "*", a.value) if isinstance(a, ast.Starred) else Arg(None, "", a)
        for a in call.args
    ]
    found += [Arg(k.arg, "" if k.arg else "**", k.value) for k in call.keywords]
    return found


def positional(call: ast.Call) -> list[ast.expr]:
    """The positional arguments that are not unpacked (``*args``)."""
    return [a for a in call.args if not isinstance(a, ast.Starred)]


def positional_at(call: ast.Call, index: int) -> ast.expr | None:
    """The ``index``-th positional argument that is not unpacked, if there is one."""
    args = positional(call)
    return args[index] if len(args) > index else None


def keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def string_value(node: ast.AST | None) -> str | None:
    """The text of a string literal (implicit concatenations are one literal)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def index_of(node: ast.Subscript) -> ast.expr | None:
    """The one index of ``node[index]`` (not a slice, nor several indices)."""
    index = node.slice
    return None if isinstance(index, (ast.Slice, ast.Tuple)) else index


def slice_of(node: ast.Subscript) -> ast.Slice | None:
    """The slice of ``node[lower:upper]``."""
    return node.slice if isinstance(node.slice, ast.Slice) else None


def leaf(node: ast.AST) -> str | None:
    """The last name of a name or attribute: ``c`` of ``a.b.c`` and of ``c``."""
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for names and attributes, ``f()`` for a call of one."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, ast.Call):
        base = dotted(node.func)
        return f"{base}()" if base else None
    return None


def callee(func: ast.expr) -> str:
    """The called name: ``c`` of ``a.b.c(...)`` and of ``c(...)``; ``""`` otherwise."""
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def integer(node: ast.AST | None) -> int | None:
    """The value of an integer literal, negated or not."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = integer(node.operand)
        return -inner if inner is not None and not _negated(node.operand) else None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _negated(node: ast.AST) -> bool:
    return isinstance(node, ast.UnaryOp)
