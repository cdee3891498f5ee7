"""Read logged LLM requests (JSONL) into :class:`~prefixlint.request.ChatRequest` objects.

``read_log(path_or_dash, format="auto")`` streams a JSONL file (``.gz`` by suffix or by its
magic bytes; ``-`` reads stdin) one line at a time and yields, per line, either a
``ChatRequest`` or a :class:`SkippedLine` with a one-line reason. It never raises on a bad
line: ``lines read == requests + skipped`` (a blank line is skipped with reason
``blank line``). It raises :class:`LogReadError` only when the file cannot be opened, is not
valid gzip, or is past a size limit (:mod:`prefixlint.sources.loglimits`: a line over the
line limit is skipped). Fields of the wrong type (a ``role`` that is a list, a ``model`` that
is an object, a lone surrogate) skip the line with a reason
(:mod:`prefixlint.sources.logshape`).

A line is a raw request body, or an envelope ``{"timestamp", "session_id", "route",
"request", "response"}``. Envelope variants accepted: ``ts``/``time``/``created_at`` for the
time (ISO 8601 string, or epoch seconds, milliseconds, microseconds or nanoseconds, told
apart by magnitude); ``metadata.session_id``, then ``user`` (envelope, then body) for the
session; ``path``/``endpoint`` for the route. Anthropic's ``metadata.user_id`` in the body is
used when nothing else names a session.

Formats, detected per line (``format=`` forces one):

``openai-chat``
    ``messages`` (kept as logged; legacy ``function_call`` and ``function`` messages become
    ``tool_calls`` and ``tool`` messages), ``tools`` (legacy ``functions`` are wrapped as
    ``{"type": "function", "function": ...}``). Usage: ``usage.prompt_tokens``,
    ``usage.prompt_tokens_details.cached_tokens`` (or top-level ``usage.cached_tokens``,
    DeepSeek's ``prompt_cache_hit_tokens``), ``cache_write_tokens`` in either place.
``openai-responses``
    ``instructions`` -> ``system``; ``input`` as a string (one user message) or items:
    messages (``input_text``/``output_text`` parts become text parts), ``function_call`` ->
    assistant ``tool_calls``, ``function_call_output`` -> ``tool`` messages, ``reasoning``
    summaries -> the next assistant message's ``reasoning_content``; other item types are
    ignored. Usage: ``usage.input_tokens``, ``usage.input_tokens_details.cached_tokens``.
``anthropic``
    ``system`` (string, or text blocks joined by ``"\\n"``), ``tools`` (``cache_control``
    removed), ``messages`` whose blocks map as: ``text`` -> text part, ``thinking`` ->
    ``reasoning_content``, ``tool_use`` -> ``tool_calls`` (arguments kept as the ``input``
    object), ``tool_result`` -> a ``tool`` message (placed before the rest of that user
    turn), images/documents -> non-text parts. Every ``cache_control`` (on a tool, a system
    block, a message block, or top-level for automatic caching, which marks the last message)
    becomes a ``cache_breakpoints`` entry ``(component, ttl)`` with ttl 300, or 3600 for
    ``"1h"``. Usage: ``input_tokens + cache_read_input_tokens + cache_creation_input_tokens``
    is the prompt; cached = read, written = creation.
``litellm``
    LiteLLM's ``StandardLoggingPayload``: ``messages`` (a string is one user message),
    ``model``, ``model_parameters`` (``tools`` and other prefix-relevant parameters),
    ``startTime`` (epoch seconds), ``trace_id`` (session), ``response.usage`` (OpenAI shape,
    plus ``cache_read_input_tokens``/``cache_creation_input_tokens`` when the backend is
    Anthropic), else top-level ``prompt_tokens``.
``otel``
    One OpenTelemetry span per line, attributes as a JSON object or as OTLP
    ``[{"key", "value": {"stringValue" | "intValue" | ...}}]`` (an OTLP ``resourceSpans``
    document holding exactly one span is unwrapped). Read: ``gen_ai.system_instructions``,
    ``gen_ai.input.messages`` (parts ``text``, ``tool_call``, ``tool_call_response``;
    structured or a JSON string), ``gen_ai.tool.definitions``, ``gen_ai.request.model``,
    ``gen_ai.conversation.id`` (or ``session.id``), ``gen_ai.usage.input_tokens``,
    ``gen_ai.usage.cache_read.input_tokens`` / ``gen_ai.usage.cache_creation.input_tokens``
    (and the older ``..._input_tokens`` spellings); the older flattened
    ``gen_ai.prompt.N.role``/``.content``/``.tool_calls.M.{id,name,arguments}``/
    ``.tool_call_id`` with ``llm.request.functions.N.{name,description,parameters}``; and the
    1.2x events ``gen_ai.{system,user,assistant,tool}.message`` (``content``,
    ``tool_calls``, ``id`` in attributes or body). Time: ``startTimeUnixNano`` or
    ``start_time``.
``mooncake``
    ``timestamp`` (milliseconds), ``input_length``, ``output_length``, ``hash_ids``: no text.

Timestamps are normalised to epoch seconds (Mooncake's relative milliseconds to seconds).
``params`` keeps every request field except the prompt content (``messages``, ``tools``,
``system``, ...), ``model`` and fields that only steer sampling or transport
(:data:`SAMPLING_FIELDS`). ``metadata`` keeps the logged ``metadata`` object (the body's, else
the envelope's) for ``--session-key metadata.FIELD``.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import os
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, BinaryIO, Union

from prefixlint.request import ChatRequest, Usage
from prefixlint.sources.logjson import LineDecoder
from prefixlint.sources.loglimits import (
    DEFAULT_LIMITS,
    CountingReader,
    LogLimitError,
    LogLimits,
    OverlongLine,
    bounded_lines,
)
from prefixlint.sources.logshape import ShapeError, check_fields, lone_surrogate

FORMATS = ("openai-chat", "openai-responses", "anthropic", "litellm", "otel", "mooncake")
CONTENT_FIELDS = frozenset(
    {"model", "messages", "tools", "functions", "system", "input", "instructions"}
)
SAMPLING_FIELDS = frozenset(
    {
        "temperature", "top_p", "top_k", "min_p", "max_tokens", "max_completion_tokens",
        "max_output_tokens", "n", "stream", "stream_options", "stop", "stop_sequences",
        "seed", "presence_penalty", "frequency_penalty", "repetition_penalty", "logprobs",
        "top_logprobs", "logit_bias", "metadata", "store", "timeout",
    }
)  # fmt: skip
ENVELOPE_TIME_FIELDS = ("timestamp", "ts", "time", "created_at")
ENVELOPE_ROUTE_FIELDS = ("route", "path", "endpoint")
FIVE_MINUTES = 300.0
ONE_HOUR = 3600.0
MAX_COUNT = 2**63  # token counts and hash ids beyond 64 bits are not numbers a log means


@dataclass(frozen=True)
class SkippedLine:
    """A log line that yields no request, and why (one line)."""

    line: int
    reason: str


LogItem = Union[ChatRequest, SkippedLine]  # noqa: UP007 (isinstance-friendly on 3.10)


class LogReadError(Exception):
    """The log cannot be read at all (missing, unreadable, bad gzip)."""


class Skip(Exception):
    """Raised by a format reader when a line lacks what the format needs."""


# ---------------------------------------------------------------- small value helpers


def as_dict(value) -> dict:
    return value if isinstance(value, dict) else {}


def int_or_none(value) -> int | None:
    """An integer within 64 bits from an int, an integral float or a string of digits."""
    if isinstance(value, bool):
        return None
    integral = isinstance(value, float) and value.is_integer()
    if integral or (isinstance(value, str) and value.strip().isdigit() and len(value) <= 40):
        value = int(value)
    if isinstance(value, int) and -MAX_COUNT <= value < MAX_COUNT:
        return value
    return None


def first_present(mapping: dict, keys) -> Any:
    for key in keys:
        if mapping.get(key) is not None:
            return mapping[key]
    return None


def parse_timestamp(value) -> float | None:
    """Epoch seconds from an ISO 8601 string (UTC unless it says otherwise) or an epoch
    number in s, ms, us or ns."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            return parse_timestamp(float(text))
        except ValueError:
            pass
        try:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        return moment.timestamp()
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    number = float(value)
    for limit, scale in ((1e17, 1e9), (1e14, 1e6), (1e11, 1e3)):
        if abs(number) >= limit:
            return number / scale
    return number


def breakpoint_ttl(cache_control) -> float | None:
    """TTL in seconds of an Anthropic ``cache_control`` marker, None when there is none."""
    if not isinstance(cache_control, dict):
        return None
    return ONE_HOUR if cache_control.get("ttl") == "1h" else FIVE_MINUTES


def request_params(body: dict) -> dict:
    return {
        key: value
        for key, value in body.items()
        if key not in CONTENT_FIELDS and key not in SAMPLING_FIELDS
    }


def parse_json_value(value):
    """A structured attribute value, decoding it when it was recorded as a JSON string."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


# ---------------------------------------------------------------- usage


def first_in(mappings, keys) -> Any:
    """The first non-null value of ``keys`` in the first mapping that has one."""
    for mapping in mappings:
        value = first_present(mapping, keys)
        if value is not None:
            return value
    return None


def openai_usage(usage) -> Usage | None:
    """Chat Completions usage (also LiteLLM's, which adds Anthropic's cache fields)."""
    if not isinstance(usage, dict):
        return None
    details = as_dict(usage.get("prompt_tokens_details"))
    cached = first_in(
        (details, usage),
        ("cached_tokens", "prompt_cache_hit_tokens", "cache_read_input_tokens"),
    )
    written = first_in((details, usage), ("cache_write_tokens", "cache_creation_input_tokens"))
    return Usage(int_or_none(usage.get("prompt_tokens")), int_or_none(cached), int_or_none(written))


def responses_usage(usage) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    details = as_dict(usage.get("input_tokens_details"))
    return Usage(
        int_or_none(usage.get("input_tokens")),
        int_or_none(details.get("cached_tokens")),
        int_or_none(details.get("cache_write_tokens")),
    )


def anthropic_usage(usage) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    uncached = int_or_none(usage.get("input_tokens"))
    read = int_or_none(usage.get("cache_read_input_tokens"))
    written = int_or_none(usage.get("cache_creation_input_tokens"))
    prompt = None if uncached is None else uncached + (read or 0) + (written or 0)
    return Usage(prompt, read, written)


# ---------------------------------------------------------------- openai chat


def legacy_function_message(message: dict) -> dict:
    """A copy of ``message`` with legacy function calling as tool calling."""
    message = dict(message)
    if message["role"] == "function":
        message["role"] = "tool"
    call = message.pop("function_call", None)
    if isinstance(call, dict) and not message.get("tool_calls"):
        message["tool_calls"] = [{"type": "function", "function": call}]
    return message


def openai_chat_messages(messages) -> tuple[dict, ...]:
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


def openai_chat_tools(body: dict) -> tuple[dict, ...]:
    tools = body.get("tools")
    if tools is None and isinstance(body.get("functions"), list):
        tools = [{"type": "function", "function": f} for f in body["functions"]]
    if tools is None:
        return ()
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise Skip("'tools' is not a list of objects")
    return tuple(tools)


def read_openai_chat(body: dict, response: dict) -> dict:
    if "messages" not in body:
        raise Skip("openai-chat request without 'messages'")
    return {
        "model": body.get("model"),
        "messages": openai_chat_messages(body["messages"]),
        "tools": openai_chat_tools(body),
        "params": request_params(body),
        "usage": openai_usage(response.get("usage")),
    }


# ---------------------------------------------------------------- openai responses


def responses_part(part) -> dict:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text"):
        return {"type": "text", "text": part.get("text", "")}
    return part if isinstance(part, dict) else {"type": "unknown"}


def responses_messages(items) -> tuple[dict, ...]:
    if isinstance(items, str):
        return ({"role": "user", "content": items},)
    if not isinstance(items, list):
        raise Skip("'input' is neither a string nor a list of items")
    messages: list[dict] = []
    reasoning: str | None = None

    def assistant() -> dict:
        nonlocal reasoning
        last = messages[-1] if messages else None
        if last is not None and last["role"] == "assistant" and reasoning is None:
            return last
        message = {"role": "assistant", "content": None}
        if reasoning is not None:
            message["reasoning_content"] = reasoning
            reasoning = None
        messages.append(message)
        return message

    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise Skip(f"input[{index}] is not an object")
        kind = item.get("type", "message")
        if kind == "message" and "role" in item:
            content = item.get("content")
            if isinstance(content, list):
                content = [responses_part(part) for part in content]
            if item["role"] == "assistant":
                message = assistant()
                message["content"] = content
            else:
                messages.append({"role": item["role"], "content": content})
        elif kind == "function_call":
            call = {
                "id": item.get("call_id"),
                "type": "function",
                "function": {"name": item.get("name"), "arguments": item.get("arguments")},
            }
            assistant().setdefault("tool_calls", []).append(call)
        elif kind == "function_call_output":
            output = item.get("output")
            if isinstance(output, list):
                output = [responses_part(part) for part in output]
            messages.append(
                {"role": "tool", "tool_call_id": item.get("call_id"), "content": output}
            )
        elif kind == "reasoning":
            summary = item.get("summary") or []
            reasoning = "\n".join(
                str(part.get("text", "")) for part in summary if isinstance(part, dict)
            )
    return tuple(messages)


def read_openai_responses(body: dict, response: dict) -> dict:
    if "input" not in body and "instructions" not in body:
        raise Skip("openai-responses request without 'input' or 'instructions'")
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise Skip("'instructions' is not a string")
    tools = body.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise Skip("'tools' is not a list of objects")
    return {
        "model": body.get("model"),
        "system": instructions,
        "messages": responses_messages(body.get("input", [])),
        "tools": tuple(tools),
        "params": request_params(body),
        "usage": responses_usage(response.get("usage")),
    }


# ---------------------------------------------------------------- anthropic


class AnthropicReader:
    """Converts one Anthropic Messages request, collecting its cache breakpoints."""

    def __init__(self) -> None:
        self.breakpoints: list[tuple[str, float]] = []
        self.messages: list[dict] = []

    def mark(self, component: str, block) -> None:
        ttl = breakpoint_ttl(block.get("cache_control")) if isinstance(block, dict) else None
        if ttl is not None:
            self.breakpoints.append((component, ttl))

    def tools(self, tools) -> tuple[dict, ...]:
        if tools is None:
            return ()
        if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
            raise Skip("'tools' is not a list of objects")
        converted = []
        for index, tool in enumerate(tools):
            self.mark(f"tools[{index}]", tool)
            converted.append({k: v for k, v in tool.items() if k != "cache_control"})
        return tuple(converted)

    def system(self, system) -> str | None:
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

    def emit(self, message: dict, blocks: list) -> None:
        name = f"messages[{len(self.messages)}]"
        for block in blocks:
            self.mark(name, block)
        self.messages.append(message)

    def message(self, index: int, message) -> None:
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


def read_anthropic(body: dict, response: dict) -> dict:
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


# ---------------------------------------------------------------- litellm


def read_litellm(payload: dict, response: dict) -> dict:
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


# ---------------------------------------------------------------- opentelemetry


def otlp_value(value):
    """The Python value of an OTLP ``AnyValue`` (``{"stringValue": ...}`` and friends)."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int_or_none(value["intValue"])
    if "arrayValue" in value:
        return [otlp_value(v) for v in as_dict(value["arrayValue"]).get("values", [])]
    if "kvlistValue" in value:
        return otlp_attributes(as_dict(value["kvlistValue"]).get("values", []))
    return None


def otlp_attributes(attributes) -> dict:
    if isinstance(attributes, dict):
        return attributes
    if isinstance(attributes, list):
        return {
            a["key"]: otlp_value(a.get("value"))
            for a in attributes
            if isinstance(a, dict) and "key" in a
        }
    return {}


def unwrap_otlp(span: dict) -> dict:
    if "resourceSpans" not in span:
        return span
    spans = [
        s
        for resource in span.get("resourceSpans") or []
        for scope in as_dict(resource).get("scopeSpans") or []
        for s in as_dict(scope).get("spans") or []
    ]
    if len(spans) != 1:
        raise Skip(f"OTLP document with {len(spans)} spans: export one span per line")
    return spans[0]


def semconv_messages(value) -> list[dict]:
    """``gen_ai.input.messages`` (role + parts) as OpenAI-shaped messages."""
    value = parse_json_value(value)
    if not isinstance(value, list):
        raise Skip("'gen_ai.input.messages' is not a list")
    messages = []
    for entry in value:
        if not isinstance(entry, dict):
            raise Skip("a 'gen_ai.input.messages' entry is not an object")
        texts, calls = [], []
        for part in entry.get("parts") or []:
            kind = as_dict(part).get("type")
            if kind == "text":
                texts.append({"type": "text", "text": str(part.get("content", ""))})
            elif kind == "tool_call":
                function = {"name": part.get("name"), "arguments": part.get("arguments")}
                calls.append({"id": part.get("id"), "type": "function", "function": function})
            elif kind == "tool_call_response":
                response = part.get("response")
                if not isinstance(response, str):
                    response = json.dumps(response, ensure_ascii=False)
                messages.append(
                    {"role": "tool", "tool_call_id": part.get("id"), "content": response}
                )
            elif kind == "reasoning":
                entry = {**entry, "reasoning_content": str(part.get("content", ""))}
            elif isinstance(part, dict):
                texts.append(part)
        if texts or calls or entry.get("role") != "tool":
            message = {"role": entry.get("role"), "content": texts}
            if calls:
                message["tool_calls"] = calls
            if entry.get("reasoning_content") is not None:
                message["reasoning_content"] = entry["reasoning_content"]
            messages.append(message)
    return messages


def semconv_system(value) -> str | None:
    value = parse_json_value(value)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(part.get("content", "")) for part in value if isinstance(part, dict))
    raise Skip("'gen_ai.system_instructions' is neither text nor a list of parts")


def indexed(attributes: dict, prefix: str) -> dict[int, dict]:
    """``prefix.N.rest`` attributes grouped by N: ``{N: {rest: value}}``."""
    groups: dict[int, dict] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        number, _, rest = key[len(prefix) :].partition(".")
        if number.isdigit() and rest:
            groups.setdefault(int(number), {})[rest] = value
    return groups


def flattened_prompt(attributes: dict) -> list[dict]:
    """The older ``gen_ai.prompt.N.*`` attributes (OpenLLMetry) as messages."""
    messages = []
    for _, fields in sorted(indexed(attributes, "gen_ai.prompt.").items()):
        message = {"role": fields.get("role"), "content": fields.get("content")}
        calls = indexed(fields, "tool_calls.")
        if calls:
            message["tool_calls"] = [
                {
                    "id": call.get("id"),
                    "type": "function",
                    "function": {"name": call.get("name"), "arguments": call.get("arguments")},
                }
                for _, call in sorted(calls.items())
            ]
        if fields.get("tool_call_id") is not None:
            message["tool_call_id"] = fields["tool_call_id"]
        messages.append(message)
    return messages


def flattened_tools(attributes: dict) -> list[dict]:
    tools = []
    for _, fields in sorted(indexed(attributes, "llm.request.functions.").items()):
        function = {"name": fields.get("name"), "description": fields.get("description")}
        if fields.get("parameters") is not None:
            function["parameters"] = parse_json_value(fields["parameters"])
        tools.append({"type": "function", "function": function})
    return tools


def event_messages(events) -> list[dict]:
    """The 1.2x-era ``gen_ai.<role>.message`` span events as messages."""
    messages = []
    for event in events if isinstance(events, list) else []:
        name = as_dict(event).get("name", "")
        if not (name.startswith("gen_ai.") and name.endswith(".message")):
            continue
        fields = {
            **as_dict(parse_json_value(event.get("body"))),
            **otlp_attributes(event.get("attributes")),
        }
        role = name[len("gen_ai.") : -len(".message")]
        message = {"role": fields.get("role", role), "content": fields.get("content")}
        if fields.get("tool_calls"):
            message["tool_calls"] = parse_json_value(fields["tool_calls"])
        if role == "tool" and fields.get("id") is not None:
            message["tool_call_id"] = fields["id"]
        messages.append(message)
    return messages


def read_otel(span: dict, response: dict) -> dict:
    span = unwrap_otlp(span)
    attributes = otlp_attributes(span.get("attributes", span))
    system = semconv_system(attributes.get("gen_ai.system_instructions"))
    if attributes.get("gen_ai.input.messages") is not None:
        messages = semconv_messages(attributes["gen_ai.input.messages"])
    else:
        messages = flattened_prompt(attributes) or event_messages(span.get("events"))
    if not messages and system is None:
        raise Skip("otel span without gen_ai input messages")
    tools = parse_json_value(attributes.get("gen_ai.tool.definitions"))
    if tools is None:
        tools = flattened_tools(attributes)
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        raise Skip("'gen_ai.tool.definitions' is not a list of objects")
    read = int_or_none(
        first_present(
            attributes,
            ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens"),
        )
    )
    written = int_or_none(
        first_present(
            attributes,
            (
                "gen_ai.usage.cache_creation.input_tokens",
                "gen_ai.usage.cache_creation_input_tokens",
            ),
        )
    )
    prompt = int_or_none(
        first_present(attributes, ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens"))
    )
    reported = (prompt, read, written) != (None, None, None)
    params = {
        key[len("gen_ai.request.") :]: value
        for key, value in attributes.items()
        if key.startswith("gen_ai.request.")
        and key != "gen_ai.request.model"
        and key[len("gen_ai.request.") :] not in SAMPLING_FIELDS
    }
    start = first_present(span, ("startTimeUnixNano", "start_time", "startTime"))
    return {
        "model": attributes.get("gen_ai.request.model"),
        "system": system,
        "messages": openai_chat_messages(messages),
        "tools": tuple(tools),
        "params": params,
        "usage": Usage(prompt, read, written) if reported else None,
        "timestamp": parse_timestamp(start),
        "session_id": first_present(attributes, ("gen_ai.conversation.id", "session.id")),
    }


# ---------------------------------------------------------------- mooncake


def read_mooncake(record: dict, response: dict) -> dict:
    hash_ids = record.get("hash_ids")
    if not isinstance(hash_ids, list) or not all(int_or_none(h) is not None for h in hash_ids):
        raise Skip("mooncake record without a list of integer 'hash_ids'")
    input_length = int_or_none(record.get("input_length"))
    if input_length is None:
        raise Skip("mooncake record without an integer 'input_length'")
    timestamp = record.get("timestamp")
    finite = isinstance(timestamp, (int, float)) and math.isfinite(timestamp)
    return {
        "hash_ids": tuple(int(h) for h in hash_ids),
        "input_length": input_length,
        "output_length": int_or_none(record.get("output_length")),
        "timestamp": timestamp / 1000 if finite else None,
    }


READERS = {
    "openai-chat": read_openai_chat,
    "openai-responses": read_openai_responses,
    "anthropic": read_anthropic,
    "litellm": read_litellm,
    "otel": read_otel,
    "mooncake": read_mooncake,
}

# ---------------------------------------------------------------- detection

ANTHROPIC_BLOCK_TYPES = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "document"}
)


def _block_type(block) -> str | None:
    """A content block's ``type`` when it is a string (JSON allows anything there)."""
    kind = as_dict(block).get("type")
    return kind if isinstance(kind, str) else None


def _has_cache_control(items) -> bool:
    return isinstance(items, list) and any(
        isinstance(item, dict) and "cache_control" in item for item in items
    )


def looks_anthropic(body: dict) -> bool:
    if "system" in body or "anthropic_version" in body or "cache_control" in body:
        return True
    tools = body.get("tools")
    if isinstance(tools, list):
        for tool in tools:
            if isinstance(tool, dict) and ("input_schema" in tool or "cache_control" in tool):
                return True
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and (
            _has_cache_control(content)
            or any(_block_type(block) in ANTHROPIC_BLOCK_TYPES for block in content)
            or any(_block_type(block) == "image" and "source" in block for block in content)
        ):
            return True
    return False


def detect_format(body: dict) -> str | None:
    """The format of one line's request object, or None when nothing fits."""
    if "hash_ids" in body and "input_length" in body:
        return "mooncake"
    if (
        "resourceSpans" in body
        or "attributes" in body
        or any(isinstance(key, str) and key.startswith("gen_ai.") for key in body)
    ):
        return "otel"
    if "messages" in body and ("model_parameters" in body or "startTime" in body):
        return "litellm"
    if "messages" in body:
        return "anthropic" if looks_anthropic(body) else "openai-chat"
    if "input" in body or "instructions" in body:
        return "openai-responses"
    return None


# ---------------------------------------------------------------- envelopes and lines


def split_envelope(record: dict) -> tuple[dict, dict, dict]:
    """``(body, response, envelope)``; a bare request body has an empty envelope."""
    if isinstance(record.get("request"), dict):
        return record["request"], as_dict(record.get("response")), record
    return record, {}, {}


def envelope_session(envelope: dict, body: dict) -> str | None:
    for value in (
        envelope.get("session_id"),
        as_dict(envelope.get("metadata")).get("session_id"),
        as_dict(body.get("metadata")).get("session_id"),
        envelope.get("user"),
        body.get("user"),
        as_dict(body.get("metadata")).get("user_id"),
    ):
        if value is not None:
            return str(value)
    return None


def parse_record(line_number: int, record: dict, format: str) -> LogItem:
    body, response, envelope = split_envelope(record)
    kind = detect_format(body) if format == "auto" else format
    if kind is None:
        keys = ", ".join(sorted(map(str, body))[:6]) or "none"
        return SkippedLine(line_number, f"unknown format (keys: {keys})")
    try:
        fields = READERS[kind](body, response)
    except Skip as exc:
        return SkippedLine(line_number, str(exc))
    if fields.get("timestamp") is None:
        fields["timestamp"] = parse_timestamp(first_present(envelope, ENVELOPE_TIME_FIELDS))
    if fields.get("session_id") is None:
        fields["session_id"] = envelope_session(envelope, body)
    fields["route"] = first_present(envelope, ENVELOPE_ROUTE_FIELDS)
    try:
        check_fields(fields)
    except ShapeError as exc:
        return SkippedLine(line_number, str(exc))
    metadata = as_dict(body.get("metadata")) or as_dict(envelope.get("metadata"))
    return ChatRequest(line=line_number, format=kind, metadata=metadata, **fields)


def parse_line(
    line_number: int,
    raw: bytes,
    format: str = "auto",
    decode: Callable[[str], Any] = json.loads,
) -> LogItem:
    """One JSONL line as a request, or the reason it is skipped; ``decode`` is ``json.loads``
    or a :class:`~prefixlint.sources.logjson.LineDecoder`, which raises what it raises."""
    if raw.isspace():  # before decoding: a run of millions of blank lines stays cheap
        return SkippedLine(line_number, "blank line")
    try:
        text = raw.decode("utf-8-sig" if line_number == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        return SkippedLine(line_number, f"not UTF-8 (byte {exc.start})")
    text = text.rstrip("\r\n")
    if not text.strip():
        return SkippedLine(line_number, "blank line")
    try:
        record = decode(text)
    except json.JSONDecodeError as exc:
        return SkippedLine(line_number, f"malformed JSON: {exc.msg} at column {exc.colno}")
    except RecursionError:
        return SkippedLine(line_number, "malformed JSON: nested too deeply")
    except ValueError:  # an integer too long to convert (Python's int_max_str_digits)
        return SkippedLine(line_number, "malformed JSON: a number has too many digits")
    if not isinstance(record, dict):
        return SkippedLine(line_number, f"not a JSON object (got {type(record).__name__})")
    surrogate = lone_surrogate(text, record)
    if surrogate is not None:
        return SkippedLine(line_number, surrogate)
    try:
        return parse_record(line_number, record, format)
    except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as exc:
        return SkippedLine(line_number, f"unexpected shape: {type(exc).__name__}: {exc}")


# ---------------------------------------------------------------- files


GZIP_MAGIC = b"\x1f\x8b"
GZIP_BUFFER = 1 << 20


def open_log(path: str, stack: contextlib.ExitStack) -> tuple[BinaryIO, CountingReader | None]:
    """The log's decompressed bytes and, for gzip, the counter of compressed bytes read;
    what must be closed goes on ``stack``.

    Raises :class:`LogReadError` when the file cannot be opened.
    """
    if path == "-":
        raw = sys.stdin.buffer
    else:
        try:
            raw = stack.enter_context(open(path, "rb"))  # noqa: SIM115
        except OSError as exc:
            raise LogReadError(f"{path}: cannot read log: {exc.strerror or exc}") from None
    if path.endswith(".gz") or (hasattr(raw, "peek") and raw.peek(2)[:2] == GZIP_MAGIC):
        compressed = CountingReader(raw)
        unzipped = stack.enter_context(gzip.GzipFile(fileobj=compressed, mode="rb"))
        # Buffered in C: reading a gzip log line by line costs no more than a plain one.
        return io.BufferedReader(unzipped, buffer_size=GZIP_BUFFER), compressed
    return raw, None


def read_log(
    path_or_dash: str | os.PathLike,
    *,
    format: str = "auto",
    limits: LogLimits = DEFAULT_LIMITS,
) -> Iterator[LogItem]:
    """Stream a JSONL log: one :data:`LogItem` per line (see the module docstring).

    The file is opened before this returns, so a missing or unreadable file raises
    :class:`LogReadError` here; a corrupt gzip stream, or a log past one of the size
    ``limits`` (:mod:`prefixlint.sources.loglimits`), raises it while iterating. A line
    over the line limit is skipped with its reason.
    Lines are decoded by one :class:`~prefixlint.sources.logjson.LineDecoder`: a message or
    tool list that repeats on later lines is the same object in every request holding it,
    so requests must not be mutated.
    """
    if format != "auto" and format not in READERS:
        raise ValueError(f"unknown log format {format!r}: use auto or one of {', '.join(FORMATS)}")
    path = os.fspath(path_or_dash)
    stack = contextlib.ExitStack()
    try:
        stream, compressed = open_log(path, stack)
    except BaseException:
        stack.close()
        raise
    return _items(path, bounded_lines(stream, limits, compressed), stack, format, limits)


def _items(
    path: str,
    lines: Iterator[bytes | OverlongLine],
    stack: contextlib.ExitStack,
    format: str,
    limits: LogLimits,
) -> Iterator[LogItem]:
    with stack:
        line_number = 0
        decode = LineDecoder()
        try:
            for raw in lines:
                line_number += 1
                if isinstance(raw, OverlongLine):
                    yield SkippedLine(line_number, raw.reason(limits.max_line_bytes))
                else:
                    yield parse_line(line_number, raw, format, decode)
        except LogLimitError as exc:
            raise LogReadError(f"{path}: line {line_number + 1}: {exc}") from None
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise LogReadError(
                f"{path}: line {line_number + 1}: not a valid gzip stream: {exc}"
            ) from None
        except OSError as exc:
            raise LogReadError(f"{path}: line {line_number + 1}: cannot read log: {exc}") from None
