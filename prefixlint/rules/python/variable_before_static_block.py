"""PFX301 in Python: per-request input comes before a large static block of the same text.

Text of the user turn is held to ``min-static-tokens``; ``str.format`` templates and
system-side text to at most ``TEMPLATE_STATIC_TOKENS``, the size from which real prompt
builders' fixed instruction blocks after a question were judged worth caching (about 500
characters; smaller tails, such as an answer-format line, are not reported). The whole text
of a fixed file (a manual, a handbook read from disk) counts as such a block whatever its size
here, which only the running program knows. This turn's input (or documents looked up with
it) before the conversation's earlier turns is reported whatever its size: every turn
recomputes the whole conversation after it.
"""

from __future__ import annotations

from collections.abc import Iterator

from prefixlint import registry
from prefixlint.codes import LAYOUT
from prefixlint.context import RuleContext
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.layout import Layout, Misplaced
from prefixlint.pyflow.prompt_words import LAST, TEMPLATE_STATIC_TOKENS
from prefixlint.types import Diagnostic

CODE = LAYOUT


@registry.register(CODE, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    turn_tokens = ctx.option(CODE, "min-static-tokens")
    template_tokens = min(turn_tokens, TEMPLATE_STATIC_TOKENS)
    layout = Layout(document, ctx.option(CODE, "input-names"))
    min_chars = min(turn_tokens, template_tokens)
    reported: set[int] = set()
    tokenizer = ctx.tokenizer
    for found in [*layout.ahead_of_history(), *layout.template_ahead_of_history()]:
        reported.add(id(found.node))
        what = _made_of(found)
        yield registry.diagnostic(
            CODE,
            f"`{found.label}` {what} and comes before the messages of "
            f"`{found.conversation}` in {found.sink.description}; every turn recomputes them. "
            "Put it in the last user message",
            found.span(document),
            stable_prefix_tokens=len(tokenizer.encode(found.before)),
        )
    for found in [*layout.misplaced(min_chars), *layout.misplaced_across(min_chars)]:
        if id(found.node) in reported:
            continue
        static = len(tokenizer.encode(found.static))
        template = found.field or found.sink.region != LAST
        if static < (template_tokens if template else turn_tokens) and not found.document:
            continue
        reported.add(id(found.node))
        what = f"{static:,} tokens of static text"
        if found.document:
            what = f"the text of `{found.document}` and {static:,} tokens of static text"
        yield registry.diagnostic(
            CODE,
            f"`{found.label}` comes before {what} in "
            f"{found.sink.description}; those tokens are recomputed for every request. Put "
            "the static text first and the input after it",
            found.span(document),
            stable_prefix_tokens=len(tokenizer.encode(found.before)),
            unstable_tokens=static,
        )


def _made_of(found: Misplaced) -> str:
    """What makes a value before the conversation new on every turn, in words."""
    if found.turn and found.turn == found.label.strip("{}"):
        return "is this turn's input"
    if found.turn:
        return f"is made from this turn's `{found.turn}`"
    return (
        "holds the documents found for this turn" if found.field else "is looked up for this turn"
    )
