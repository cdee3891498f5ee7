"""PFX102 in Python: a unique id or random number reaches a request prefix."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint.codes import UNIQUE_ID
from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.fixers import relocate
from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.registry import register
from prefixlint.types import Diagnostic

# How the value this rule finds changes, in its message.
CHANGE = "is new on every call"


@register(UNIQUE_ID, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return prefix_diagnostics(document, UNIQUE_ID, CHANGE, lambda reach: relocate(document, reach))
