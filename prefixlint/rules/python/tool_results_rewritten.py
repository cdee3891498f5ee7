"""PFX504 in Python: see `rules/PFX504.toml`; the patterns are in `prefixlint.pyflow.history`."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import registry
from prefixlint.codes import TOOL_OUTPUT
from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.history import history_edits
from prefixlint.types import Diagnostic


@registry.register(TOOL_OUTPUT, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    for edit in history_edits(document):
        if edit.code == TOOL_OUTPUT:
            yield registry.diagnostic(TOOL_OUTPUT, edit.message, document.span(edit.node))
