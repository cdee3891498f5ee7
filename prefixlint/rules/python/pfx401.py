"""PFX401 in Python: os.linesep (CRLF on Windows) reaches a request prefix."""

from __future__ import annotations

from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.pyflow.tables import LINE_ENDINGS
from prefixlint.registry import register


@register(LINE_ENDINGS, "python")
def check(document, ctx):
    return prefix_diagnostics(document, LINE_ENDINGS)
