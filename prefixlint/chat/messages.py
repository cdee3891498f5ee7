"""Messages in the shape chat templates expect, and the names of a request's components.

Content given as a list of parts is joined into one string, text parts separated by ``"\\n"``,
as vLLM's OpenAI server does before it applies a template (``vllm/entrypoints/chat_utils.py``);
``None`` content becomes ``""``. A ``developer`` message is a system message and a legacy
``function`` message a ``tool`` message; reasoning logged as ``thinking`` or ``reasoning`` is
``reasoning_content``, as transformers aliases it. Non-text parts render as Qwen-VL's image
placeholder: the text model sees their position, not their bytes.
"""

from __future__ import annotations

import marshal
from collections.abc import Hashable
from typing import Any, TypeAlias

from prefixlint.chat.qwen3 import tojson
from prefixlint.request import ChatRequest

IMAGE_PLACEHOLDER = "<|vision_start|><|image_pad|><|vision_end|>"
TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
ROLE_ALIASES = {"developer": "system", "function": "tool"}
# transformers (``_alias_reasoning_fields``) and vLLM accept reasoning under these names.
REASONING_FIELDS = ("reasoning_content", "thinking", "reasoning")

# A message as logged: an OpenAI-shaped JSON object (``role``, ``content``, ``tool_calls``...).
Message: TypeAlias = dict[str, Any]
# A logged value that ``marshal`` may take (it raises ValueError for what it cannot).
PlainData: TypeAlias = str | int | float | list[Any] | tuple[Any, ...] | dict[str, Any] | None


def part_text(part: object) -> str:
    """One content part as text: text parts as is, media as a placeholder, data as JSON."""
    if isinstance(part, str):
        return part
    if isinstance(part, dict) and "type" in part:
        if part["type"] in TEXT_PART_TYPES:
            return str(part.get("text", ""))
        return IMAGE_PLACEHOLDER
    if isinstance(part, dict) and set(part) == {"text"}:
        return str(part["text"])
    return tojson(part)


def content_text(content: object) -> str:
    """The text a chat template sees for a message's ``content``.

    A string stays as is, None is empty, a list of parts is joined by newlines (vLLM), and
    structured data without a part ``type`` (a tool result logged as an object) is JSON.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part_text(part) for part in content)
    return part_text(content)


def template_role(role: object) -> str | None:
    """The role a template sees for a logged one; None for a role that is not a string."""
    return ROLE_ALIASES.get(role, role) if isinstance(role, str) else None


def template_message(message: Message) -> Message:
    """One message as a chat template receives it (see the module docstring)."""
    prepared = dict(message)
    role = prepared.get("role")
    prepared["role"] = template_role(role) if isinstance(role, str) else role
    prepared["content"] = content_text(prepared.get("content"))
    reasoning = message_reasoning(message)
    if reasoning is not None:
        prepared["reasoning_content"] = reasoning
    return prepared


def message_reasoning(message: Message) -> object:
    """The message's reasoning, under whichever name it was logged, or None."""
    for field in REASONING_FIELDS:
        if message.get(field) is not None:
            return message[field]
    return None


def template_messages(request: ChatRequest) -> list[Message]:
    """The request's messages as a chat template receives them, system prompt first."""
    messages: list[Message] = []
    if request.system is not None:
        messages.append({"role": "system", "content": request.system})
    messages.extend(map(template_message, request.messages))
    return messages


def component_names(request: ChatRequest) -> list[str]:
    """Names of :func:`template_messages` entries, as components: ``system``, ``messages[i]``."""
    names = ["system"] if request.system is not None else []
    names.extend(map(message_name, range(len(request.messages))))
    return names


_MESSAGE_NAMES: list[str] = []


def message_name(index: int) -> str:
    """``messages[index]``, one string object per index."""
    while len(_MESSAGE_NAMES) <= index:
        _MESSAGE_NAMES.append(f"messages[{len(_MESSAGE_NAMES)}]")
    return _MESSAGE_NAMES[index]


def message_key(message: Message) -> tuple[Hashable, ...] | None:
    """An exact, hashable stand-in for all the Qwen3 template reads of ``message``, or None.

    Strings stand for themselves; other content and tool calls for their ``marshal`` bytes,
    which load back to equal values of the same types (``True`` and ``1`` differ), so equal
    keys render alike. None when a value cannot be marshalled or the role is not a string.
    """
    content = message.get("content")
    if content is not None and type(content) is not str:
        content = marshalled(content)
        if content is None:
            return None
    role = message.get("role")
    if role is not None and type(role) is not str:
        return None
    if role != "assistant":
        return role, content
    reasoning = message_reasoning(message)
    if reasoning is not None and type(reasoning) is not str:
        return None
    calls = message.get("tool_calls")
    if not calls:
        return role, content, reasoning, None
    calls = marshalled(calls)
    return None if calls is None else (role, content, reasoning, calls)


def marshalled(value: PlainData) -> bytes | None:
    """``value`` as marshal bytes (an exact, fast key), or None when it is not plain data."""
    try:
        return marshal.dumps(value)
    except ValueError:  # not plain data
        return None
