"""PFX502 in Python: see `rules/PFX502.toml`; the patterns are in `prefixlint.pyflow.history`."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import registry
from prefixlint.codes import SLIDING_WINDOW
from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.history import history_edits
from prefixlint.types import Diagnostic


@registry.register(SLIDING_WINDOW, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    for edit in history_edits(document):
        if edit.code == SLIDING_WINDOW:
            yield registry.diagnostic(SLIDING_WINDOW, edit.message, document.span(edit.node))
