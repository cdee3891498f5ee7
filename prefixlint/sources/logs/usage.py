"""Provider usage fields (cached, written and prompt tokens) in each API's shape."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from prefixlint.request import Usage
from prefixlint.sources.logs.base import JsonObject, as_dict, first_present, int_or_none


def first_in(mappings: Iterable[JsonObject], keys: Iterable[str]) -> Any:
    """The first non-null value of ``keys`` in the first mapping that has one."""
    for mapping in mappings:
        value = first_present(mapping, keys)
        if value is not None:
            return value
    return None


def openai_usage(usage: object) -> Usage | None:
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


def responses_usage(usage: object) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    details = as_dict(usage.get("input_tokens_details"))
    return Usage(
        int_or_none(usage.get("input_tokens")),
        int_or_none(details.get("cached_tokens")),
        int_or_none(details.get("cache_write_tokens")),
    )


def anthropic_usage(usage: object) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    uncached = int_or_none(usage.get("input_tokens"))
    read = int_or_none(usage.get("cache_read_input_tokens"))
    written = int_or_none(usage.get("cache_creation_input_tokens"))
    prompt = None if uncached is None else uncached + (read or 0) + (written or 0)
    return Usage(prompt, read, written)
