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
from collections.abc import Sequence

from prefixlint.chat_formats.memo import LRU
from prefixlint.chat_formats.pieces import Piece

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
TOOL_BLOCKS = LRU(256)


def tojson(value) -> str:
    """transformers' ``tojson`` filter with its default arguments."""
    return json.dumps(value, ensure_ascii=False)


def _jinja_text(mapping: dict, key: str) -> str:
    """What ``{{ mapping.key }}`` prints: nothing when undefined, ``None`` for None."""
    if key not in mapping:
        return ""
    value = mapping[key]
    return value if isinstance(value, str) else str(value)


def _is_tool_response(content: str) -> bool:
    return content.startswith("<tool_response>") and content.endswith("</tool_response>")


def last_query_index(messages: Sequence[dict]) -> int:
    """Index of the last user message that is not a wrapped tool response."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message["role"] == "user" and not _is_tool_response(message["content"]):
            return index
    return len(messages) - 1


def _render_tool_block(tools: Sequence[dict]) -> tuple[Piece, ...]:
    block = [("tools", TOOLS_HEADER)]
    block.extend((f"tools[{i}]", "\n" + tojson(tool)) for i, tool in enumerate(tools))
    block.append(("tools", TOOLS_FOOTER))
    return tuple(block)


def _tool_block(tools: Sequence[dict]) -> tuple[Piece, ...]:
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


def _system_turn(
    messages: Sequence[dict], names: Sequence[str], tools: Sequence[dict], tools_first: bool
) -> list[Piece]:
    has_system = bool(messages) and messages[0]["role"] == "system"
    system_name = names[0] if has_system else "tools"
    system_text = messages[0]["content"] if has_system else ""
    if not tools:
        if not has_system:
            return []
        return [(system_name, "<|im_start|>system\n" + system_text + "<|im_end|>\n")]
    if tools_first:
        pieces = [("tools", "<|im_start|>system\n"), *_tool_block(tools)]
        if has_system:
            pieces.append((system_name, "\n\n" + system_text))
        return [*pieces, (system_name, "<|im_end|>\n")]
    opening = "<|im_start|>system\n" + (system_text + "\n\n" if has_system else "")
    return [(system_name, opening), *_tool_block(tools), ("tools", "<|im_end|>\n")]


def _tool_calls_text(tool_calls, content: str) -> str:
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


def _assistant_text(message: dict, index: int, is_last: bool, last_query: int) -> str:
    content = message["content"]
    reasoning = ""
    if message.get("reasoning_content") is not None:
        reasoning = message["reasoning_content"]
    elif "</think>" in content:
        reasoning = content.split("</think>")[0].rstrip("\n").split("<think>")[-1].lstrip("\n")
        content = content.split("</think>")[-1].lstrip("\n")
    if index > last_query and (is_last or reasoning):
        body = "<think>\n" + reasoning.strip("\n") + "\n</think>\n\n" + content.lstrip("\n")
    else:
        body = content
    text = "<|im_start|>assistant\n" + body
    if message.get("tool_calls"):
        text += _tool_calls_text(message["tool_calls"], content)
    return text + "<|im_end|>\n"


def _tool_text(messages: Sequence[dict], index: int) -> str:
    opens = index == 0 or messages[index - 1]["role"] != "tool"
    closes = index == len(messages) - 1 or messages[index + 1]["role"] != "tool"
    return (
        ("<|im_start|>user" if opens else "")
        + "\n<tool_response>\n"
        + messages[index]["content"]
        + "\n</tool_response>"
        + ("<|im_end|>\n" if closes else "")
    )


def qwen3_pieces(
    messages: Sequence[dict],
    names: Sequence[str],
    tools: Sequence[dict],
    *,
    enable_thinking: bool = False,
    tools_first: bool = False,
) -> list[Piece]:
    """The rendered prompt as ``(component name, text)`` pieces in order.

    ``names[i]`` names ``messages[i]``. ``tools_first`` puts the tool block before the system
    text (Anthropic's prefix order); the official template puts it after.
    """
    pieces = _system_turn(messages, names, tools, tools_first)
    last_query = last_query_index(messages)
    for index, message in enumerate(messages):
        role = message["role"]
        if role == "user" or (role == "system" and index > 0):
            text = "<|im_start|>" + role + "\n" + message["content"] + "<|im_end|>\n"
        elif role == "assistant":
            is_last = index == len(messages) - 1
            text = _assistant_text(message, index, is_last, last_query)
        elif role == "tool":
            text = _tool_text(messages, index)
        else:
            text = ""
        pieces.append((names[index], text))
    prompt = "<|im_start|>assistant\n" + ("" if enable_thinking else THINKING_OFF)
    pieces.append(("generation_prompt", prompt))
    return pieces
