"""Online eviction policies over vLLM's blocks, for the capacity sweep: ``lfu``, ``fifo`` and
``priority``.

The request model is :mod:`prefixlint.cache.belady`'s (chained hashes of full blocks; a hit
is the leading run of cached blocks, capped at ``prompt - 1`` tokens; a running request
holds all its blocks, ``ceil((prompt + output - 1) / B)``; identical blocks are shared);
only the block chosen when room must be made differs:

* ``fifo``: the block that entered the cache first (a hit does not renew it);
* ``lfu``: the block fewest requests have used, the least recently used on ties;
* ``priority``: a block outside the request's protected leading tokens (the system prompt
  and tool definitions) before any block inside them, least recently used first within each
  class.

On ties within one request's blocks the deepest goes first, as vLLM frees a request's blocks
tail first, so a block never outlives its prefix for want of a tie-break.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Literal

from prefixlint.cache.base import CacheQuery, CacheResult, InvalidQuery, miss_reason
from prefixlint.cache.block_heap import compact, evict
from prefixlint.cache.block_runs import Chain, RunPool
from prefixlint.cache.chain_memo import ChainHashMemo
from prefixlint.cache.vllm import request_hashes

Policy = Literal["lfu", "fifo", "priority"]
POLICIES: tuple[Policy, ...] = ("lfu", "fifo", "priority")


class EvictionCache:
    """A bounded block cache evicting by ``policy``; ``process(query, protected_tokens)``."""

    def __init__(self, policy: Policy, block_size: int = 16, capacity_tokens: int = 0) -> None:
        if policy not in POLICIES:
            raise ValueError(f"unknown eviction policy {policy!r} (known: {', '.join(POLICIES)})")
        if block_size <= 0 or capacity_tokens < 0:
            raise ValueError("block_size must be positive and capacity_tokens >= 0")
        self.policy = policy
        self.name = policy
        self.block_size = block_size
        self.capacity_blocks = capacity_tokens // block_size
        self.reset()

    def reset(self) -> None:
        self._memo = ChainHashMemo(self.block_size)
        self._unknown = itertools.count()
        self._seen = RunPool()  # every chain so far: what an infinite cache holds
        self._stamp = 0
        # block hash -> its live heap entry (eviction key..., hash); other entries are stale
        self._cached: dict[int, tuple[int, ...]] = {}
        self._uses: dict[int, int] = {}
        self._heap: list[tuple[int, ...]] = []

    def process(self, query: CacheQuery, protected_tokens: int = 0) -> CacheResult:
        """Serve one request; its blocks within ``protected_tokens`` get ``priority``'s
        protection."""
        size = self.block_size
        prompt = query.prompt_tokens
        held = -(-(prompt + max(query.output_count - 1, 0)) // size)
        if held > self.capacity_blocks:
            raise InvalidQuery(
                f"request needs {held} KV blocks; the cache holds {self.capacity_blocks}"
            )
        hashes = request_hashes(query, size, self._memo, self._unknown)
        lookup = max(prompt - 1, 0) // size
        available = self._seen.admit(Chain(hashes, 1, len(hashes), len(hashes)), lookup, 0)[1]
        hit = len(list(itertools.takewhile(self._cached.__contains__, hashes[:lookup])))
        resident = sum(map(self._cached.__contains__, hashes))
        self._evict(held - resident - (self.capacity_blocks - len(self._cached)), set(hashes))
        self._stamp += 1
        for depth, block in enumerate(hashes):
            self._uses[block] = self._uses.get(block, 0) + 1
            entry = self._key(block, depth, protected_tokens)
            self._cached[block] = entry
            heapq.heappush(self._heap, entry)
        compact(self._heap, self._cached)
        cached = hit * size
        return CacheResult(
            prompt_tokens=prompt,
            cached_tokens=cached,
            miss_reason=miss_reason(prompt, cached, available * size, lookup * size, "evicted"),
            longest_available=available * size,
        )

    def _key(self, block: int, depth: int, protected_tokens: int) -> tuple[int, ...]:
        """The block's heap entry: the smallest is evicted first."""
        if self.policy == "fifo":
            entered = self._cached[block][0] if block in self._cached else self._stamp
            return (entered, -depth, block)
        if self.policy == "lfu":
            return (self._uses[block], self._stamp, -depth, block)
        protected = int((depth + 1) * self.block_size <= protected_tokens)
        return (protected, self._stamp, -depth, block)

    def _evict(self, count: int, pinned: set[int]) -> None:
        """Drop ``count`` blocks in eviction order, never one of ``pinned``."""
        for block in evict(self._heap, self._cached, count, pinned):
            del self._uses[block]
