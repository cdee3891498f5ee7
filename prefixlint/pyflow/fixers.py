"""The fixes the python rules offer, loaded on first use: rendering a fix needs libcst
(:mod:`prefixlint.pyflow.fixes`, :mod:`prefixlint.pyflow.relocate`), which a check that finds
nothing to fix never imports."""

from __future__ import annotations

import ast

from prefixlint.pyflow.analysis import Reach
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.prompt_words import SYSTEM
from prefixlint.types import Fix


def relocate(document: PythonDocument, reach: Reach) -> Fix | None:
    """The volatile line moved from the system prompt to the last user message."""
    site = relocation_site(document, reach)
    if site is None:
        return None
    from prefixlint.pyflow import relocate as moving

    return moving.relocate(document, reach, *site)


def relocation_site(
    document: PythonDocument, reach: Reach
) -> tuple[ast.FormattedValue, ast.JoinedStr] | None:
    """The f-string field holding the value, and the system prompt f-string it is in, where
    the line can move to the last user message of the same request."""
    sink = reach.sink
    if sink.region != SYSTEM or sink.last_user is None:
        return None
    found = next(
        (a for a in document.ancestors(reach.origin.node) if isinstance(a, ast.FormattedValue)),
        None,
    )
    joined = _system_fstring(document, found, sink.expr) if found is not None else None
    return (found, joined) if found is not None and joined is not None else None


def _system_fstring(
    document: PythonDocument, hole: ast.FormattedValue, sink_expr: ast.expr
) -> ast.JoinedStr | None:
    """The f-string holding ``hole``, if it is the sink's value used at this sink only.

    The sink may name it through single-use names (``system = SYSTEM_PROMPT``), so changing
    it changes no other request.
    """
    fstring = document.parent(hole)
    if not isinstance(fstring, ast.JoinedStr):
        return None
    value = sink_expr
    for _ in range(4):
        if value is fstring:
            return fstring
        if not isinstance(value, ast.Name):
            return None
        assignments = document.assignments(value)
        if len(assignments) != 1 or document.references(assignments[0]) != 1:
            return None
        target = assignments[0].node  # a builtin is bound nowhere in the file
        statement = document.parent(target) if isinstance(target, ast.Name) else None
        if not isinstance(statement, ast.Assign) or statement.targets != [target]:
            return None
        value = statement.value
    return None


def sort_collection(document: PythonDocument, reach: Reach) -> Fix | None:
    """``sorted(...)`` around the collection where it is first iterated."""
    from prefixlint.pyflow import fixes

    return fixes.sort_collection(document, reach.origin)


def sort_keys(document: PythonDocument, call: ast.Call) -> Fix | None:
    """``sort_keys=True`` passed to ``json.dumps``."""
    from prefixlint.pyflow import fixes

    return fixes.sort_keys(document, call)


def coarsen_to_date(document: PythonDocument, call: ast.Call) -> Fix | None:
    """Only the date of ``datetime.now()``."""
    from prefixlint.pyflow import fixes

    return fixes.coarsen_to_date(document, call)
