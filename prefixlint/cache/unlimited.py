"""The ceiling: the longest prefix ever seen before, at token granularity, never evicted.

No engine or provider can serve more from cache than this: no capacity, no expiry, no
block rounding, no recomputed last token, no minimum. Prompts and known output ids (less
the last token) are remembered; requests with different ``cache_key`` or ``extra_keys``
share nothing, as in every engine and provider that takes such a key.
"""

from __future__ import annotations

from prefixlint.cache.base import CacheQuery, CacheResult, miss_reason, register
from prefixlint.cache.radix import SeenTree, query_keys


@register
class UnlimitedCache:
    """Longest previously seen prefix; see the module docstring."""

    name = "unlimited"
    settings: tuple[str, ...] = ()

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._trees: dict[bool, SeenTree] = {}

    def process(self, query: CacheQuery) -> CacheResult:
        keys = query_keys(query)
        tree = self._trees.get(query.tokens is None)
        if tree is None:
            tree = self._trees[query.tokens is None] = SeenTree(keys.width)
        hit = keys.weights(tree.add(keys.full, keys.weights, keys.lookup_end))
        prompt = query.prompt_tokens
        return CacheResult(
            prompt_tokens=prompt,
            cached_tokens=hit,
            miss_reason=miss_reason(prompt, hit, hit, prompt, "evicted"),
            longest_available=hit,
        )
