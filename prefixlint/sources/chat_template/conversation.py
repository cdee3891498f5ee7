"""The synthetic multi-turn conversation that chat-template checks render.

Every piece of text in it is unique, so a difference between two renderings can be traced
back to the piece (system prompt, a tool, a message, a message's reasoning) it belongs to.
Features can be switched off for templates that refuse them (``raise_exception``).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any, TypeAlias

# A message or tool as transformers passes it to a template: JSON, so values of any JSON type.
Message: TypeAlias = dict[str, Any]

SYSTEM_PROMPT = "You are the help desk assistant of Example Corp. Answer briefly and cite sources."

TOOLS: tuple[Message, ...] = (
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string", "description": "City name"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "search_docs",
            "description": "Search the product documentation.",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string", "description": "Search terms"}},
                "required": ["query"],
            },
        },
    },
)
FIRST_TOOL_DESCRIPTION: str = TOOLS[0]["function"]["description"]
CHANGED_FIRST_TOOL_DESCRIPTION = "Weather report for one city, in degrees Celsius."

REASONING_STYLES = ("none", "content", "field")
"""How assistant reasoning is given: not at all, as ``<think>...</think>`` at the start of the
content, or in ``reasoning_content`` (and ``thinking``, as transformers aliases it)."""

_TOOL_CALL_ID = "call00001"  # nine alphanumerics: Mistral templates insist on that length


@dataclass(frozen=True)
class Features:
    """Which parts of the conversation are present."""

    system: bool = True
    tools: bool = True
    tool_calls: bool = True
    reasoning: str = "none"

    def describe(self) -> str:
        parts = [name for name in ("system", "tools", "tool_calls") if getattr(self, name)]
        reasoning = {
            "none": "no reasoning",
            "content": "reasoning as <think> in content",
            "field": "reasoning in reasoning_content",
        }[self.reasoning]
        return f"{', '.join(parts) or 'plain turns'}; {reasoning}"


def feature_fallbacks() -> list[Features]:
    """Feature sets to try, richest first: tool calls go first, then tools, then the system."""
    return [
        Features(system=system, tools=tools, tool_calls=calls)
        for system in (True, False)
        for tools in (True, False)
        for calls in (True, False)
    ]


@dataclass(frozen=True)
class Conversation:
    """Messages and tools in the shape transformers passes to a chat template."""

    messages: tuple[Message, ...]
    tools: tuple[Message, ...] | None
    reasoning: dict[int, str]
    """Message index -> the reasoning text of that assistant message."""
    answers: dict[int, str]
    """Message index -> the answer of that assistant message, without its reasoning."""

    def assistant_indices(self) -> list[int]:
        return [i for i, m in enumerate(self.messages) if m["role"] == "assistant"]

    def turn_points(self) -> list[int]:
        """Message counts at which requests are sent: before each assistant message, at the end."""
        return [*self.assistant_indices(), len(self.messages)]

    def template_messages(self, count: int) -> list[Message]:
        """A fresh copy of the first ``count`` messages (templates cannot change ours)."""
        return copy.deepcopy(list(self.messages[:count]))

    def template_tools(self) -> list[Message] | None:
        return copy.deepcopy(list(self.tools)) if self.tools is not None else None


def think_block(thought: str) -> str:
    """Reasoning as Qwen3, QwQ and DeepSeek-R1 models write it before their answer."""
    return f"<think>\n{thought}\n</think>\n\n"


def _assistant(index: int, content: str, style: str) -> tuple[Message, str | None]:
    thought = f"Reasoning {index}: work out what the user needs before answering."
    if style == "content":
        return {"role": "assistant", "content": think_block(thought) + content}, thought
    if style == "field":
        message = {"role": "assistant", "content": content}
        message["reasoning_content"] = thought
        message["thinking"] = thought
        return message, thought
    return {"role": "assistant", "content": content}, None


def build(
    features: Features, *, first_tool_description: str = FIRST_TOOL_DESCRIPTION
) -> Conversation:
    """The conversation for ``features``: three user questions, one answered through a tool."""
    messages: list[Message] = []
    reasoning: dict[int, str] = {}
    answers: dict[int, str] = {}

    def add_assistant(content: str, **extra: object) -> None:
        message, thought = _assistant(len(messages), content, features.reasoning)
        message.update(extra)
        if thought is not None:
            reasoning[len(messages)] = thought
        answers[len(messages)] = content
        messages.append(message)

    if features.system:
        messages.append({"role": "system", "content": SYSTEM_PROMPT})
    messages.append({"role": "user", "content": "What is the weather in Paris today?"})
    if features.tool_calls:
        call = {
            "id": _TOOL_CALL_ID,
            "type": "function",
            "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
        }
        add_assistant("", tool_calls=[call])
        messages.append(
            {
                "role": "tool",
                "tool_call_id": _TOOL_CALL_ID,
                "name": "get_weather",
                "content": json.dumps({"temperature_c": 18, "sky": "clear"}),
            }
        )
        add_assistant("It is 18 °C and clear in Paris.")
    else:
        add_assistant("Paris is mild and clear in spring.")
    messages.append({"role": "user", "content": "And what about Rome tomorrow?"})
    add_assistant("Rome should be sunny and around 22 °C.")
    messages.append({"role": "user", "content": "Thanks. Which of the two cities is warmer?"})

    tools = None
    if features.tools:
        tools = copy.deepcopy(list(TOOLS))
        tools[0]["function"]["description"] = first_tool_description
    return Conversation(tuple(messages), tuple(tools) if tools else None, reasoning, answers)
