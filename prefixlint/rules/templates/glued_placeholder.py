"""PFX404 in templates: a placeholder glued to a letter or digit of the static text.

BPE tokenizers merge across the seam: with ``id{{ x }}``, the static ``id`` and the value
become one pre-token, so the tokens of the static text depend on the value and the cached
prefix ends a token or more early, differently for each value. The rule tokenizes the seam
with a few typical values (a word, a capitalised word, a number) and reports a placeholder
only when one of them really merges with its static neighbour. Punctuation next to a
placeholder (``({{ x }})``, ``{{ x }}.``) is not reported. There is no fix: whether a space
belongs there is the author's call.
"""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import registry
from prefixlint.context import RuleContext
from prefixlint.sourcemap import LITERAL
from prefixlint.sources.templates import Placeholder, TemplateDocument
from prefixlint.types import Diagnostic

CODE = "PFX404"
SAMPLE_VALUES = ("value", "name", "Value", "42")
_CONTEXT = 24


@registry.register(CODE, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    for placeholder in document.placeholders:
        left = _static_run(document, placeholder.start, -1)
        right = _static_run(document, placeholder.end, 1)
        glued_left = bool(left) and left[-1].isalnum()
        glued_right = bool(right) and right[0].isalnum()
        if not (glued_left or glued_right):
            continue
        merge = _merge(ctx, left if glued_left else "", right if glued_right else "")
        if merge is None:
            continue
        yield _finding(document, placeholder, merge)


def _static_run(document: TemplateDocument, offset: int, direction: int) -> str:
    """Up to a few static characters on one line before (-1) or after (1) ``offset``."""
    text = document.text
    piece = document.parsed.static.slice_at_source(offset - 1 if direction < 0 else offset)
    if piece is None or piece.kind != LITERAL:
        return ""
    if direction < 0:
        run = text[max(piece.source_start, offset - _CONTEXT) : offset]
        return run[run.rfind("\n") + 1 :]
    run = text[offset : min(piece.source_end, offset + _CONTEXT)]
    return run.split("\n", 1)[0]


def _last_word(text: str) -> str:
    return text.rsplit(None, 1)[-1] if text.strip() else text


def _first_word(text: str) -> str:
    return text.split(None, 1)[0] if text.strip() else text


def _merge(ctx: RuleContext, left: str, right: str) -> tuple[str, str, str] | None:
    """``(seam text, glued tokens, separate tokens)`` for the first value that merges."""
    tokenizer = ctx.tokenizer
    left, right = _last_word(left), _first_word(right)
    for value in SAMPLE_VALUES:
        text = left + value + right
        seams = {len(left)} if left else set()
        if right:
            seams.add(len(left) + len(value))
        spans = tokenizer.offsets(text)
        starts = {start for start, _ in spans}
        if seams <= starts:
            continue
        glued = "|".join(text[s:e] for s, e in spans)
        parts = [p for p in (left, value, right) if p]
        separate = "|".join(p[s:e] for p in parts for s, e in tokenizer.offsets(p))
        return text, glued, separate
    return None


def _finding(
    document: TemplateDocument, placeholder: Placeholder, merge: tuple[str, str, str]
) -> Diagnostic:
    text, glued, separate = merge
    shown = document.text[placeholder.start : placeholder.end]
    return registry.diagnostic(
        CODE,
        f"`{shown}` is glued to static text: with a value like {text!r} the tokens are"
        f" `{glued}`, not `{separate}`, so the static text's tokens depend on the value",
        document.span(placeholder.start, placeholder.end),
    )
