"""PFX304: a chat template that renders the tool definitions before the system prompt, so that a
tool change costs the whole prompt, the shared system prompt included.

The conversation is rendered twice, with the first tool's description changed; the first
differing token is where tools land, located against the text of the system prompt, the
first user message and the last assistant message. Tools after the system prompt are the
layout to use, and tools with the last user turn are PFX503's: neither is reported.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.sequences import common_prefix_length
from prefixlint.sources.chat_template import compare, conversation
from prefixlint.sources.chat_template.conversation import Conversation
from prefixlint.sources.chat_template.document import ChatTemplateDocument
from prefixlint.tokenizers import Tokenizer
from prefixlint.types import Diagnostic

CODE = codes.TOOL_PLACEMENT

PLACEMENTS = {
    "start": "before the system prompt: a tool change invalidates the whole cached prefix",
    "after-system": (
        "after the system prompt, before the first user message's text: a tool change keeps the"
        " system prompt cached and invalidates every message"
    ),
    "history": "inside the conversation history: a tool change invalidates the turns after it",
    "last-turn": (
        "with the last user turn: a tool change costs only that turn, but the tools move"
        " every turn (see PFX503)"
    ),
}


def placement(convo: Conversation, text: str, at: int) -> str:
    """Which of :data:`PLACEMENTS` the character offset ``at`` of ``text`` falls in."""
    messages = convo.messages
    first_user = next(m["content"] for m in messages if m["role"] == "user")
    last_answer = next(m["content"] for m in reversed(messages) if m["role"] == "assistant")
    if at >= text.rfind(last_answer) + len(last_answer):
        return "last-turn"
    has_system = messages[0]["role"] == "system"
    if has_system and at < text.find(conversation.SYSTEM_PROMPT):
        return "start"
    if at < text.find(first_user):
        return "after-system" if has_system else "start"
    return "history"


# Where a tool change costs more than the layout to use (tools after the system prompt): only
# before the system prompt, which it then invalidates. Without a system prompt, the tools are
# the longest part requests share, and the first tokens wherever a template puts them.
REPORTED = frozenset({"start"})


@dataclass(frozen=True)
class ToolPlacement:
    """Where a template renders the tool definitions: the placement (one of
    :data:`PLACEMENTS`), the template line, and the tokens before them."""

    kind: str
    line: int
    stable_tokens: int
    with_system: bool


def tool_placement(document: ChatTemplateDocument, tokenizer: Tokenizer) -> ToolPlacement | None:
    """Where ``document`` renders tools; ``None`` when it takes no tools or ignores them."""
    if not document.features.tools:
        return None
    features = replace(document.features, tool_calls=False)
    before = conversation.build(features)
    after = conversation.build(
        features, first_tool_description=conversation.CHANGED_FIRST_TOOL_DESCRIPTION
    )
    count = len(before.messages)
    rendering = document.render(before, count, add_generation_prompt=True)
    changed = document.render(after, count, add_generation_prompt=True).text
    if changed == rendering.text:  # the template ignores tools: nothing to cost
        return None
    tokens = tokenizer.encode(rendering.text)
    stable = common_prefix_length(tokens, tokenizer.encode(changed))
    at = compare.char_offset(tokenizer, rendering.text, stable)
    with_system = before.messages[0]["role"] == "system"
    kind = placement(before, rendering.text, at)
    return ToolPlacement(kind, rendering.line_at(at), stable, with_system)


@registry.register(CODE, "chat-template")
def check_tool_placement(document: ChatTemplateDocument, ctx: RuleContext) -> list[Diagnostic]:
    """One info finding at the line that renders the tool definitions before the system
    prompt."""
    found = tool_placement(document, ctx.tokenizer)
    if found is None or found.kind not in REPORTED or not found.with_system:
        return []
    return [
        registry.diagnostic(
            CODE,
            f"chat template renders tool definitions {PLACEMENTS[found.kind]}",
            document.span(found.line),
            stable_prefix_tokens=found.stable_tokens,
            placement=found.kind,
            template_line=found.line,
        )
    ]
