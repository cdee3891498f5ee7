"""PFX201 in templates: a loop over a collection documented as unordered (a set, a registry)."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.rules.templates.loop_order import order_findings
from prefixlint.sources.templates import TemplateDocument
from prefixlint.types import Diagnostic


@registry.register(codes.UNORDERED, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return order_findings(document, ctx, codes.UNORDERED)
