"""PFX404 in templates: a placeholder glued to a letter or digit of the static text.

BPE tokenizers merge across the seam: with ``id{{ x }}``, the static ``id`` and the value
become one pre-token, so the tokens of the static text depend on the value and the cached
prefix ends a token or more early, differently for each value. The rule tokenizes the seam
with a few typical values (a word, a capitalised word, a number) and reports a placeholder
only when one of them really merges with its static neighbour. A punctuation mark between a
word and the placeholder counts as glued too (``Ticket#{{ n }}``, ``Region:{{ code }}``,
``key={{ v }}``: BPE pre-tokenizers attach one mark to the word that follows it). Brackets,
quotes, URL and path separators, and punctuation that is not glued to a word (``({{ x }})``,
``{{ x }}.``, ``https://host/{{ path }}``) are not reported, and neither is a volatile value
(a date, an id): everything after it is recomputed anyway, which PFX101-PFX104 report; for
the same reason, nor is a placeholder after the first volatile value or per-request input, or
after the stable part of a prompt file (its user turn). There
is no fix: whether a space belongs there is the author's call. The same placeholder glued the
same way again on later lines is folded into the first finding.
"""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.rules.templates.folding import fold_sites, folded_lines_text
from prefixlint.rules.templates.volatile import extra_names, placeholder_code
from prefixlint.sourcemap import LITERAL
from prefixlint.sources.templates import Placeholder, TemplateDocument
from prefixlint.types import Diagnostic

CODE = codes.GLUED
SAMPLE_VALUES = ("value", "name", "Value", "42")
# A mark before a value merges with some words only (``#error``, ``#include``): more are tried.
MARK_SAMPLE_VALUES = (*SAMPLE_VALUES, "error", "main", "user", "id")
_CONTEXT = 24
_JOINING_MARKS = frozenset("#:=-")


@registry.register(CODE, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    """One finding per glued seam: the same placeholder glued the same way on later lines
    (``Confidence={{ c }}`` in every example) is folded into the first."""
    seams: dict[tuple[str, str], list[tuple[int, int]]] = {}
    merges: dict[tuple[str, str], tuple[str, str, str]] = {}
    for placeholder, merge in _glued(document, ctx):
        key = (document.text[placeholder.start : placeholder.end], merge[0])
        seams.setdefault(key, []).append((placeholder.start, placeholder.end))
        merges.setdefault(key, merge)
    found = [
        _finding(document, group, merges[key])
        for key, sites in seams.items()
        for group in fold_sites(document, CODE, sites)
    ]
    yield from sorted(found, key=lambda d: (d.span.line, d.span.column))


def _glued(
    document: TemplateDocument, ctx: RuleContext
) -> Iterator[tuple[Placeholder, tuple[str, str, str]]]:
    """Each placeholder whose seam merges, with ``_merge``'s account of it."""
    extra = extra_names(ctx, document)
    stable_end = _stable_end(document, ctx, extra)
    for placeholder in document.placeholders:
        if placeholder.start > stable_end:
            break  # the prefix already differs per request: this seam costs nothing more
        if placeholder_code(placeholder, extra):
            continue  # a volatile value: PFX101-PFX104 already count what it costs
        left = _static_run(document, placeholder.start, -1)
        right = _static_run(document, placeholder.end, 1)
        glued_left = _glued_run(left[::-1])
        glued_right = _glued_run(right)
        if not (glued_left or glued_right):
            continue
        left, right = (left if glued_left else ""), (right if glued_right else "")
        values = SAMPLE_VALUES if _next_to_word(left, right) else MARK_SAMPLE_VALUES
        merge = _merge(ctx, left, right, values)
        if merge is not None:
            yield placeholder, merge


def _stable_end(document: TemplateDocument, ctx: RuleContext, extra: dict[str, list[str]]) -> int:
    """Where the part of the prompt that stays the same across requests ends: at the first
    volatile value or per-request input, else at the end of its stable part."""
    first_input = document.first_input(ctx.option(codes.LAYOUT, "input-names"))
    for placeholder in document.placeholders:
        if placeholder is first_input or placeholder_code(placeholder, extra):
            return min(placeholder.start, document.prefix_end)
    return document.prefix_end


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


def _glued_run(run: str) -> bool:
    """Whether ``run`` (read away from the placeholder) starts with a letter or digit, or with
    a label mark (``#``, ``:``, ``=``, ``-``) followed by one. Brackets and quotes wrap the
    value (``f({{ x }})``); ``/``, ``.`` and ``@`` in URLs, paths and addresses, and ``_`` in
    names like ``step_{{ n }}``, join parts whose values are usually fixed or numbers."""
    if run[:1].isalnum():
        return True
    return len(run) > 1 and run[0] in _JOINING_MARKS and run[1].isalnum()


def _next_to_word(left: str, right: str) -> bool:
    """Whether a letter or digit touches the placeholder on a glued side."""
    return left[-1:].isalnum() or right[:1].isalnum()


def _last_word(text: str) -> str:
    return text.rsplit(None, 1)[-1] if text.strip() else text


def _first_word(text: str) -> str:
    return text.split(None, 1)[0] if text.strip() else text


def _merge(
    ctx: RuleContext, left: str, right: str, values: tuple[str, ...]
) -> tuple[str, str, str] | None:
    """``(seam text, glued tokens, separate tokens)`` for the first value that merges."""
    tokenizer = ctx.tokenizer
    left, right = _last_word(left), _first_word(right)
    for value in values:
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
    document: TemplateDocument, sites: list[tuple[int, int]], merge: tuple[str, str, str]
) -> Diagnostic:
    text, glued, separate = merge
    start, end = sites[0]
    later = (document.span(*site).line for site in sites[1:])
    first_line = document.span(start, end).line
    lines_after = [line for line in dict.fromkeys(later) if line != first_line]
    return registry.diagnostic(
        CODE,
        f"`{document.text[start:end]}` is glued to static text: with a value like {text!r} the"
        f" tokens are `{glued}`, not `{separate}`, so the static text's tokens depend on the"
        f" value{folded_lines_text(lines_after)}",
        document.span(start, end),
        folded_lines=lines_after,
    )
