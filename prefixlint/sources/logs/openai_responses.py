"""OpenAI Responses request bodies: instructions, input items, reasoning summaries."""

from __future__ import annotations

from prefixlint.sources.logs.base import JsonObject, RequestFields, Skip, request_params
from prefixlint.sources.logs.usage import responses_usage


def responses_part(part: object) -> JsonObject:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text"):
        return {"type": "text", "text": part.get("text", "")}
    return part if isinstance(part, dict) else {"type": "unknown"}


def responses_messages(items: object) -> tuple[JsonObject, ...]:
    if isinstance(items, str):
        return ({"role": "user", "content": items},)
    if not isinstance(items, list):
        raise Skip("'input' is neither a string nor a list of items")
    messages: list[JsonObject] = []
    reasoning: str | None = None

    def assistant() -> JsonObject:
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


def read_openai_responses(body: JsonObject, response: JsonObject) -> RequestFields:
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
