"""The official Qwen3 chat template, as Python that says which component emits which text.

Transcribed from Qwen/Qwen3-0.6B's ``tokenizer_config.json`` chat template (Apache-2.0; copy in
``fixtures/chat_templates/qwen3.jinja``), with the whitespace that transformers' ``trim_blocks`` and
``lstrip_blocks`` leave. ``tests/test_chat_qwen3.py`` renders the same requests through the
Jinja source in a sandbox and asserts equal text. The input is the template's view of a
request (``prefixlint.chat.template_messages``): every ``content`` is already a string.
"""

from __future__ import annotations

import json
import marshal
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from prefixlint.chat.pieces import Piece
from prefixlint.lru import LRU

TOOLS_HEADER = (
    "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_FOOTER = (
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments"
    " within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)
THINKING_OFF = "<think>\n\n</think>\n\n"
TOOL_BLOCKS: LRU[bytes, tuple[Piece, ...]] = LRU(256)


def tojson(value: object) -> str:
    """transformers' ``tojson`` filter with its default arguments."""
    return json.dumps(value, ensure_ascii=False)


def _jinja_text(mapping: Mapping[str, object], key: str) -> str:
    """What ``{{ mapping.key }}`` prints: nothing when undefined, ``None`` for None."""
    if key not in mapping:
        return ""
    value = mapping[key]
    return value if isinstance(value, str) else str(value)


def _is_tool_response(content: str) -> bool:
    return content.startswith("<tool_response>") and content.endswith("</tool_response>")


def last_query_index(roles: Sequence[str | None], content_at: Callable[[int], str]) -> int:
    """Index of the last user message that is not a wrapped tool response.

    ``roles[i]`` is message ``i``'s role and ``content_at(i)`` its content (asked only of
    user messages, from the last one back).
    """
    for index in range(len(roles) - 1, -1, -1):
        if roles[index] == "user" and not _is_tool_response(content_at(index)):
            return index
    return len(roles) - 1


def _render_tool_block(tools: Sequence[dict[str, Any]]) -> tuple[Piece, ...]:
    block: list[Piece] = [("tools", TOOLS_HEADER)]
    block.extend((f"tools[{i}]", "\n" + tojson(tool)) for i, tool in enumerate(tools))
    block.append(("tools", TOOLS_FOOTER))
    return tuple(block)


def _tool_block(tools: Sequence[dict[str, Any]]) -> tuple[Piece, ...]:
    """The tool block, remembered by the tools' ``marshal`` bytes.

    A log repeats one tool list on every line, and serialising it is most of the cost of
    rendering. ``marshal`` is twenty times faster than JSON and exact: equal bytes load back
    to equal values with equal key order, so they render to the same JSON (different bytes
    for equal values only cost a miss).
    """
    try:
        key = marshal.dumps(tuple(tools))
    except ValueError:  # not plain JSON data
        return _render_tool_block(tools)
    block = TOOL_BLOCKS.recall(key)
    if block is None:
        block = _render_tool_block(tools)
        TOOL_BLOCKS.remember(key, block)
    return block


def system_turn(
    name: str, system_text: str | None, tools: Sequence[dict[str, Any]], tools_first: bool
) -> list[Piece]:
    """The system turn: the system text (``None`` when there is none) and the tool block.

    ``name`` names the system text's component, which also holds the turn's markers; without
    a system text they belong to ``tools``, like the tool block's header and footer.
    """
    if not tools:
        if system_text is None:
            return []
        return [(name, "<|im_start|>system\n" + system_text + "<|im_end|>\n")]
    if system_text is None:
        name = "tools"
    if tools_first:
        pieces = [("tools", "<|im_start|>system\n"), *_tool_block(tools)]
        if system_text is not None:
            pieces.append((name, "\n\n" + system_text))
        return [*pieces, (name, "<|im_end|>\n")]
    opening = "<|im_start|>system\n" + ("" if system_text is None else system_text + "\n\n")
    return [(name, opening), *_tool_block(tools), ("tools", "<|im_end|>\n")]


def _tool_calls_text(tool_calls: Sequence[dict[str, Any]], content: str) -> str:
    text = ""
    for index, call in enumerate(tool_calls):
        if index > 0 or content:
            text += "\n"
        if call.get("function"):
            call = call["function"]
        arguments = call.get("arguments")
        if not isinstance(arguments, str):
            arguments = tojson(arguments)
        name = _jinja_text(call, "name")
        text += (
            '<tool_call>\n{"name": "' + name + '", "arguments": ' + arguments + "}\n</tool_call>"
        )
    return text


def _assistant_text(message: dict[str, Any], after_query: bool, is_last: bool) -> str:
    content: str = message["content"]
    reasoning: str = ""
    if message.get("reasoning_content") is not None:
        reasoning = message["reasoning_content"]
    elif "</think>" in content:
        reasoning = content.split("</think>")[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
        content = content.split("</think>")[-1].lstrip("\n")
    if after_query and (is_last or reasoning):
        body = "<think>\n" + reasoning.strip("\n") + "\n</think>\n\n" + content.lstrip("\n")
    else:
        body = content
    text = "<|im_start|>assistant\n" + body
    if message.get("tool_calls"):
        text += _tool_calls_text(message["tool_calls"], content)
    return text + "<|im_end|>\n"


def _tool_text(content: str, opens: bool, closes: bool) -> str:
    return (
        ("<|im_start|>user" if opens else "")
        + "\n<tool_response>\n"
        + content
        + "\n</tool_response>"
        + ("<|im_end|>\n" if closes else "")
    )


def turn_context(roles: Sequence[str | None], index: int, last_query: int) -> tuple[bool, bool]:
    """What besides message ``index`` itself its text depends on, given every role.

    An assistant turn depends on whether it follows the last query and, if so, whether it is
    the last message; a tool turn on whether it opens and closes a run of tool results.
    """
    role = roles[index]
    if role == "assistant":
        after_query = index > last_query
        return after_query, after_query and index == len(roles) - 1
    if role == "tool":
        opens = index == 0 or roles[index - 1] != "tool"
        return opens, index == len(roles) - 1 or roles[index + 1] != "tool"
    return False, False


def turn_text(message: dict[str, Any], context: tuple[bool, bool]) -> str:
    """The text of one message after the system turn, in its :func:`turn_context`."""
    role: str | None = message["role"]
    if role == "user" or role == "system":
        content: str = message["content"]
        return "<|im_start|>" + role + "\n" + content + "<|im_end|>\n"
    if role == "assistant":
        return _assistant_text(message, *context)
    if role == "tool":
        return _tool_text(message["content"], *context)
    return ""


def generation_prompt(enable_thinking: bool) -> Piece:
    """The assistant turn the prompt ends with."""
    return (
        "generation_prompt",
        "<|im_start|>assistant\n" + ("" if enable_thinking else THINKING_OFF),
    )


def qwen3_pieces(
    messages: Sequence[dict[str, Any]],
    names: Sequence[str],
    tools: Sequence[dict[str, Any]],
    *,
    enable_thinking: bool = False,
    tools_first: bool = False,
) -> list[Piece]:
    """The rendered prompt as ``(component name, text)`` pieces in order.

    ``names[i]`` names ``messages[i]``. ``tools_first`` puts the tool block before the system
    text (Anthropic's prefix order); the official template puts it after.
    """
    roles: list[str | None] = [message["role"] for message in messages]
    has_system = bool(messages) and roles[0] == "system"
    system_text: str | None = messages[0]["content"] if has_system else None
    pieces = system_turn(names[0] if has_system else "", system_text, tools, tools_first)
    last_query = last_query_index(roles, lambda index: messages[index]["content"])
    for index in range(1 if has_system else 0, len(messages)):
        context = turn_context(roles, index, last_query)
        pieces.append((names[index], turn_text(messages[index], context)))
    pieces.append(generation_prompt(enable_thinking))
    return pieces
