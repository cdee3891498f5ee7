"""Which device slot holds which cached block, decided by the ``vllm`` cache model.

The table drives a :class:`prefixlint.cache.vllm.VllmCache` through its public interface:
``process`` decides the hit (chained block hashes, ``num_tokens - 1`` cap) and the LRU
evictions, ``on_evict`` says when a block hash has left the cache, and ``block_hashes``
names the request's blocks. The table only keeps ``hash -> slot``: a hit block's slot is
read back, an evicted hash frees its slot, and each new hash gets a free slot to be written.
A hash already holding a slot is not written again (vLLM caches a recomputed block twice;
both copies hold the same keys and values).
"""

from __future__ import annotations

from dataclasses import dataclass

from prefixlint.cache.base import CacheQuery, InvalidQuery
from prefixlint.cache.vllm import VllmCache, block_hashes
from prefixlint.replay import ReplayError


@dataclass(frozen=True)
class BlockPlan:
    """For one request: the slots of its cached prefix, and where to store its new blocks."""

    hit_slots: tuple[int, ...]
    hit_tokens: int
    store_blocks: tuple[int, ...]
    store_slots: tuple[int, ...]


class VllmBlockTable:
    """Maps the vLLM cache model's resident block hashes to ``num_blocks`` device slots."""

    def __init__(self, block_size: int, num_blocks: int) -> None:
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.capacity_tokens = num_blocks * block_size
        self.cache = VllmCache(
            block_size=block_size, capacity_tokens=self.capacity_tokens, on_evict=self._evicted
        )
        self.reset()

    def reset(self) -> None:
        """Forget every cached block (what vLLM's ``reset_prefix_cache`` does)."""
        self.cache.reset()
        self._slot_of: dict[int, int] = {}
        self._free_slots = list(range(self.num_blocks - 1, -1, -1))

    def _evicted(self, block_hash: int) -> None:
        self._free_slots.append(self._slot_of.pop(block_hash))

    def admit(self, query: CacheQuery) -> BlockPlan:
        """Look ``query`` up (this updates the cache) and plan the request's block traffic.

        The hashes carry the query's namespace (``cache_salt``, ``extra_keys``), as the
        audit's ``vllm`` model hashes them."""
        try:
            result = self.cache.process(query)
        except InvalidQuery as exc:
            raise ReplayError(f"prompt of {query.prompt_tokens} tokens: {exc}") from None
        hashes = block_hashes(query, self.block_size)
        hit = result.cached_tokens // self.block_size
        hit_slots = tuple(self._slot_of[h] for h in hashes[:hit])
        store_blocks, store_slots = [], []
        for index in range(hit, len(hashes)):
            block_hash = hashes[index]
            if block_hash in self._slot_of or block_hash not in self.cache:
                continue
            slot = self._free_slots.pop()
            self._slot_of[block_hash] = slot
            store_blocks.append(index)
            store_slots.append(slot)
        return BlockPlan(hit_slots, result.cached_tokens, tuple(store_blocks), tuple(store_slots))
