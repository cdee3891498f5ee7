"""PFX103 in Python: a value that differs per user reaches a request prefix."""

from __future__ import annotations

from prefixlint.pyflow.relocate import relocate
from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.pyflow.tables import PER_USER
from prefixlint.registry import register


@register(PER_USER, "python")
def check(document, ctx):
    return prefix_diagnostics(document, PER_USER, lambda reach: relocate(document, reach))
