"""Anthropic Messages request bodies, with their ``cache_control`` breakpoints."""

from __future__ import annotations

from typing import Any

from prefixlint.sources.logs.base import (
    JsonObject,
    RequestFields,
    Skip,
    breakpoint_ttl,
    request_params,
)
from prefixlint.sources.logs.usage import anthropic_usage

# Each logged message's conversion, by identity: the log's decoder hands out a repeated
# message as the same object, so a turn-by-turn log converts each message once, and the
# converted messages are shared as the logged ones are. Each is held, so that its id is not
# reused while it is here; past MAX_CONVERTED the memo starts again.
_converted: dict[int, tuple[Any, tuple[tuple[dict[str, Any], list[Any]], ...]]] = {}
MAX_CONVERTED = 1 << 14


class AnthropicReader:
    """Converts one Anthropic Messages request, collecting its cache breakpoints."""

    def __init__(self) -> None:
        self.breakpoints: list[tuple[str, float]] = []
        self.messages: list[JsonObject] = []
        self._emitted: list[tuple[JsonObject, list[Any]]] = []

    def mark(self, component: str, block: object) -> None:
        ttl = breakpoint_ttl(block.get("cache_control")) if isinstance(block, dict) else None
        if ttl is not None:
            self.breakpoints.append((component, ttl))

    def tools(self, tools: object) -> tuple[JsonObject, ...]:
        if tools is None:
            return ()
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            raise Skip("'tools' is not a list of objects")
        converted = []
        for index, tool in enumerate(tools):
            self.mark(f"tools[{index}]", tool)
            converted.append({k: v for k, v in tool.items() if k != "cache_control"})
        return tuple(converted)

    def system(self, system: object) -> str | None:
        if system is None or isinstance(system, str):
            return system
        if not isinstance(system, list):
            raise Skip("'system' is neither a string nor a list of blocks")
        texts = []
        for block in system:
            if not isinstance(block, dict):
                raise Skip("a 'system' block is not an object")
            texts.append(str(block.get("text", "")))
            self.mark("system", block)
        return "\n".join(texts)

    def emit(self, message: JsonObject, blocks: list[JsonObject]) -> None:
        name = f"messages[{len(self.messages)}]"
        for block in blocks:
            self.mark(name, block)
        self.messages.append(message)
        self._emitted.append((message, blocks))

    def message(self, index: int, message: object) -> None:
        """Convert one logged message (the messages it becomes are emitted in order)."""
        known = _converted.get(id(message))
        if known is not None and known[0] is message:
            for converted, blocks in known[1]:
                self.emit(converted, blocks)
            return
        self._emitted = []
        self._convert(index, message)
        if len(_converted) >= MAX_CONVERTED:
            _converted.clear()
        _converted[id(message)] = (message, tuple(self._emitted))

    def _convert(self, index: int, message: object) -> None:
        if not isinstance(message, dict) or "role" not in message:
            raise Skip(f"messages[{index}] is not a message object with a role")
        content = message.get("content")
        role = message["role"]
        if isinstance(content, str) or content is None:
            self.emit({"role": role, "content": content}, [])
            return
        if not isinstance(content, list):
            raise Skip(f"messages[{index}].content is neither a string nor a list of blocks")
        parts, part_blocks, calls, reasoning = [], [], [], []
        for block in content:
            if not isinstance(block, dict):
                raise Skip(f"messages[{index}] has a content block that is not an object")
            kind = block.get("type")
            if kind == "tool_result":
                result = block.get("content")
                if isinstance(result, list):
                    result = [{k: v for k, v in b.items() if k != "cache_control"} for b in result]
                tool_message = {
                    "role": "tool",
                    "tool_call_id": block.get("tool_use_id"),
                    "content": result,
                }
                self.emit(tool_message, [block])
            elif kind == "tool_use":
                call = {"name": block.get("name"), "arguments": block.get("input", {})}
                calls.append({"id": block.get("id"), "type": "function", "function": call})
                part_blocks.append(block)
            elif kind == "thinking":
                reasoning.append(str(block.get("thinking", "")))
                part_blocks.append(block)
            elif kind == "redacted_thinking":
                part_blocks.append(block)
            else:
                parts.append({k: v for k, v in block.items() if k != "cache_control"})
                part_blocks.append(block)
        if not (parts or calls or reasoning) and not part_blocks:
            return
        converted: dict[str, Any] = {"role": role, "content": parts}
        if calls:
            converted["tool_calls"] = calls
        if reasoning:
            converted["reasoning_content"] = "\n".join(reasoning)
        self.emit(converted, part_blocks)


def read_anthropic(body: JsonObject, response: JsonObject) -> RequestFields:
    if "messages" not in body:
        raise Skip("anthropic request without 'messages'")
    if not isinstance(body["messages"], list):
        raise Skip("'messages' is not a list")
    reader = AnthropicReader()
    tools = reader.tools(body.get("tools"))
    system = reader.system(body.get("system"))
    for index, message in enumerate(body["messages"]):
        reader.message(index, message)
    automatic = breakpoint_ttl(body.get("cache_control"))
    if automatic is not None and reader.messages:
        reader.breakpoints.append((f"messages[{len(reader.messages) - 1}]", automatic))
    params = {k: v for k, v in request_params(body).items() if k != "cache_control"}
    if automatic is not None:
        params["cache_control"] = body["cache_control"]
    return {
        "model": body.get("model"),
        "system": system,
        "messages": tuple(reader.messages),
        "tools": tools,
        "params": params,
        "cache_breakpoints": tuple(reader.breakpoints),
        "usage": anthropic_usage(response.get("usage")),
    }
