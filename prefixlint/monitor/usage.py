"""Prompt and cached token counts from provider responses, whole or streamed (SSE).

Fields read (as documented by the providers):

- OpenAI Chat Completions: ``usage.prompt_tokens``, ``usage.prompt_tokens_details.cached_tokens``
  (streamed: the last chunk carries ``usage`` when ``stream_options.include_usage`` is set);
- OpenAI Responses: ``usage.input_tokens``, ``usage.input_tokens_details.cached_tokens``
  (streamed: the ``response.completed`` event's ``response.usage``);
- Anthropic Messages: ``usage.input_tokens`` (tokens after the last cache breakpoint),
  ``cache_read_input_tokens``, ``cache_creation_input_tokens``; the prompt is their sum
  (streamed: ``message_start``'s ``message.usage``, updated by ``message_delta``'s ``usage``).
"""

from __future__ import annotations

import json

from prefixlint.request import Usage


def _int(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def usage_from(usage: dict | None, request_format: str) -> Usage | None:
    """A :class:`Usage` from a response's ``usage`` object, or ``None``."""
    if not isinstance(usage, dict):
        return None
    if request_format == "anthropic":
        fresh = _int(usage.get("input_tokens"))
        read = _int(usage.get("cache_read_input_tokens"))
        written = _int(usage.get("cache_creation_input_tokens"))
        if fresh is None and read is None:
            return None
        total = (fresh or 0) + (read or 0) + (written or 0)
        return Usage(prompt_tokens=total, cached_tokens=read or 0, cache_write_tokens=written)
    if request_format == "openai-responses":
        prompt = _int(usage.get("input_tokens"))
        details = usage.get("input_tokens_details") or {}
    else:
        prompt = _int(usage.get("prompt_tokens"))
        details = usage.get("prompt_tokens_details") or {}
    if prompt is None:
        return None
    cached = _int(details.get("cached_tokens")) if isinstance(details, dict) else None
    return Usage(prompt_tokens=prompt, cached_tokens=cached)


def usage_from_body(body: bytes, request_format: str) -> Usage | None:
    """Usage from a whole JSON response body (``None`` when absent or not JSON)."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return None
    return usage_from(data.get("usage"), request_format) if isinstance(data, dict) else None


class StreamUsage:
    """Reads usage from server-sent events as the bytes pass through, keeping no text.

    Only ``data:`` lines that can hold usage are parsed (a cheap substring test first); the
    partial line at the end of a chunk is kept until the next chunk completes it.
    """

    def __init__(self, request_format: str) -> None:
        self.format = request_format
        self._partial = b""
        self._usage: dict = {}

    def feed(self, chunk: bytes) -> None:
        lines = (self._partial + chunk).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if line.startswith(b"data:") and b'"usage"' in line:
                self._read(line[5:])

    def _read(self, payload: bytes) -> None:
        try:
            event = json.loads(payload)
        except (ValueError, UnicodeDecodeError):
            return
        if not isinstance(event, dict):
            return
        usage = event.get("usage")
        if event.get("type") == "message_start":
            usage = (event.get("message") or {}).get("usage")
        elif isinstance(event.get("response"), dict):
            usage = event["response"].get("usage")
        if isinstance(usage, dict):
            self._usage.update({k: v for k, v in usage.items() if v is not None})

    def usage(self) -> Usage | None:
        if self._partial:
            self.feed(b"\n")
        return usage_from(self._usage or None, self.format)
