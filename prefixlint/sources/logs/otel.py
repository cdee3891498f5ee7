"""OpenTelemetry GenAI spans: semantic-convention attributes, the older flattened
attributes, and message events."""

from __future__ import annotations

import json

from prefixlint.request import Usage
from prefixlint.sources.logs.base import (
    SAMPLING_FIELDS,
    JsonObject,
    RequestFields,
    Skip,
    as_dict,
    first_present,
    int_or_none,
    parse_json_value,
    parse_timestamp,
)
from prefixlint.sources.logs.openai_chat import openai_chat_messages


def otlp_value(value: object) -> object:
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


def otlp_attributes(attributes: object) -> JsonObject:
    if isinstance(attributes, dict):
        return attributes
    if isinstance(attributes, list):
        return {
            a["key"]: otlp_value(a.get("value"))
            for a in attributes
            if isinstance(a, dict) and "key" in a
        }
    return {}


def unwrap_otlp(span: JsonObject) -> JsonObject:
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
    found = spans[0]
    if not isinstance(found, dict):
        raise Skip("the span of the OTLP document is not an object")
    return found


def semconv_messages(value: object) -> list[JsonObject]:
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


def semconv_system(value: object) -> str | None:
    value = parse_json_value(value)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(str(part.get("content", "")) for part in value if isinstance(part, dict))
    raise Skip("'gen_ai.system_instructions' is neither text nor a list of parts")


def indexed(attributes: JsonObject, prefix: str) -> dict[int, JsonObject]:
    """``prefix.N.rest`` attributes grouped by N: ``{N: {rest: value}}``."""
    groups: dict[int, JsonObject] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        number, _, rest = key[len(prefix) :].partition(".")
        if number.isdigit() and rest:
            groups.setdefault(int(number), {})[rest] = value
    return groups


def flattened_prompt(attributes: JsonObject) -> list[JsonObject]:
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


def flattened_tools(attributes: JsonObject) -> list[JsonObject]:
    tools = []
    for _, fields in sorted(indexed(attributes, "llm.request.functions.").items()):
        function = {"name": fields.get("name"), "description": fields.get("description")}
        if fields.get("parameters") is not None:
            function["parameters"] = parse_json_value(fields["parameters"])
        tools.append({"type": "function", "function": function})
    return tools


def event_messages(events: object) -> list[JsonObject]:
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


def read_otel(span: JsonObject, response: JsonObject) -> RequestFields:
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
