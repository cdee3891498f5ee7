"""Offline optimal eviction (Belady's MIN) with vLLM's blocks, lookup rule and capacity.

The same request model as :mod:`prefixlint.cache.vllm` (chained hashes of full blocks, a
hit is the leading run of cached blocks capped at ``prompt - 1`` tokens, a running request
holds all its blocks), but when blocks must make room the cache drops the block whose next
lookup lies furthest in the future (deeper blocks first on ties, so a block never outlives
its prefix). Identical blocks are shared rather than duplicated. Neither an engine nor a
provider can do better at this capacity; comparing with ``vllm`` shows what a smarter
eviction policy could gain, comparing with ``unlimited`` what more memory could.

It needs the whole request sequence up front: call ``prepare(queries)`` and then
``process`` on the same queries in the same order, or simply ``run(queries)``.
"""

from __future__ import annotations

import heapq
import itertools
from bisect import bisect_right
from collections.abc import Sequence

from prefixlint.cache.base import (
    CacheQuery,
    CacheResult,
    InvalidQuery,
    miss_reason,
    register,
    resolve_capacity,
)
from prefixlint.cache.chain_memo import ChainHashMemo
from prefixlint.cache.vllm import leading_run, request_hashes

NEVER = float("inf")


@register
class BeladyCache:
    """Belady's MIN over vLLM blocks; see the module docstring for the two-step API."""

    name = "belady"
    settings = ("block_size", "capacity_tokens")

    def __init__(self, block_size: int = 16, capacity_tokens: int | None = None, **geometry: int):
        if block_size <= 0:
            raise ValueError("block_size must be positive")
        self.block_size = block_size
        tokens = resolve_capacity(capacity_tokens, geometry)
        self.capacity_blocks = None if tokens is None else tokens // block_size - bool(geometry)
        self._plan: list[tuple[list[int], int]] = []
        self.reset()

    def reset(self) -> None:
        self._position = 0
        self._cached: dict[int, float] = {}  # block hash -> index of its next lookup
        self._seen: set[int] = set()
        self._heap: list[tuple[float, int, int]] = []

    def run(self, queries: Sequence[CacheQuery]) -> list[CacheResult]:
        """Process a whole request sequence from an empty cache."""
        self.prepare(queries)
        return [self.process(query) for query in queries]

    def prepare(self, queries: Sequence[CacheQuery]) -> None:
        """Learn the future: every query's block hashes and when each block is looked up."""
        self.reset()
        memo, unknown = ChainHashMemo(self.block_size), itertools.count()
        size = self.block_size
        self._plan = []
        self._uses: dict[int, list[int]] = {}
        for index, query in enumerate(queries):
            hashes, known = request_hashes(query, size, memo, unknown)
            lookup = max(query.prompt_tokens - 1, 0) // size
            self._plan.append((hashes, min(known, lookup)))
            if self.capacity_blocks is not None:  # without eviction the future is not needed
                for block_hash in hashes[:lookup]:
                    self._uses.setdefault(block_hash, []).append(index)

    def process(self, query: CacheQuery) -> CacheResult:
        """The next prepared query; it must be the one ``prepare`` saw at this position."""
        index = self._position
        if index >= len(self._plan):
            raise InvalidQuery("belady: call prepare() with the whole sequence first")
        self._position += 1
        hashes, known = self._plan[index]  # known: hashed for an earlier query
        size = self.block_size
        prompt = query.prompt_tokens
        lookup = max(prompt - 1, 0) // size
        if lookup > len(hashes):
            raise InvalidQuery("belady: query differs from the prepared one")
        if self.capacity_blocks is None:  # nothing evicted or rejected: known means cached
            hit = available = leading_run(hashes, lookup, self._seen, known)
            self._seen.update(hashes[hit:])
        else:
            hit = leading_run(hashes, lookup, self._cached)
            available = leading_run(hashes, lookup, self._seen, hit)  # rejected ones unseen
            self._hold(index, hashes, -(-(prompt + max(query.output_count - 1, 0)) // size))
            self._seen.update(hashes)

        cached = hit * size
        return CacheResult(
            prompt_tokens=prompt,
            cached_tokens=cached,
            miss_reason=miss_reason(prompt, cached, available * size, lookup * size, "evicted"),
            longest_available=available * size,
        )

    def _hold(self, index: int, hashes: list[int], held: int) -> None:
        """Make room for a request's blocks, then cache them all with their next lookup."""
        if held > self.capacity_blocks:
            raise InvalidQuery(
                f"request needs {held} KV blocks; the cache holds {self.capacity_blocks}"
            )
        resident = sum(map(self._cached.__contains__, hashes))
        self._evict(held - resident - (self.capacity_blocks - len(self._cached)), hashes)
        for depth, block_hash in enumerate(hashes):
            uses = self._uses.get(block_hash, ())
            later = bisect_right(uses, index)
            upcoming = uses[later] if later < len(uses) else NEVER
            self._cached[block_hash] = upcoming
            heapq.heappush(self._heap, (-upcoming, -depth, block_hash))

    def _evict(self, count: int, pinned: Sequence[int]) -> None:
        pinned_set = set(pinned)
        skipped = []
        while count > 0:
            entry = heapq.heappop(self._heap)
            upcoming, block_hash = -entry[0], entry[2]
            if self._cached.get(block_hash) != upcoming:
                continue
            if block_hash in pinned_set:
                skipped.append(entry)
                continue
            del self._cached[block_hash]
            count -= 1
        for entry in skipped:
            heapq.heappush(self._heap, entry)
