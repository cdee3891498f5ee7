"""PFX301 in templates: per-request input placed before a large block of static text, or this
turn's input placed before the conversation.

Only the first input placeholder counts: once the prompt differs per request, every later
token is recomputed whatever it is, so that placeholder alone decides how much static text is
lost. A template file, or a value of a prompt file that is not a user turn, is held to a lower
threshold than a user-turn value: the static text after its input is guidance or a document
that every request repeats, where a user turn's trailing instructions are part of the turn.
A template that renders the conversation (``{% for m in chat_history %}``, ``{chat_history}``)
and then this turn's question is re-rendered on every turn: a value new with the turn (the
question, the documents looked up for it) before the conversation makes every earlier turn
new tokens again, whatever its size. Volatile placeholders (dates, ids, ...) are
PFX101-PFX104, not this rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.sources.templates import Placeholder, TemplateDocument, tokens
from prefixlint.types import Diagnostic
from prefixlint.vocabulary import is_turn_input, names_conversation, names_turn_context

CODE = codes.LAYOUT
_LOOP_TARGETS = re.compile(r"\{%[-+]?\s*for\s+([\w\s,()]+?)\s+in\b")


@registry.register(CODE, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    found = _before_static_text(document, ctx) or _before_conversation(document, ctx)
    if found is not None:
        yield found


def _before_static_text(document: TemplateDocument, ctx: RuleContext) -> Diagnostic | None:
    names = ctx.option(CODE, "input-names")
    placeholder = document.first_input(names)
    if placeholder is None:
        return None
    earlier = document.stable_chain[: _index(document)]
    if any(d.first_input(names) is not None for d in earlier):
        return None  # an earlier value of the same stable part already varies: reported there
    key = "min-static-tokens" if document.prefix_end == 0 else "template-min-static-tokens"
    threshold = int(ctx.option(CODE, key))
    chained_before, chained_after = document.chain_tokens(ctx)
    after = document.static_tokens(placeholder.end, len(document.text), ctx) + chained_after
    if after < threshold and not (document.framework_follows and after):
        return None
    before = chained_before + document.static_tokens(0, placeholder.start, ctx)
    if after < float(ctx.option(CODE, "min-static-fraction")) * (before + after):
        return None  # near the end of the prompt: most of it is cached, little to win
    shown = document.text[placeholder.start : placeholder.end]
    framework = " and the framework's own instructions" if document.framework_follows else ""
    return registry.diagnostic(
        CODE,
        f"`{shown}` changes per request and comes before {tokens(after)} of static text"
        f"{framework}, which every request recomputes; put the static text first (the cache"
        f" keeps the {tokens(before)} before it)",
        document.span(placeholder.start, placeholder.end),
        stable_prefix_tokens=before,
        unstable_tokens=after,
    )


def _index(document: TemplateDocument) -> int:
    return next((i for i, d in enumerate(document.stable_chain) if d is document), 0)


def _before_conversation(document: TemplateDocument, ctx: RuleContext) -> Diagnostic | None:
    """This turn's input, or the documents looked up for it, before the conversation that
    this turn's input follows."""
    conversation = _conversation(document)
    if conversation is None:
        return None
    start, end, targets = conversation
    later = [p for p in document.placeholders if p.start >= end]
    if not any(_turn_input(p, targets) for p in later):
        return None
    earlier = (p for p in document.placeholders if p.end <= start)
    placeholder = next((p for p in earlier if any(map(names_turn_context, p.paths))), None)
    if placeholder is None:
        return None
    shown = document.text[placeholder.start : placeholder.end]
    loop = " ".join(document.text[start:end].split())
    before = document.static_tokens(0, placeholder.start, ctx)
    after = document.static_tokens(placeholder.end, len(document.text), ctx)
    return registry.diagnostic(
        CODE,
        f"`{shown}` is new with every turn and comes before the conversation (`{loop}`), so"
        f" every earlier turn is recomputed on every turn (the cache keeps the {tokens(before)}"
        f" before it); put it after the conversation, with this turn's input",
        document.span(placeholder.start, placeholder.end),
        stable_prefix_tokens=before,
        unstable_tokens=after,
    )


def _conversation(document: TemplateDocument) -> tuple[int, int, frozenset[str]] | None:
    """``(start, end, loop targets)`` of the first loop over a conversation's turns, or
    placeholder that inlines them."""
    for start, end, expression, is_loop in document.iterations:
        names = document.iterated(expression)[0]
        if not names or not names_conversation(names[0]):
            continue
        if not is_loop:
            return start, end, frozenset()
        match = _LOOP_TARGETS.match(document.text, start)
        targets = frozenset(re.findall(r"\w+", match.group(1))) if match else frozenset()
        return start, end, targets
    return None


def _turn_input(placeholder: Placeholder, targets: frozenset[str]) -> bool:
    """Whether ``placeholder`` substitutes this turn's input (not a field of an earlier turn
    that a loop over the conversation prints: ``item.question``, or ``history.question`` as
    the loop's alias resolves)."""
    for path in placeholder.paths:
        root = path.split(".")[0]
        if is_turn_input(path) and root not in targets and not names_conversation(root):
            return True
    return False
