"""PFX203 in Python: examples or documents are shuffled or sampled without a seed."""

from __future__ import annotations

from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.pyflow.tables import RANDOM_SELECTION
from prefixlint.registry import register


@register(RANDOM_SELECTION, "python")
def check(document, ctx):
    return prefix_diagnostics(document, RANDOM_SELECTION)
