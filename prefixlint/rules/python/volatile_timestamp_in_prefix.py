"""PFX101 in Python: a clock reading reaches a request prefix."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from prefixlint.codes import TIMESTAMP
from prefixlint.context import RuleContext
from prefixlint.pyflow import fixers
from prefixlint.pyflow.analysis import Reach
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.pyflow.tables import DAILY, INSTANT, PROCESS
from prefixlint.registry import register
from prefixlint.types import Diagnostic, Fix, Severity


def _fix(document: PythonDocument, reach: Reach) -> Fix | None:
    """Move the line to the last user message; failing that, keep only the date."""
    moved = fixers.relocate(document, reach)
    if moved is not None or reach.origin.granularity != INSTANT:
        return moved
    if not isinstance(reach.origin.node, ast.Call):
        return None  # a template's field: the value is filled in elsewhere
    return fixers.coarsen_to_date(document, reach.origin.node)


# How a reading of the clock changes, by its granularity, in the message.
_CHANGES = {
    INSTANT: "changes on every call",
    DAILY: "changes once a day",
    PROCESS: "changes between calls",
}


def _change(reach: Reach) -> str:
    return _CHANGES.get(reach.origin.granularity or INSTANT, _CHANGES[INSTANT])


def _severity(reach: Reach) -> Severity | None:
    """A date changes once a day: most requests still share the prefix, so a warning."""
    return Severity.WARNING if reach.origin.granularity == DAILY else None


@register(TIMESTAMP, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return prefix_diagnostics(
        document, TIMESTAMP, _change, lambda reach: _fix(document, reach), _severity
    )
