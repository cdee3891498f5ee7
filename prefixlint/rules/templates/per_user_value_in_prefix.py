"""PFX103 in templates: a per-user value (`{{ user.name }}`, `{{ locale }}`) in a shared prefix."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import codes
from prefixlint.context import RuleContext
from prefixlint.registry import register
from prefixlint.rules.templates.volatile import volatile_findings
from prefixlint.sources.templates import TemplateDocument
from prefixlint.types import Diagnostic


@register(codes.PER_USER, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return volatile_findings(document, ctx, codes.PER_USER)
