"""LiteLLM's ``StandardLoggingPayload``."""

from __future__ import annotations

from prefixlint.request import Usage
from prefixlint.sources.logs.base import (
    JsonObject,
    RequestFields,
    Skip,
    as_dict,
    int_or_none,
    parse_timestamp,
    request_params,
)
from prefixlint.sources.logs.openai_chat import openai_chat_messages, openai_chat_tools
from prefixlint.sources.logs.usage import openai_usage


def read_litellm(payload: JsonObject, response: JsonObject) -> RequestFields:
    messages = payload.get("messages")
    if isinstance(messages, str):
        messages = [{"role": "user", "content": messages}]
    if not isinstance(messages, list):
        raise Skip("litellm payload without a 'messages' list")
    parameters = as_dict(payload.get("model_parameters"))
    response = as_dict(payload.get("response")) or response
    usage = openai_usage(response.get("usage"))
    if usage is None and payload.get("prompt_tokens") is not None:
        usage = Usage(int_or_none(payload.get("prompt_tokens")))
    return {
        "model": payload.get("model"),
        "messages": openai_chat_messages(messages),
        "tools": openai_chat_tools(parameters),
        "params": request_params(parameters),
        "usage": usage,
        "timestamp": parse_timestamp(payload.get("startTime")),
        "session_id": payload.get("trace_id"),
    }
