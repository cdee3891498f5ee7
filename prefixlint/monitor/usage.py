"""Prompt and cached token counts from provider responses, whole or streamed (SSE).

A ``usage`` object is read as the log reader of the request's format reads it
(:mod:`prefixlint.sources.logs.usage`), so the monitor and the audit agree on what the
provider reported. Streamed, the usage is in these events:

- OpenAI Chat Completions: the last chunk's ``usage`` (when ``stream_options.include_usage``
  is set);
- OpenAI Responses: the ``response.completed`` event's ``response.usage``;
- Anthropic Messages: ``message_start``'s ``message.usage``, updated by ``message_delta``'s
  ``usage``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from prefixlint.request import Usage
from prefixlint.sources.logs.usage import anthropic_usage, openai_usage, responses_usage

# The usage reader of each request format (another format is read as Chat Completions).
USAGE_READERS: dict[str, Callable[[object], Usage | None]] = {
    "openai-chat": openai_usage,
    "openai-responses": responses_usage,
    "anthropic": anthropic_usage,
}


def usage_from(usage: object, request_format: str) -> Usage | None:
    """A :class:`Usage` from a response's ``usage`` object, or ``None`` when it is not one."""
    return USAGE_READERS.get(request_format, USAGE_READERS["openai-chat"])(usage)


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
        self._usage: dict[str, Any] = {}

    def feed(self, chunk: bytes) -> None:
        """Read the complete lines of ``chunk`` (after the partial line left before)."""
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
        message, response = event.get("message"), event.get("response")
        if event.get("type") == "message_start":
            usage = message.get("usage") if isinstance(message, dict) else None
        elif isinstance(response, dict):
            usage = response.get("usage")
        if isinstance(usage, dict):
            self._usage.update({k: v for k, v in usage.items() if v is not None})

    def usage(self) -> Usage | None:
        """The usage read so far, the last partial line included."""
        if self._partial:
            self.feed(b"\n")
        return usage_from(self._usage or None, self.format)
