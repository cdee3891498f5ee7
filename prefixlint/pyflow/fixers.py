"""The fixes the python rules offer, loaded on first use: rendering a fix needs libcst
(:mod:`prefixlint.pyflow.fixes`, :mod:`prefixlint.pyflow.relocate`), which a check that finds
nothing to fix never imports."""

from __future__ import annotations

import ast

from prefixlint.pyflow.analysis import Reach
from prefixlint.pyflow.document import PythonDocument
from prefixlint.types import Fix


def relocate(document: PythonDocument, reach: Reach) -> Fix | None:
    """The volatile line moved from the system prompt to the last user message."""
    from prefixlint.pyflow import relocate as moving

    return moving.relocate(document, reach)


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
