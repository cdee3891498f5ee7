"""Mooncake traces: block hashes and lengths, no text."""

from __future__ import annotations

import math

from prefixlint.sources.logs.base import JsonObject, RequestFields, Skip, int_or_none


def read_mooncake(record: JsonObject, response: JsonObject) -> RequestFields:
    hash_ids = record.get("hash_ids")
    if not isinstance(hash_ids, list) or not all(int_or_none(h) is not None for h in hash_ids):
        raise Skip("mooncake record without a list of integer 'hash_ids'")
    input_length = int_or_none(record.get("input_length"))
    if input_length is None:
        raise Skip("mooncake record without an integer 'input_length'")
    timestamp = record.get("timestamp")
    if not isinstance(timestamp, (int, float)) or not math.isfinite(timestamp):
        timestamp = None
    return {
        "hash_ids": tuple(int(h) for h in hash_ids),
        "input_length": input_length,
        "output_length": int_or_none(record.get("output_length")),
        "timestamp": timestamp / 1000 if timestamp is not None else None,
    }
