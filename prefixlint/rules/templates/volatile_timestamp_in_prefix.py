"""PFX101 in templates: the current date or time in the stable part of the prompt.

A placeholder that names or computes a time (`{{ runtime_info.date }}`, `{{ now() | date }}`,
`strftime_now(...)`), or a pasted current-date line (`Today's date is 2026-11-29`).
"""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import codes
from prefixlint.context import RuleContext
from prefixlint.registry import register
from prefixlint.rules.templates.volatile import volatile_findings
from prefixlint.sources.templates import TemplateDocument
from prefixlint.types import Diagnostic


@register(codes.TIMESTAMP, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return volatile_findings(document, ctx, codes.TIMESTAMP)
