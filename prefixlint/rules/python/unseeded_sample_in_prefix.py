"""PFX203 in Python: examples or documents are shuffled or sampled without a seed."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint.codes import RANDOM_SELECTION
from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.registry import register
from prefixlint.types import Diagnostic

# How the value this rule finds changes, in its message.
CHANGE = "picks or orders items differently on every call"


@register(RANDOM_SELECTION, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return prefix_diagnostics(document, RANDOM_SELECTION, CHANGE)
