"""PFX402 in Python: the same prompt text gets different whitespace on different paths."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint.codes import WHITESPACE_DRIFT
from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.registry import register
from prefixlint.types import Diagnostic

# How the value this rule finds changes, in its message.
CHANGE = "puts different whitespace in the same text on different paths"


@register(WHITESPACE_DRIFT, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return prefix_diagnostics(document, WHITESPACE_DRIFT, CHANGE)
