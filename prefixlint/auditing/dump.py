"""``--dump-tokens FILE``: one JSON line per rendered request, in log order.

``tokens`` format: ``{"line": N, "tokens": [...]}``. ``mooncake`` format:
``{"line", "timestamp", "input_length", "output_length", "hash_ids"}`` as in the Mooncake
traces: one id per block of ``block_size`` tokens (the last block may be partial), ids chained
so that equal ids mean equal prefixes, numbered in order of first appearance; timestamps in
milliseconds since the first request.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, TextIO

from prefixlint.auditing.pipeline import Prepared
from prefixlint.cache.query import model_namespace

DUMP_FORMATS = ("tokens", "mooncake")


class TokenDump:
    def __init__(self, stream: TextIO, dump_format: str = "tokens", block_size: int = 512) -> None:
        if dump_format not in DUMP_FORMATS:
            raise ValueError(f"unknown dump format {dump_format!r}")
        self.stream = stream
        self.format = dump_format
        self.block_size = block_size
        self.ids: dict[int, int] = {}
        self.start: float | None = None

    def write(self, prepared: Prepared) -> None:
        request = prepared.request
        if prepared.rendered is None or self.format == "mooncake":
            entry = self._mooncake(prepared)
        else:
            entry = {"line": request.line, "tokens": list(prepared.rendered.tokens)}
        self.stream.write(json.dumps(entry, separators=(",", ":")) + "\n")

    def _mooncake(self, prepared: Prepared) -> dict[str, Any]:
        request = prepared.request
        entry: dict[str, Any] = {"line": request.line}
        if request.timestamp is not None:
            if self.start is None:
                self.start = request.timestamp
            entry["timestamp"] = round((request.timestamp - self.start) * 1000)
        if prepared.rendered is None:
            entry["input_length"] = request.input_length
            hash_ids = list(request.hash_ids or ())
        else:
            entry["input_length"] = len(prepared.rendered.tokens)
            hash_ids = self.hash_ids(prepared.rendered.tokens, request.model)
        entry["output_length"] = request.output_length or 0
        entry["hash_ids"] = hash_ids
        return entry

    def hash_ids(self, tokens: Sequence[int], model: str | None) -> list[int]:
        """Chained block ids, numbered in order of first use; each model has its own chain."""
        ids, parent = [], hash(model_namespace(model))
        for start in range(0, len(tokens), self.block_size):
            parent = hash((parent, tuple(tokens[start : start + self.block_size])))
            ids.append(self.ids.setdefault(parent, len(self.ids)))
        return ids
