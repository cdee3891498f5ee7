"""PFX102 in templates: a unique id or random value (`{{ request_id }}`, `{{ uuid }}`)."""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import codes
from prefixlint.context import RuleContext
from prefixlint.registry import register
from prefixlint.rules.templates.volatile import volatile_findings
from prefixlint.sources.templates import TemplateDocument
from prefixlint.types import Diagnostic


@register(codes.UNIQUE_ID, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return volatile_findings(document, ctx, codes.UNIQUE_ID)
