"""OpenInference spans (Arize Phoenix and the OpenInference instrumentors): one span per line.

Attributes follow the OpenInference semantic conventions
(https://arize-ai.github.io/openinference/spec/attributes/semantic-conventions.html), either
flattened (``llm.input_messages.0.message.role``) or nested (``{"llm": {"input_messages":
[{"message": {"role": ...}}]}}``, as Phoenix exports them), or a mix; both are flattened to
dotted keys first. A ``attributes.`` prefix (a span dataframe's column names) is dropped.

Read: ``llm.input_messages.N.message.{role, content, name, tool_call_id}``, the parts
``message.contents.M.message_content.{type, text}``, the calls
``message.tool_calls.M.tool_call.{id, function.name, function.arguments}``,
``llm.tools.N.tool.json_schema`` (a JSON string), ``llm.invocation_parameters`` (a JSON
string: request parameters), ``llm.model_name``, ``session.id``, ``llm.token_count.prompt``
with ``llm.token_count.prompt_details.cache_read`` / ``.cache_write``, and the span's
``start_time`` (or ``startTimeUnixNano``). An OTLP ``resourceSpans`` document holding exactly
one such span is unwrapped.
"""

from __future__ import annotations

from typing import Any

from prefixlint.request import Usage
from prefixlint.sources.logs.base import (
    SAMPLING_FIELDS,
    Skip,
    as_dict,
    first_present,
    int_or_none,
    parse_json_value,
    parse_timestamp,
)
from prefixlint.sources.logs.openai_chat import openai_chat_messages
from prefixlint.sources.logs.otel import indexed, otlp_attributes, unwrap_otlp

MAX_DEPTH = 64
SIGNATURE_KEYS = (
    "llm.input_messages",
    "llm.model_name",
    "llm.invocation_parameters",
    "llm.token_count.",
    "llm.tools.",
    "openinference.",
)
# Values kept whole, not flattened: a tool schema, parameters, arguments, a list of parts.
LEAF_KEYS = frozenset({"json_schema", "invocation_parameters", "arguments", "content"})


def looks_openinference(body: dict[str, Any]) -> bool:
    """A span whose attributes use OpenInference names (not OpenLLMetry's ``llm.request.*``)."""
    if "resourceSpans" in body:
        try:
            body = unwrap_otlp(body)
        except Skip:
            return False
    attributes = body.get("attributes")
    if isinstance(attributes, list):
        attributes = otlp_attributes(attributes)
    if isinstance(attributes, dict):
        if isinstance(attributes.get("llm"), dict) or "openinference" in attributes:
            return True
        keys = attributes.keys()
    else:
        keys = body.keys()
    return any(
        isinstance(key, str) and key.removeprefix("attributes.").startswith(SIGNATURE_KEYS)
        for key in keys
    )


def flatten(
    value: Any, prefix: str = "", out: dict[str, Any] | None = None, depth: int = 0
) -> dict[str, Any]:
    """Nested objects and lists as dotted keys: ``{"a": [{"b": 1}]}`` -> ``{"a.0.b": 1}``."""
    out = {} if out is None else out
    if depth > MAX_DEPTH:
        raise Skip("openinference attributes nested too deeply")
    leaf = prefix.rpartition(".")[2] in LEAF_KEYS
    if leaf:
        out[prefix] = value
    elif isinstance(value, dict) and (value or not prefix):
        for key, inner in value.items():
            flatten(inner, f"{prefix}.{key}" if prefix else str(key), out, depth + 1)
    elif isinstance(value, list) and value:
        for index, inner in enumerate(value):
            flatten(inner, f"{prefix}.{index}", out, depth + 1)
    else:
        out[prefix] = value
    return out


def span_attributes(span: dict[str, Any]) -> dict[str, Any]:
    """The span's attributes as flattened OpenInference keys."""
    attributes = span.get("attributes")
    given = otlp_attributes(attributes) if attributes is not None else span
    flat = flatten(given)
    return {key.removeprefix("attributes."): value for key, value in flat.items()}


def _message(fields: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": fields.get("message.role")}
    parts = indexed(fields, "message.contents.")
    if parts:
        content = []
        for _, part in sorted(parts.items()):
            kind = part.get("message_content.type", "text")
            if kind == "text":
                content.append({"type": "text", "text": str(part.get("message_content.text", ""))})
            else:
                content.append({"type": kind, **part})
        message["content"] = content
    else:
        message["content"] = fields.get("message.content")
    calls = indexed(fields, "message.tool_calls.")
    if calls:
        message["tool_calls"] = [
            {
                "id": call.get("tool_call.id"),
                "type": "function",
                "function": {
                    "name": call.get("tool_call.function.name"),
                    "arguments": call.get("tool_call.function.arguments"),
                },
            }
            for _, call in sorted(calls.items())
        ]
    for name in ("tool_call_id", "name"):
        if fields.get(f"message.{name}") is not None:
            message[name] = fields[f"message.{name}"]
    return message


def _tools(attributes: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    tools = []
    for index, fields in sorted(indexed(attributes, "llm.tools.").items()):
        schema = parse_json_value(fields.get("tool.json_schema"))
        if not isinstance(schema, dict):
            raise Skip(f"'llm.tools.{index}.tool.json_schema' is not a JSON object")
        tools.append(schema)
    return tuple(tools)


def read_openinference(span: dict[str, Any], response: dict[str, Any]) -> dict[str, Any]:
    attributes = span_attributes(unwrap_otlp(span))
    groups = indexed(attributes, "llm.input_messages.")
    if not groups:
        raise Skip("openinference span without llm.input_messages")
    messages = []
    for index, fields in sorted(groups.items()):
        if not isinstance(fields.get("message.role"), str):
            raise Skip(f"'llm.input_messages.{index}' has no message.role string")
        messages.append(_message(fields))
    parameters = parse_json_value(attributes.get("llm.invocation_parameters"))
    if parameters is not None and not isinstance(parameters, dict):
        raise Skip("'llm.invocation_parameters' is not a JSON object")
    params = {
        key: value
        for key, value in as_dict(parameters).items()
        if key not in SAMPLING_FIELDS and key not in ("model", "messages", "tools")
    }
    prompt = int_or_none(attributes.get("llm.token_count.prompt"))
    read = int_or_none(attributes.get("llm.token_count.prompt_details.cache_read"))
    written = int_or_none(attributes.get("llm.token_count.prompt_details.cache_write"))
    reported = (prompt, read, written) != (None, None, None)
    start = first_present(span, ("start_time", "startTimeUnixNano", "startTime"))
    return {
        "model": attributes.get("llm.model_name"),
        "messages": openai_chat_messages(messages),
        "tools": _tools(attributes),
        "params": params,
        "usage": Usage(prompt, read, written) if reported else None,
        "timestamp": parse_timestamp(start),
        "session_id": attributes.get("session.id"),
    }
