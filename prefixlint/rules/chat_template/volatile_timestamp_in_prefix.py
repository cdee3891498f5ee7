"""PFX101 in chat templates: the current date or time rendered into the prompt.

transformers gives templates ``strftime_now(format)`` (the server's local time); Llama 3.2+
templates default ``date_string`` to ``strftime_now("%d %b %Y")``. The template is rendered
at a fixed reference time and at later times, on a fake clock, to find the finest unit of
time whose change alters the prompt: that is how often the cached prefix rolls over. A clock
rendered only in the newest turn (after all that the previous request's prompt held) costs no
cached token and is not reported. A template that stamps the clock only into the system prompt
it uses when a request sends none (``default_system_message``) is checked on a conversation
without a system message too. A field named for the date left in the rendered prompt
(``The current date is {today}.``, which mistral-common fills) is the same clock, set by the
sender.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta

from prefixlint import codes, registry, vocabulary
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


_SHOWN_AROUND = 40  # characters shown on each side of the clock in a long rendered line


def _line_of(text: str, offset: int) -> str:
    """The rendered line around ``offset``; of a long line, the characters around it."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    end = end if end >= 0 else len(text)
    if end - start > 2 * _SHOWN_AROUND:
        left, right = max(start, offset - _SHOWN_AROUND), min(end, offset + _SHOWN_AROUND)
        return ("..." if left > start else "") + text[left:right] + ("..." if right < end else "")
    return text[start:end].strip()


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
    """Report the clock in the prompt once, at the line that calls ``strftime_now``: in the
    conversation with a system message, else in the one without (a default system prompt)."""
    convo = conversation.build(document.features)
    found = _clock_finding(document, convo, ctx) or _date_slot_finding(document, convo, ctx)
    if found or not document.features.system:
        return found
    without = replace(document.features, system=False)
    if not document.renders(without):
        return []
    convo = conversation.build(without)
    return _clock_finding(document, convo, ctx, default_system=True) or _date_slot_finding(
        document, convo, ctx, default_system=True
    )


# ``{today}`` left in the rendered prompt for the serving side to fill (mistral-common fills
# ``{today}`` and ``{yesterday}`` in Mistral's default system prompts).
_FIELD = re.compile(r"\{([A-Za-z_]\w*)\}")


def _date_slot_finding(
    document: ChatTemplateDocument,
    convo: Conversation,
    ctx: RuleContext,
    *,
    default_system: bool = False,
) -> list[Diagnostic]:
    """A field named for the date (``{today}``) in what the previous request's prompt held:
    the text the template renders has a slot that whoever sends the prompt fills each day."""
    rendered = document.render(convo, len(convo.messages), add_generation_prompt=True)
    cached = _previously_cached(document, convo, rendered.text)
    for match in _FIELD.finditer(rendered.text, 0, cached):
        if vocabulary.classify_name(match.group(1)) != CODE:
            continue
        stable = len(ctx.tokenizer.encode(rendered.text[: match.start()]))
        total = len(ctx.tokenizer.encode(rendered.text))
        written = document.source.find(match.group(0))  # where the template writes it
        line = document.source.count("\n", 0, written) + 1 if written >= 0 else 0
        line = line or rendered.line_at(match.start())
        message = (
            f"chat template leaves the date slot {match.group(0)!r} in the prompt"
            f" (at {document.where(line)}{_DEFAULT_SYSTEM if default_system else ''}) for the"
            " sender to fill with the current date; the cached prefix rolls over at midnight;"
            f" only the first {counted(stable, 'token')} stay cached"
        )
        return [_finding(document, message, line, stable, total, "day")]
    return []


_DEFAULT_SYSTEM = ", in the default system prompt used when a request sends none"


def _finding(
    document: ChatTemplateDocument, message: str, line: int, stable: int, total: int, unit: str
) -> Diagnostic:
    """The PFX101 finding at template ``line``: ``stable`` of ``total`` tokens stay cached."""
    return registry.diagnostic(
        CODE,
        message,
        document.span(line),
        stable_prefix_tokens=stable,
        unstable_tokens=total - stable,
        granularity=unit,
        template_line=line,
    )


def _clock_finding(
    document: ChatTemplateDocument,
    convo: Conversation,
    ctx: RuleContext,
    *,
    default_system: bool = False,
) -> list[Diagnostic]:
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
            f" (strftime_now at {document.where(line)}, rendered as {shown!r}"
            + (_DEFAULT_SYSTEM if default_system else "")
            + ");"
            f" the cached prefix rolls over {cost};"
            f" only the first {counted(stable, 'token')} stay cached"
        )
        return [_finding(document, message, line, stable, len(tokens), unit)]
    return []
