"""PFX301 in templates: per-request input placed before a large block of static text.

Only the first input placeholder counts: once the prompt differs per request, every later
token is recomputed whatever it is, so that placeholder alone decides how much static text is
lost. A template file, or a value of a prompt file that is not a user turn, is held to a lower
threshold than a user-turn value: the static text after its input is guidance or a document
that every request repeats, where a user turn's trailing instructions are part of the turn.
Volatile placeholders (dates, ids, ...) are PFX101-PFX104, not this rule.
"""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.sources.templates import TemplateDocument, tokens
from prefixlint.types import Diagnostic

CODE = codes.LAYOUT


@registry.register(CODE, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    placeholder = document.first_input(ctx.option(CODE, "input-names"))
    if placeholder is None:
        return
    key = "min-static-tokens" if document.prefix_end == 0 else "template-min-static-tokens"
    threshold = int(ctx.option(CODE, key))
    after = document.static_tokens(placeholder.end, len(document.text), ctx)
    if after < threshold:
        return
    before = document.static_tokens(0, placeholder.start, ctx)
    shown = document.text[placeholder.start : placeholder.end]
    yield registry.diagnostic(
        CODE,
        f"`{shown}` changes per request and comes before {tokens(after)} of static text, which"
        f" every request recomputes; put the static text first (the cache keeps the"
        f" {tokens(before)} before it)",
        document.span(placeholder.start, placeholder.end),
        stable_prefix_tokens=before,
        unstable_tokens=after,
    )
