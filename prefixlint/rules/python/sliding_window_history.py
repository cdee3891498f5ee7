"""PFX502 in Python: see `rules/PFX502.toml`; the patterns are in `prefixlint.pyflow.history`."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import registry
from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.history import WINDOW, history_edits
from prefixlint.types import Diagnostic


@registry.register(WINDOW, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    for edit in history_edits(document):
        if edit.code == WINDOW:
            yield registry.diagnostic(WINDOW, edit.message, document.span(edit.node))
