"""PFX501 in Python: see `rules/PFX501.toml`; the patterns are in `prefixlint.pyflow.history`."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import registry
from prefixlint.codes import HISTORY_EDIT
from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.history import history_edits
from prefixlint.types import Diagnostic


@registry.register(HISTORY_EDIT, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    for edit in history_edits(document):
        if edit.code == HISTORY_EDIT:
            yield registry.diagnostic(HISTORY_EDIT, edit.message, document.span(edit.node))
