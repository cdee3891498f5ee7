"""PFX104 in Python: a snapshot of the machine, process or repository reaches a request prefix."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint.codes import ENVIRONMENT
from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.fixers import relocate
from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.registry import register
from prefixlint.types import Diagnostic

# How the value this rule finds changes, in its message.
CHANGE = "differs per machine, process or checkout"


@register(ENVIRONMENT, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return prefix_diagnostics(
        document, ENVIRONMENT, CHANGE, lambda reach: relocate(document, reach)
    )
