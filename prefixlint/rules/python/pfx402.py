"""PFX402 in Python: the same prompt text gets different whitespace on different paths."""

from __future__ import annotations

from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.pyflow.tables import WHITESPACE_DRIFT
from prefixlint.registry import register


@register(WHITESPACE_DRIFT, "python")
def check(document, ctx):
    return prefix_diagnostics(document, WHITESPACE_DRIFT)
