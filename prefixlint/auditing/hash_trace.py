"""The compact trace a distributed audit simulates: one row per audited request with what
every cache model reads of it, and no text.

A row holds where the request was logged (``file_index``, ``line``), its ``timestamp`` and
``session``, its namespace (``cache_key``, ``cache_salt``, ``model``, ``extra_keys``), its
units (``tokens`` as token ids, or ``block_hashes`` of ``block_tokens`` each, as packed 64-bit
integers), the component boundaries, Anthropic breakpoints and media items its query carries,
its lengths
(``prompt_tokens``, ``input_length``, ``output_tokens``) and its partition
(:func:`prefixlint.auditing.partition.partition_key`). Token ids rather than hashes of
blocks: the ceiling, SGLang at page size 1 and llama.cpp's slot similarity read single
tokens, and every block hash is a function of them.
:func:`trace_row` and :func:`trace_query` convert a cache query to a row and back,
losslessly; :func:`trace_schema` is the rows' Arrow (Parquet) schema. A trace written before
the ``cache_salt`` column held either parameter in ``cache_key``: :func:`trace_query` refuses
such a row rather than guess which.
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Hashable
from typing import Any

from prefixlint.auditing.partition import partition_key
from prefixlint.cache.base import CacheQuery

TRACE_COLUMNS = (
    "file_index",
    "line",
    "timestamp",
    "session",
    "cache_key",
    "cache_salt",
    "model",
    "extra_keys",
    "tokens",
    "block_hashes",
    "block_tokens",
    "input_length",
    "output_tokens",
    "prompt_tokens",
    "boundaries",
    "breakpoint_positions",
    "breakpoint_ttls",
    "media_offsets",
    "media_lengths",
    "media_identities",
    "partition",
)


def trace_row(file_index: int, line: int, session: str | None, query: CacheQuery) -> dict[str, Any]:
    """``query`` of the request on ``line`` of log ``file_index`` as a trace row."""
    if not isinstance(query.output_tokens, int):
        raise ValueError("a trace keeps output token counts, not ids")
    return {
        "file_index": file_index,
        "line": line,
        "timestamp": query.timestamp,
        "session": session,
        "cache_key": query.cache_key,
        "cache_salt": query.cache_salt,
        "model": query.model,
        "extra_keys": json.dumps(list(query.extra_keys)),
        "tokens": query.token_bytes if query.tokens is not None else None,
        "block_hashes": None
        if query.block_hashes is None
        else array("q", query.block_hashes).tobytes(),
        "block_tokens": query.block_tokens,
        "input_length": query.input_length,
        "output_tokens": query.output_tokens,
        "prompt_tokens": query.prompt_tokens,
        "boundaries": list(query.boundaries),
        "breakpoint_positions": [position for position, _ in query.breakpoints],
        "breakpoint_ttls": [float(ttl) for _, ttl in query.breakpoints],
        "media_offsets": [offset for offset, _, _ in query.media],
        "media_lengths": [length for _, length, _ in query.media],
        "media_identities": [str(identity) for _, _, identity in query.media],
        "partition": partition_key(query),
    }


def trace_query(row: dict[str, Any]) -> CacheQuery:
    """The cache query a :func:`trace_row` holds; raises :class:`ValueError` for a row of a
    trace without the ``cache_salt`` column."""
    if "cache_salt" not in row:
        raise ValueError(
            "a hash trace without a cache_salt column keeps prompt_cache_key and cache_salt "
            "in one cache_key column: write the trace again"
        )
    tokens = None if row["tokens"] is None else array("q", row["tokens"])
    hashes = None if row["block_hashes"] is None else tuple(array("q", row["block_hashes"]))
    media = zip(row["media_offsets"], row["media_lengths"], row["media_identities"], strict=True)
    return CacheQuery(
        tokens=None if tokens is None else tuple(tokens),
        packed=row["tokens"],
        block_hashes=hashes,
        block_tokens=row["block_tokens"],
        input_length=row["input_length"],
        timestamp=row["timestamp"],
        output_tokens=row["output_tokens"],
        cache_key=row["cache_key"],
        cache_salt=row["cache_salt"],
        model=row["model"],
        breakpoints=tuple(zip(row["breakpoint_positions"], row["breakpoint_ttls"], strict=True)),
        boundaries=tuple(row["boundaries"]),
        extra_keys=tuple(_hashable(key) for key in json.loads(row["extra_keys"])),
        media=tuple(media),
    )


def _hashable(value: Any) -> Hashable:
    """A namespace key as :func:`json.dumps` wrote it (lists were tuples)."""
    return tuple(_hashable(item) for item in value) if isinstance(value, list) else value


def trace_schema() -> Any:
    """The Arrow schema of trace rows (pyarrow is imported here, by the distributed audit
    only)."""
    import pyarrow as pa

    integers = pa.list_(pa.int64())
    return pa.schema(
        [
            ("file_index", pa.int64()),
            ("line", pa.int64()),
            ("timestamp", pa.float64()),
            ("session", pa.string()),
            ("cache_key", pa.string()),
            ("cache_salt", pa.string()),
            ("model", pa.string()),
            ("extra_keys", pa.string()),
            ("tokens", pa.binary()),
            ("block_hashes", pa.binary()),
            ("block_tokens", pa.int64()),
            ("input_length", pa.int64()),
            ("output_tokens", pa.int64()),
            ("prompt_tokens", pa.int64()),
            ("boundaries", integers),
            ("breakpoint_positions", integers),
            ("breakpoint_ttls", pa.list_(pa.float64())),
            ("media_offsets", integers),
            ("media_lengths", integers),
            ("media_identities", pa.list_(pa.string())),
            ("partition", pa.int64()),
        ]
    )
