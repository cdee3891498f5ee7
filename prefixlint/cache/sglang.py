"""SGLang RadixAttention, as in SGLang 0.5.

Sources (sgl-project/sglang, ``python/sglang/srt``):

* ``mem_cache/radix_cache.py``: ``RadixKey.page_aligned`` truncates keys to whole pages;
  ``match_prefix`` / ``_match_prefix_helper`` walk the tree, split a partially matched node
  and touch every visited node; ``insert`` hangs the unmatched rest as one leaf; ``evict``
  pops evictable leaves (no children, ``lock_ref == 0``) by ``last_access_time`` (the default
  ``--radix-eviction-policy lru``) and frees whole nodes, re-queueing a parent that becomes a
  leaf.
* ``mem_cache/radix_cache.py`` ``RadixKey``: a request's ``extra_key`` and ``cache_salt``
  wrap its child keys, so each salt is a tree of its own; OpenAI's ``prompt_cache_key`` is
  not read.
* ``managers/schedule_batch.py``: ``Req._compute_max_prefix_len`` limits the match to
  ``input_len - 1``.
* ``mem_cache/radix_cache.py`` ``checkpoint`` and ``mem_cache/common.py``
  ``release_kv_cache``: prompt and computed output tokens are inserted when a request ends.
* ``arg_groups/overrides.py`` ``_page_size_default``: page size 1 on CUDA by default
  (attention backends such as FlashMLA or FA4 raise it).

Modelled for sequential replay: the running request's matched path is locked; it allocates
its uncached prompt tokens plus its output tokens (less the last, never computed), evicting
leaves when the tree and the request together would exceed ``capacity_tokens``; at the end
prompt and output are inserted, page-aligned. Trace-block queries match whole trace blocks
and cap the hit at ``input_length - 1``, page-floored.
"""

from __future__ import annotations

import itertools

from prefixlint.cache.base import (
    SALTED_NAMESPACE,
    CacheQuery,
    CacheResult,
    InvalidQuery,
    miss_reason,
    register,
    resolve_capacity,
)
from prefixlint.cache.radix import RadixTree, SeenTree, query_keys


@register
class SglangCache:
    """SGLang radix cache: page-granular prefix tree, LRU leaf eviction, capacity in tokens.

    ``capacity_tokens`` (``None``: unlimited) is ``max_total_num_tokens``; KV geometry
    keyword arguments (``memory_bytes``, ``num_layers``, ``num_kv_heads``, ``head_dim``,
    ``dtype_bytes``) compute it instead.
    """

    name = "sglang"
    settings: tuple[str, ...] = ("page_size", "capacity_tokens")
    namespace_params = SALTED_NAMESPACE

    def __init__(self, page_size: int = 1, capacity_tokens: int | None = None, **geometry: int):
        if page_size <= 0:
            raise ValueError("page_size must be positive")
        self.page_size = page_size
        self.capacity_tokens = resolve_capacity(capacity_tokens, geometry)
        self.reset()

    def reset(self) -> None:
        self._trees: dict[tuple[bool, int], tuple[RadixTree, SeenTree]] = {}
        self._unknown_outputs = itertools.count()

    def _pair(self, query: CacheQuery, width: int) -> tuple[RadixTree, SeenTree]:
        """The cache tree and its never-evicting twin, one pair per key layout; without a
        capacity nothing is evicted and the tree is its own twin."""
        layout = (query.tokens is None, width)
        if layout not in self._trees:
            twin = SeenTree(width)
            tree = twin if self.capacity_tokens is None else RadixTree(width)
            self._trees[layout] = (tree, twin)
        return self._trees[layout]

    def process(self, query: CacheQuery) -> CacheResult:
        page = self.page_size
        prompt = query.prompt_tokens
        limit = max(prompt - 1, 0)
        cap = limit // page * page
        keys = query_keys(query, query.cache_salt, page, limit, next(self._unknown_outputs))
        tree, seen = self._pair(query, keys.width)

        match = tree.match(keys.full, keys.weights, end=keys.lookup_end)
        hit = min(keys.weights(match.units), cap)
        available = hit
        if seen is not tree:
            available = min(keys.weights(seen.add(keys.full, keys.weights, keys.lookup_end)), cap)

        if self.capacity_tokens is not None:
            private = prompt - hit + max(query.output_count - 1, 0)
            if private + hit > self.capacity_tokens:
                raise InvalidQuery(
                    f"request needs {private + hit} KV tokens; the cache holds "
                    f"{self.capacity_tokens}"
                )
            excess = tree.tokens + private - self.capacity_tokens
            if excess > 0:
                tree.evict(excess, protect=match.node)
        tree.insert(keys.full, keys.weights)
        return CacheResult(
            prompt_tokens=prompt,
            cached_tokens=hit,
            miss_reason=miss_reason(prompt, hit, available, cap, "evicted"),
            longest_available=available,
        )
