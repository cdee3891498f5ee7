"""What every log reader shares: the formats, the skipped-line type, small value helpers."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, TypeAlias, Union

from prefixlint.request import ChatRequest

FORMATS = (
    "openai-chat",
    "openai-responses",
    "anthropic",
    "litellm",
    "langfuse",
    "otel",
    "openinference",
    "mooncake",
)
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

# A JSON object from a log line: its values may be of any JSON type, checked where they are used.
JsonObject: TypeAlias = dict[str, Any]
# What a format's reader takes from a line: :class:`ChatRequest` fields by name.
RequestFields: TypeAlias = dict[str, Any]


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


def as_dict(value: object) -> JsonObject:
    return value if isinstance(value, dict) else {}


def int_or_none(value: object) -> int | None:
    """An integer within 64 bits from an int, an integral float or a string of digits."""
    if isinstance(value, bool):
        return None
    if (isinstance(value, float) and value.is_integer()) or (
        isinstance(value, str) and value.strip().isdigit() and len(value) <= 40
    ):
        value = int(value)
    if isinstance(value, int) and -MAX_COUNT <= value < MAX_COUNT:
        return value
    return None


def first_present(mapping: JsonObject, keys: Iterable[str]) -> Any:
    for key in keys:
        if mapping.get(key) is not None:
            return mapping[key]
    return None


def parse_timestamp(value: object) -> float | None:
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


def breakpoint_ttl(cache_control: object) -> float | None:
    """TTL in seconds of an Anthropic ``cache_control`` marker, None when there is none."""
    if not isinstance(cache_control, dict):
        return None
    ttl = cache_control.get("ttl")
    if ttl is None:
        return FIVE_MINUTES
    if ttl not in ("5m", "1h"):
        # Anthropic answers 400: a misspelt TTL ("1hr", 3600) is no 5-minute breakpoint.
        raise Skip(f"cache_control ttl {ttl!r} is neither '5m' nor '1h'")
    return ONE_HOUR if ttl == "1h" else FIVE_MINUTES


def request_params(body: JsonObject) -> JsonObject:
    return {
        key: value
        for key, value in body.items()
        if key not in CONTENT_FIELDS and key not in SAMPLING_FIELDS
    }


def parse_json_value(value: object) -> object:
    """A structured attribute value, decoding it when it was recorded as a JSON string."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value
