"""Which format a logged body is in, told from its fields."""

from __future__ import annotations

from prefixlint.sources.logs.base import JsonObject, as_dict
from prefixlint.sources.logs.langfuse import looks_langfuse
from prefixlint.sources.logs.openinference import looks_openinference

ANTHROPIC_BLOCK_TYPES = frozenset(
    {"tool_use", "tool_result", "thinking", "redacted_thinking", "document"}
)


def _block_type(block: object) -> str | None:
    """A content block's ``type`` when it is a string (JSON allows anything there)."""
    kind = as_dict(block).get("type")
    return kind if isinstance(kind, str) else None


def _has_cache_control(items: object) -> bool:
    return isinstance(items, list) and any(
        isinstance(item, dict) and "cache_control" in item for item in items
    )


def looks_anthropic(body: JsonObject) -> bool:
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


def detect_format(body: JsonObject) -> str | None:
    """The format of one line's request object, or None when nothing fits."""
    if "hash_ids" in body and "input_length" in body:
        return "mooncake"
    if looks_openinference(body):
        return "openinference"
    if (
        "resourceSpans" in body
        or "attributes" in body
        or any(isinstance(key, str) and key.startswith("gen_ai.") for key in body)
    ):
        return "otel"
    if "messages" in body and ("model_parameters" in body or "startTime" in body):
        return "litellm"
    if looks_langfuse(body):
        return "langfuse"
    if "messages" in body:
        return "anthropic" if looks_anthropic(body) else "openai-chat"
    if "input" in body or "instructions" in body:
        return "openai-responses"
    return None
