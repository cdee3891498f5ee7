"""Digests of the prefixes of one byte string, each byte hashed once however they are asked.

Cache models and the breakpoint replays ask for digests of prefixes of the same prompt many
times over (every replayed breakpoint digests the prompt's boundaries before it). The blake2b
state is kept at each offset digested so far; a prefix is digested from the nearest state
before its end, so only the bytes after it are hashed, and each digest is remembered. Only
the latest string is kept.
"""

from __future__ import annotations

import hashlib
from bisect import bisect_right
from typing import Any


class RunningDigests:
    """blake2b digests of ``salt`` followed by prefixes of the latest ``data`` asked about."""

    def __init__(self) -> None:
        self._data: bytes | None = None
        self._salt = b""
        self._offsets: list[int] = []
        self._states: list[Any] = []
        self._digests: dict[int, bytes] = {}

    def digest(self, data: bytes, salt: bytes, end: int) -> bytes:
        """The digest of ``salt + data[:end]``."""
        if data is not self._data or salt != self._salt:
            self._data, self._salt = data, salt
            self._offsets, self._states = [0], [hashlib.blake2b(salt)]
            self._digests = {}
        found = self._digests.get(end)
        if found is not None:
            return found
        index = bisect_right(self._offsets, end) - 1
        state = self._states[index].copy()
        start = self._offsets[index]
        if end > start:
            state.update(memoryview(data)[start:end])
            self._offsets.insert(index + 1, end)
            self._states.insert(index + 1, state.copy())
        digest: bytes = state.digest()
        self._digests[end] = digest
        return digest
