"""PFX101 in chat templates: the current date or time rendered into the prompt.

transformers gives templates ``strftime_now(format)`` (the server's local time); Llama 3.2+
templates default ``date_string`` to ``strftime_now("%d %b %Y")``. The template is rendered
at a fixed reference time and at later times, on a fake clock, to find the finest unit of
time whose change alters the prompt: that is how often the cached prefix rolls over. A clock
rendered only in the newest turn (after all that the previous request's prompt held) costs no
cached token and is not reported.
"""

from __future__ import annotations

from datetime import timedelta

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.plural import counted
from prefixlint.sequences import common_prefix_length
from prefixlint.sources.chat_template import compare, conversation, sandbox
from prefixlint.sources.chat_template.conversation import Conversation
from prefixlint.sources.chat_template.document import REFERENCE_TIME, ChatTemplateDocument
from prefixlint.types import Diagnostic

CODE = codes.TIMESTAMP

GRANULARITIES = (
    ("second", timedelta(seconds=1), "every second, so no two requests share it"),
    ("minute", timedelta(minutes=1), "every minute"),
    ("hour", timedelta(hours=1), "every hour"),
    ("day", timedelta(days=1), "at midnight (server time): every cache entry is lost daily"),
    ("month", timedelta(days=32), "at the start of every month"),
    ("year", timedelta(days=366), "at the start of every year"),
)


def _render(document: ChatTemplateDocument, convo: Conversation, clock: sandbox.FakeClock) -> str:
    return document.render(convo, len(convo.messages), add_generation_prompt=True, clock=clock).text


def _line_of(text: str, offset: int) -> str:
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return text[start : end if end >= 0 else len(text)].strip()


def _previously_cached(document: ChatTemplateDocument, convo: Conversation, text: str) -> int:
    """How much of ``text`` (the whole conversation's prompt) the previous request's prompt
    already held, in characters."""
    points = [count for count in convo.turn_points() if count < len(convo.messages)]
    if not points:
        return 0
    previous = document.render(convo, points[-1], add_generation_prompt=True).text
    return common_prefix_length(text, previous)


@registry.register(CODE, "chat-template")
def check_clock(document: ChatTemplateDocument, ctx: RuleContext) -> list[Diagnostic]:
    """Report the clock in the prompt once, at the line that calls ``strftime_now``."""
    convo = conversation.build(document.features)
    reference_clock = sandbox.FakeClock(REFERENCE_TIME)
    reference = document.render(
        convo, len(convo.messages), add_generation_prompt=True, clock=reference_clock
    )
    for unit, step, cost in GRANULARITIES:
        later = _render(document, convo, sandbox.FakeClock(REFERENCE_TIME + step))
        if later == reference.text:
            continue
        tokens = ctx.tokenizer.encode(reference.text)
        stable = common_prefix_length(tokens, ctx.tokenizer.encode(later))
        at = compare.char_offset(ctx.tokenizer, reference.text, stable)
        if at >= _previously_cached(document, convo, reference.text):
            return []  # only in the newest turn, which no cache holds (PFX503 says if it moves)
        line = min(reference_clock.call_lines, default=reference.line_at(at))
        shown = _line_of(reference.text, at)
        message = (
            f"chat template stamps the current {unit} into the prompt"
            f" (strftime_now at {document.where(line)}, rendered as {shown!r});"
            f" the cached prefix rolls over {cost};"
            f" only the first {counted(stable, 'token')} stay cached"
        )
        return [
            registry.diagnostic(
                CODE,
                message,
                document.span(line),
                stable_prefix_tokens=stable,
                unstable_tokens=len(tokens) - stable,
                granularity=unit,
                template_line=line,
            )
        ]
    return []
