"""One log line to a request: the envelope, the format's reader, the request object."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from prefixlint.request import ChatRequest
from prefixlint.sources.logs.anthropic import read_anthropic
from prefixlint.sources.logs.base import (
    ENVELOPE_ROUTE_FIELDS,
    ENVELOPE_TIME_FIELDS,
    JsonObject,
    LogItem,
    Skip,
    SkippedLine,
    as_dict,
    first_present,
    parse_timestamp,
)
from prefixlint.sources.logs.detect import detect_format
from prefixlint.sources.logs.langfuse import read_langfuse
from prefixlint.sources.logs.litellm import read_litellm
from prefixlint.sources.logs.mooncake import read_mooncake
from prefixlint.sources.logs.openai_chat import read_openai_chat
from prefixlint.sources.logs.openai_responses import read_openai_responses
from prefixlint.sources.logs.openinference import read_openinference
from prefixlint.sources.logs.otel import read_otel
from prefixlint.sources.logs.shape import ShapeError, check_fields, lone_surrogate

READERS = {
    "openai-chat": read_openai_chat,
    "openai-responses": read_openai_responses,
    "anthropic": read_anthropic,
    "litellm": read_litellm,
    "langfuse": read_langfuse,
    "otel": read_otel,
    "openinference": read_openinference,
    "mooncake": read_mooncake,
}


def split_envelope(record: JsonObject) -> tuple[JsonObject, JsonObject, JsonObject]:
    """``(body, response, envelope)``; a bare request body has an empty envelope."""
    if isinstance(record.get("request"), dict):
        return record["request"], as_dict(record.get("response")), record
    return record, {}, {}


def envelope_session(envelope: JsonObject, body: JsonObject) -> str | None:
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


def parse_record(line_number: int, record: JsonObject, format: str) -> LogItem:
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
    or a :class:`~prefixlint.sources.logs.json_lines.LineDecoder`, which raises what it raises."""
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
        # "Unterminated string starting at" already ends in "at"
        message = exc.msg.removesuffix(" at")
        return SkippedLine(line_number, f"malformed JSON: {message} at column {exc.colno}")
    except RecursionError:
        return SkippedLine(line_number, "malformed JSON: nested too deeply")
    except ValueError:  # an integer too long to convert (Python's int_max_str_digits)
        return SkippedLine(line_number, "malformed JSON: a number has too many digits")
    if not isinstance(record, dict):
        return SkippedLine(line_number, f"not a JSON object (got {type(record).__name__})")
    surrogate = lone_surrogate(text, record)
    if surrogate is not None:
        return SkippedLine(line_number, surrogate)
    return parse_object(line_number, record, format)


def parse_object(line_number: int, record: JsonObject, format: str = "auto") -> LogItem:
    """One decoded record (a JSON line's object, a Parquet row) as a request, or the reason
    it is skipped."""
    try:
        return parse_record(line_number, record, format)
    except (TypeError, ValueError, AttributeError, KeyError, RecursionError) as exc:
        return SkippedLine(line_number, f"unexpected shape: {type(exc).__name__}: {exc}")
