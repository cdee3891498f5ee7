"""PFX104 in Python: a snapshot of the machine, process or repository reaches a request prefix."""

from __future__ import annotations

from prefixlint.pyflow.relocate import relocate
from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.pyflow.tables import ENVIRONMENT
from prefixlint.registry import register


@register(ENVIRONMENT, "python")
def check(document, ctx):
    return prefix_diagnostics(document, ENVIRONMENT, lambda reach: relocate(document, reach))
