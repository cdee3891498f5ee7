"""PFX503: a chat template whose turn N (prompt + generated answer) is not a prefix of turn N+1.

An engine caches the prompt of turn N and the tokens it generates. The next request renders
the whole conversation again; if the template renders history differently from how it
rendered the prompt and the answer (drops reasoning, moves the system prompt or the tools to
the last user turn, ...), the cache stops at the first differing token.

What the engine generated is modelled per message: an assistant message without reasoning is
what the model produced, as the client sends it back, so only turn N's prompt must be a
prefix of turn N+1's. With reasoning, the model produced it too: the generated text is what
the template renders for that message when it is the last one (its training format),
reasoning included, up to the end-of-turn marker (trailing whitespace is not generated); a
template that leaves reasoning out even there gets it back as a ``<think>`` block before the
answer, since the model wrote it and the engine cached it.
Token differences that only come from re-tokenising the same text at the boundary between
prompt and answer are not reported (the text is a prefix; the cost is a token or two).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.sequences import common_prefix_length
from prefixlint.sources.chat_template import compare, conversation, sandbox
from prefixlint.sources.chat_template.branches import deciding_if
from prefixlint.sources.chat_template.compare import TokenWindow
from prefixlint.sources.chat_template.conversation import Conversation, Features
from prefixlint.sources.chat_template.document import ChatTemplateDocument
from prefixlint.sources.chat_template.sandbox import Rendering
from prefixlint.sources.templates import tokens
from prefixlint.tokenizers import Tokenizer
from prefixlint.types import Diagnostic

CODE = codes.NON_MONOTONIC


@dataclass(frozen=True)
class Break:
    """The first turn whose cached tokens are not a prefix of the next turn's prompt."""

    turn: int
    line: int
    cached_line: int
    blamed: int
    stable_tokens: int
    lost_tokens: int
    cause: str
    window: TokenWindow


def _generated(
    document: ChatTemplateDocument, convo: Conversation, index: int, prompt: str
) -> tuple[str, Rendering | None]:
    """The text the model generated for assistant message ``index`` and its rendering.

    That is what the template renders for the message when it is the last one, after the
    prompt, without trailing whitespace. When even that rendering leaves the reasoning out
    (DeepSeek-R1 style templates strip it everywhere), the model still wrote it: it is put
    back before the answer as a ``<think>`` block.
    """
    if index not in convo.reasoning:
        return "", None
    full = document.render(convo, index + 1, add_generation_prompt=False)
    if not full.text.startswith(prompt):
        return "", None
    generated = full.text[len(prompt) :].rstrip()
    thought, answer = convo.reasoning[index], convo.answers[index]
    if thought not in generated:
        at = max(generated.find(answer), 0) if answer else 0
        generated = generated[:at] + conversation.think_block(thought) + generated[at:]
    return generated, full


_STABLE_PIECES = ("the system prompt", "the tool definitions")


def _pieces(convo: Conversation) -> dict[str, str]:
    """The synthetic texts whose place tells what differs, by name."""
    pieces = {
        f"the reasoning of message {index}": thought for index, thought in convo.reasoning.items()
    }
    pieces["the system prompt"] = conversation.SYSTEM_PROMPT
    if convo.tools:
        pieces["the tool definitions"] = conversation.FIRST_TOOL_DESCRIPTION
    return pieces


def _moves_stable_part(convo: Conversation, cached: str, at: int) -> bool:
    """Whether the cached text goes on, from ``at``, with the system prompt or the tools: the
    turn rendered them with itself, and the next prompt does not keep them there."""
    found = [(cached.find(text, at), name) for name, text in _pieces(convo).items()]
    first = min(((place, name) for place, name in found if place >= 0), default=None)
    return first is not None and first[1] in _STABLE_PIECES


def _cause(convo: Conversation, cached: str, following: str, at: int) -> str:
    """Name what differs, from where the synthetic pieces are in both texts."""
    pieces = _pieces(convo)
    after = {name: text for name, text in pieces.items() if text in cached[at:]}
    dropped = [name for name, text in after.items() if text not in following]
    moved = [
        name
        for name, text in after.items()
        if text in following and cached.find(text) != following.find(text)
    ]
    parts = []
    if dropped:
        verb = "are" if _plural(dropped) else "is"
        parts.append(f"{', '.join(dropped)} {verb} dropped from the next prompt")
    if moved:
        parts.append(f"{' and '.join(moved)} move{'' if _plural(moved) else 's'} every turn")
    if parts:
        return "; ".join(parts)
    if _whitespace_only(cached[at:], following[at:]):
        return "the whitespace around earlier turns is rendered differently in the next request"
    return "earlier turns are rendered differently in the next request"


def _generation_prompt_cause(
    document: ChatTemplateDocument,
    convo: Conversation,
    count: int,
    prompt: str,
    following: str,
    at: int,
) -> str | None:
    """The cause when the next prompt opens the answer as the generation prompt did but leaves
    out the rest of what it added (a DeepSeek-R1 style ``<think>`` opener), so the answer the
    model generated after it is not reused either."""
    bare = document.render(convo, count, add_generation_prompt=False).text
    if not prompt.startswith(bare) or not len(bare) <= at < len(prompt):
        return None
    added = prompt[len(bare) :]
    shared = common_prefix_length(added, following[len(bare) :])
    while shared > 0 and not (added[shared - 1].isspace() or added[shared - 1] == ">"):
        shared -= 1  # from the start of the tag or word it cuts: ``<think>``, not ``think>``
    if shared == 0:
        return None  # the answer's opener itself differs (its whitespace, its role)
    missing = added[shared:]
    return (
        f"the next prompt renders the answer without the generation prompt's {missing!r}, so"
        " what the model generated after it is not reused"
    )


def _plural(names: list[str]) -> bool:
    """Whether the named pieces take a plural verb (``the tool definitions`` is one plural)."""
    return len(names) > 1 or names[0].endswith("s")


def _whitespace_only(cached_rest: str, following_rest: str, window: int = 200) -> bool:
    """Whether the two texts agree from here on once whitespace is ignored (what the cached
    text still holds, up to ``window`` characters)."""
    a = "".join(cached_rest[:window].split())
    b = "".join(following_rest[:window].split())
    shared = min(len(a), len(b))
    return a[:shared] == b[:shared]


def _responsible_lines(
    source: str,
    prompt: Rendering,
    full: Rendering | None,
    following: Rendering,
    at: int,
    *,
    stable_part_moves: bool,
) -> tuple[int, int, int]:
    """The template lines behind the difference at char ``at``: next request's, cached turn's,
    and the one to blame.

    When the cached turn rendered the system prompt or the tools there (``stable_part_moves``),
    the line that emitted them with that turn is to blame: the branch that attaches them to the
    last user turn, not the one that renders earlier turns plainly. Otherwise, when the text
    just before ``at`` came from different lines in the two renderings, the template already
    took another branch there (e.g. the one that renders history without reasoning), and the
    ``if`` whose arms the two lines are in is to blame (the next prompt's line when no ``if``
    chose between them); else the line that emitted the first differing character.
    """

    def cached_line_at(offset: int) -> int:
        if offset < len(prompt.text) or full is None:
            return prompt.line_at(offset)
        return full.line_at(offset)

    if stable_part_moves:
        return following.line_at(at), cached_line_at(at), cached_line_at(at)
    if at > 0 and following.line_at(at - 1) != cached_line_at(at - 1):
        line, cached = following.line_at(at - 1), cached_line_at(at - 1)
        return line, cached, deciding_if(source, line, cached) or line
    return following.line_at(at), cached_line_at(at), following.line_at(at)


def first_break(
    document: ChatTemplateDocument, features: Features, tokenizer: Tokenizer
) -> Break | None:
    """The first turn of the conversation for ``features`` that breaks monotonicity."""
    return next(breaks(document, features, tokenizer), None)


def breaks(
    document: ChatTemplateDocument, features: Features, tokenizer: Tokenizer
) -> Iterator[Break]:
    """Each turn of the conversation for ``features`` that breaks monotonicity, in order."""
    convo = conversation.build(features)
    points = convo.turn_points()
    for turn, (count, next_count) in enumerate(itertools.pairwise(points), start=1):
        prompt = document.render(convo, count, add_generation_prompt=True)
        generated, full = _generated(document, convo, count, prompt.text)
        following = document.render(convo, next_count, add_generation_prompt=True)
        cached_text = prompt.text + generated
        if following.text.startswith(cached_text):
            continue
        cached_tokens = tokenizer.encode(prompt.text) + (
            tokenizer.encode(generated) if generated else []
        )
        next_tokens = tokenizer.encode(following.text)
        at = common_prefix_length(cached_tokens, next_tokens)
        at_char = compare.char_offset(tokenizer, following.text, at)
        line, cached_line, blamed = _responsible_lines(
            document.source,
            prompt,
            full,
            following,
            at_char,
            stable_part_moves=_moves_stable_part(convo, cached_text, at_char),
        )
        yield Break(
            turn=turn,
            line=line,
            cached_line=cached_line,
            blamed=blamed,
            stable_tokens=at,
            lost_tokens=len(cached_tokens) - at,
            cause=_generation_prompt_cause(
                document, convo, count, prompt.text, following.text, at_char
            )
            or _cause(convo, cached_text, following.text, at_char),
            window=compare.token_window(tokenizer, cached_tokens, next_tokens, at),
        )


@registry.register(CODE, "chat-template")
def check_monotonic(document: ChatTemplateDocument, ctx: RuleContext) -> list[Diagnostic]:
    """One PFX503 per template line responsible, over the turns and the reasoning styles the
    template renders (the first break that line is to blame for). A break blamed on the line
    that rendered the next prompt of a break already reported (its ``if`` was blamed) is the
    same one."""
    reported: dict[int, Diagnostic] = {}
    covered: set[int] = set()
    for style in conversation.REASONING_STYLES:
        features = document.with_reasoning(style)
        if features is None:
            continue
        try:
            found_all = list(breaks(document, features, ctx.tokenizer))
        except sandbox.TemplateFailure:
            continue
        for found in found_all:
            if found.blamed not in covered:
                reported[found.blamed] = _diagnostic(document, features, found)
                covered |= {found.blamed, found.line}
    return list(reported.values())


def _diagnostic(document: ChatTemplateDocument, features: Features, found: Break) -> Diagnostic:
    """The finding for one break, at the line to blame."""
    message = (
        f"chat template is not prefix-monotonic: turn {found.turn}'s cached tokens are not a"
        f" prefix of turn {found.turn + 1}'s prompt ({features.describe()}): {found.cause};"
        f" {compare.describe_window(found.window, 'cached', 'next')};"
        f" rendered at {document.where(found.line)} in the next prompt,"
        f" at {document.where(found.cached_line)} in turn {found.turn};"
        f" {tokens(found.lost_tokens, 'cached')} {'is' if found.lost_tokens == 1 else 'are'}"
        " recomputed"
    )
    return registry.diagnostic(
        CODE,
        message,
        document.span(found.blamed),
        stable_prefix_tokens=found.stable_tokens,
        unstable_tokens=found.lost_tokens,
        turn=found.turn,
        scenario=features.describe(),
        cause=found.cause,
        template_line=found.line,
        cached_template_line=found.cached_line,
        window=found.window,
    )
