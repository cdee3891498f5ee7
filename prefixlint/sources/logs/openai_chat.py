"""OpenAI Chat Completions request bodies (and the legacy function-calling fields)."""

from __future__ import annotations

from prefixlint.sources.logs.base import JsonObject, RequestFields, Skip, request_params
from prefixlint.sources.logs.usage import openai_usage


def legacy_function_message(message: JsonObject) -> JsonObject:
    """A copy of ``message`` with legacy function calling as tool calling."""
    message = dict(message)
    if message["role"] == "function":
        message["role"] = "tool"
    call = message.pop("function_call", None)
    if isinstance(call, dict) and not message.get("tool_calls"):
        message["tool_calls"] = [{"type": "function", "function": call}]
    return message


def openai_chat_messages(messages: object) -> tuple[JsonObject, ...]:
    """The messages as logged (the same objects), legacy function messages converted."""
    if not isinstance(messages, list):
        raise Skip("'messages' is not a list")
    normalised = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or "role" not in message:
            raise Skip(f"messages[{index}] is not a message object with a role")
        if message["role"] == "function" or "function_call" in message:
            message = legacy_function_message(message)
        normalised.append(message)
    return tuple(normalised)


def openai_chat_tools(body: JsonObject) -> tuple[JsonObject, ...]:
    tools = body.get("tools")
    if tools is None and isinstance(body.get("functions"), list):
        tools = [{"type": "function", "function": f} for f in body["functions"]]
    if tools is None:
        return ()
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise Skip("'tools' is not a list of objects")
    return tuple(tools)


def read_openai_chat(body: JsonObject, response: JsonObject) -> RequestFields:
    if "messages" not in body:
        raise Skip("openai-chat request without 'messages'")
    return {
        "model": body.get("model"),
        "messages": openai_chat_messages(body["messages"]),
        "tools": openai_chat_tools(body),
        "params": request_params(body),
        "usage": openai_usage(response.get("usage")),
    }
