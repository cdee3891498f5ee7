"""PFX401 in Python: os.linesep (CRLF on Windows) reaches a request prefix."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint.codes import LINE_ENDINGS
from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.registry import register
from prefixlint.types import Diagnostic

# How the value this rule finds changes, in its message.
CHANGE = "is \\r\\n on Windows and \\n elsewhere"


@register(LINE_ENDINGS, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return prefix_diagnostics(document, LINE_ENDINGS, CHANGE)
