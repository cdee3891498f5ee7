"""PFX201 in Python: an unordered collection feeds tool definitions or prompt text."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint.codes import UNORDERED
from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.fixers import sort_collection
from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.registry import register
from prefixlint.types import Diagnostic

# How the value this rule finds changes, in its message.
CHANGE = "comes out in a different order between runs"


@register(UNORDERED, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return prefix_diagnostics(
        document, UNORDERED, CHANGE, lambda reach: sort_collection(document, reach)
    )
