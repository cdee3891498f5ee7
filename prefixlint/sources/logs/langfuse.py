"""Langfuse observation exports: one ``GENERATION`` observation per line.

Read: ``input`` (a list of chat messages, an object with ``messages`` and ``tools``, or a
string that is one user message), ``model``, ``modelParameters`` (as request parameters),
``startTime`` (the request time), ``sessionId`` (the session; a trace id names one request's
trace, not a conversation) and the usage. Langfuse stores usage as ``usageDetails``, in which
every key that holds ``input`` is a part of the prompt (``input`` itself counts only the
tokens that were neither read from nor written to the cache, ``input_cached_tokens`` and
``input_cache_creation`` the others), or as the older ``usage`` object (``input``,
``output``, ``total``). Provider keys passed through as they were (``cache_read_input_tokens``,
``cache_creation_input_tokens``) are read too.
"""

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

CACHED_KEYS = ("input_cached_tokens", "cache_read_input_tokens", "input_cache_read")
WRITTEN_KEYS = ("input_cache_creation", "cache_creation_input_tokens", "input_cache_write")


def looks_langfuse(body: JsonObject) -> bool:
    """An exported observation: a trace id, a start time and an input."""
    return "traceId" in body and "startTime" in body and "input" in body


def langfuse_usage(observation: JsonObject) -> Usage | None:
    details = as_dict(observation.get("usageDetails"))
    if details:
        parts = {key: int_or_none(value) for key, value in details.items() if "input" in key}
        known = [value for value in parts.values() if value is not None]
        cached = next((parts[k] for k in CACHED_KEYS if parts.get(k) is not None), None)
        written = next((parts[k] for k in WRITTEN_KEYS if parts.get(k) is not None), None)
        return Usage(sum(known) if known else None, cached, written)
    legacy = as_dict(observation.get("usage"))
    prompt = int_or_none(legacy.get("input", legacy.get("promptTokens")))
    return Usage(prompt) if prompt is not None else None


def read_langfuse(observation: JsonObject, response: JsonObject) -> RequestFields:
    given = observation.get("input")
    tools: tuple[JsonObject, ...] = ()
    if isinstance(given, str):
        given = [{"role": "user", "content": given}]
    elif isinstance(given, dict):
        tools = openai_chat_tools(given)
        given = given.get("messages")
    if not isinstance(given, list):
        raise Skip("langfuse observation without a list of input messages")
    return {
        "model": observation.get("model"),
        "messages": openai_chat_messages(given),
        "tools": tools,
        "params": request_params(as_dict(observation.get("modelParameters"))),
        "usage": langfuse_usage(observation),
        "timestamp": parse_timestamp(observation.get("startTime")),
        "session_id": observation.get("sessionId"),
    }
