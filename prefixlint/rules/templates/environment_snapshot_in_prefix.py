"""PFX104 in templates: a snapshot of the machine or repository.

For example `{{ cwd }}`, `{{ git_status }}`, `{{ file_tree }}`, or the output of a command a
command file runs when it is used (`` !`git status` ``).
"""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import codes
from prefixlint.context import RuleContext
from prefixlint.registry import register
from prefixlint.rules.templates.volatile import volatile_findings
from prefixlint.sources.templates import TemplateDocument
from prefixlint.types import Diagnostic


@register(codes.ENVIRONMENT, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return volatile_findings(document, ctx, codes.ENVIRONMENT)
