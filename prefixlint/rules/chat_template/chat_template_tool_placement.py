"""PFX304: where a chat template renders the tool definitions, which decides what a tool change
costs (information, not a defect).

The conversation is rendered twice, with the first tool's description changed; the first
differing token is where tools land, located against the text of the system prompt, the
first user message and the last assistant message.
"""

from __future__ import annotations

from dataclasses import replace

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.sequences import common_prefix_length
from prefixlint.sources.chat_template import compare, conversation
from prefixlint.sources.chat_template.conversation import Conversation
from prefixlint.sources.chat_template.document import ChatTemplateDocument
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


@registry.register(CODE, "chat-template")
def check_tool_placement(document: ChatTemplateDocument, ctx: RuleContext) -> list[Diagnostic]:
    """One info finding at the line that renders the tool definitions."""
    if not document.features.tools:
        return []
    features = replace(document.features, tool_calls=False)
    before = conversation.build(features)
    after = conversation.build(
        features, first_tool_description=conversation.CHANGED_FIRST_TOOL_DESCRIPTION
    )
    count = len(before.messages)
    rendering = document.render(before, count, add_generation_prompt=True)
    changed = document.render(after, count, add_generation_prompt=True).text
    if changed == rendering.text:  # the template ignores tools: nothing to cost
        return []
    tokens = ctx.tokenizer.encode(rendering.text)
    stable = common_prefix_length(tokens, ctx.tokenizer.encode(changed))
    at = compare.char_offset(ctx.tokenizer, rendering.text, stable)
    kind, line = placement(before, rendering.text, at), rendering.line_at(at)
    return [
        registry.diagnostic(
            CODE,
            f"chat template renders tool definitions {PLACEMENTS[kind]}",
            document.span(line),
            stable_prefix_tokens=stable,
            placement=kind,
            template_line=line,
        )
    ]
