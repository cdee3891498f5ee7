"""PFX502 in Python: see `rules/PFX502.toml`; the patterns are in `prefixlint.pyflow.history`."""

from __future__ import annotations

from prefixlint import registry
from prefixlint.pyflow.history import WINDOW, history_edits


@registry.register(WINDOW, "python")
def check(document, ctx):
    for edit in history_edits(document):
        if edit.code == WINDOW:
            yield registry.diagnostic(WINDOW, edit.message, document.span(edit.node))
