"""PFX501 in Python: see `rules/PFX501.toml`; the patterns are in `prefixlint.pyflow.history`."""

from __future__ import annotations

from prefixlint import registry
from prefixlint.pyflow.history import EDIT, history_edits


@registry.register(EDIT, "python")
def check(document, ctx):
    for edit in history_edits(document):
        if edit.code == EDIT:
            yield registry.diagnostic(EDIT, edit.message, document.span(edit.node))
