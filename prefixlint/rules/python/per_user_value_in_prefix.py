"""PFX103 in Python: a value that differs per user reaches a request prefix."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint.codes import PER_USER
from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.fixers import relocate
from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.registry import register
from prefixlint.types import Diagnostic

# How the value this rule finds changes, in its message.
CHANGE = "differs per user"


@register(PER_USER, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return prefix_diagnostics(document, PER_USER, CHANGE, lambda reach: relocate(document, reach))
