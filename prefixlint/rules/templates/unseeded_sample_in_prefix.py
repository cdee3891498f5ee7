"""PFX203 in templates: items shuffled or sampled at random (`{% for x in xs | shuffle %}`)."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.rules.templates.loop_order import order_findings
from prefixlint.sources.templates import TemplateDocument
from prefixlint.types import Diagnostic


@registry.register(codes.RANDOM_SELECTION, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return order_findings(document, ctx, codes.RANDOM_SELECTION)
