"""PFX102 in Python: a unique id or random number reaches a request prefix."""

from __future__ import annotations

from prefixlint.pyflow.relocate import relocate
from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.pyflow.tables import UNIQUE_ID
from prefixlint.registry import register


@register(UNIQUE_ID, "python")
def check(document, ctx):
    return prefix_diagnostics(document, UNIQUE_ID, lambda reach: relocate(document, reach))
