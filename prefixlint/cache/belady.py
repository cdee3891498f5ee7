"""Offline optimal eviction (Belady's MIN) with vLLM's blocks, lookup rule and capacity.

The same request model as :mod:`prefixlint.cache.vllm` (chained hashes of full blocks, a
hit is the leading run of cached blocks capped at ``prompt - 1`` tokens, a running request
holds all its blocks), but when blocks must make room the cache drops the block whose next
lookup lies furthest in the future (deeper blocks first on ties, so a block never outlives
its prefix). Identical blocks are shared rather than duplicated. Neither an engine nor a
provider can do better at this capacity; comparing with ``vllm`` shows what a smarter
eviction policy could gain, comparing with ``unlimited`` what more memory could.
Its namespaces are vLLM's: model, adapter and ``cache_salt``, not OpenAI's
``prompt_cache_key``.

It needs the whole request sequence up front: call ``prepare(queries)`` and then
``process`` on the same queries in the same order, or simply ``run(queries)``.
"""

from __future__ import annotations

import heapq
import itertools
from collections import deque
from collections.abc import Sequence
from functools import partial
from operator import neg

from prefixlint.cache.base import (
    SALTED_NAMESPACE,
    CacheQuery,
    CacheResult,
    InvalidQuery,
    miss_reason,
    register,
    resolve_capacity,
)
from prefixlint.cache.block_heap import compact, evict
from prefixlint.cache.block_runs import Chain, RunPool
from prefixlint.cache.chain_memo import ChainHashMemo
from prefixlint.cache.vllm import request_hashes

NEVER = float("inf")


def next_lookups(plan: Sequence[list[int]], lookups: Sequence[int]) -> list[list[float]]:
    """For each request's blocks, the index of the next request that holds them if its lookup
    reaches them, else ``NEVER``: a block that the next request holding it writes again (past
    its lookup, or from its answer) gains nothing from being kept until then. One pass from the
    last request back."""
    upcoming: dict[int, float] = {}
    nexts: list[list[float]] = [[] for _ in plan]
    for index in range(len(plan) - 1, -1, -1):
        hashes, lookup = plan[index], lookups[index]
        nexts[index] = list(map(upcoming.get, hashes, itertools.repeat(NEVER)))
        upcoming.update(zip(hashes[lookup:], itertools.repeat(NEVER)))
        upcoming.update(zip(hashes[:lookup], itertools.repeat(index)))
    return nexts


@register
class BeladyCache:
    """Belady's MIN over vLLM blocks; see the module docstring for the two-step API."""

    name = "belady"
    settings: tuple[str, ...] = ("block_size", "capacity_tokens")
    namespace_params = SALTED_NAMESPACE

    def __init__(self, block_size: int = 16, capacity_tokens: int | None = None, **geometry: int):
        if block_size <= 0:
            raise ValueError("block_size must be positive")
        self.block_size = block_size
        tokens = resolve_capacity(capacity_tokens, geometry)
        self.capacity_blocks = None if tokens is None else tokens // block_size - bool(geometry)
        self._plan: list[list[int]] = []
        self._nexts: list[list[float]] = []
        self.reset()

    def reset(self) -> None:
        self._position = 0
        # block hash -> its heap entry (-next lookup, -depth, hash); other entries are stale
        self._cached: dict[int, tuple[float, int, int]] = {}
        self._seen = RunPool()  # every chain so far, as runs: what an infinite cache holds
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
        self._plan = [request_hashes(query, size, memo, unknown) for query in queries]
        if self.capacity_blocks is not None:  # without eviction the future is not needed
            lookups = [max(query.prompt_tokens - 1, 0) // size for query in queries]
            self._nexts = next_lookups(self._plan, lookups)

    def process(self, query: CacheQuery) -> CacheResult:
        """The next prepared query; it must be the one ``prepare`` saw at this position."""
        index = self._position
        if index >= len(self._plan):
            raise InvalidQuery("belady: call prepare() with the whole sequence first")
        self._position += 1
        hashes = self._plan[index]
        size = self.block_size
        prompt = query.prompt_tokens
        lookup = max(prompt - 1, 0) // size
        if lookup > len(hashes):
            raise InvalidQuery("belady: query differs from the prepared one")
        seen = self._seen.admit(Chain(hashes, 1, len(hashes), len(hashes)), lookup, 0)[1]
        if self.capacity_blocks is None:  # nothing evicted or rejected: seen means cached
            hit = available = seen
        else:
            hit = len(list(itertools.takewhile(self._cached.__contains__, hashes[:lookup])))
            available = seen  # rejected blocks are cached again by the request that has them
            held = -(-(prompt + max(query.output_count - 1, 0)) // size)
            self._hold(index, hashes, held, self.capacity_blocks)

        cached = hit * size
        return CacheResult(
            prompt_tokens=prompt,
            cached_tokens=cached,
            miss_reason=miss_reason(prompt, cached, available * size, lookup * size, "evicted"),
            longest_available=available * size,
        )

    def _hold(self, index: int, hashes: list[int], held: int, capacity: int) -> None:
        """Make room for a request's blocks, then cache them all with their next lookup."""
        if held > capacity:
            raise InvalidQuery(f"request needs {held} KV blocks; the cache holds {capacity}")
        cached, heap = self._cached, self._heap
        resident = sum(map(cached.__contains__, hashes))
        self._evict(held - resident - (capacity - len(cached)), hashes)
        entries = list(
            zip(map(neg, self._nexts[index]), range(0, -len(hashes), -1), hashes, strict=True)
        )
        cached.update(zip(hashes, entries, strict=True))
        deque(map(partial(heapq.heappush, heap), entries), maxlen=0)
        compact(heap, cached)

    def _evict(self, count: int, pinned: Sequence[int]) -> None:
        """Drop ``count`` blocks, those looked up furthest ahead first, never ``pinned``."""
        evict(self._heap, self._cached, count, set(pinned))
