"""Longest cached prefix with a minimum, a hit step, idle expiry and an optional capacity.

The shape of the implicit caches that providers document only in outline (OpenAI before
GPT-5.6, Gemini, DeepSeek's 2024 rules): a request hits the longest prefix it shares with a
cached prompt, rounded down to ``step`` tokens, if that is at least ``minimum`` tokens;
prompts of at least ``minimum`` tokens are cached; an entry expires after ``idle_seconds``
without use and every use (hit or store) refreshes it. Capacity eviction (LRU) is off by
default: providers do not document it.
"""

from __future__ import annotations

from prefixlint.cache.base import CacheQuery, CacheResult, MissReason, miss_reason
from prefixlint.cache.radix import RadixTree, SeenTree, query_keys


class TimedPrefixCache:
    """See the module docstring; ``process`` takes the query's key that the provider reads
    (``namespace``, see :func:`prefixlint.cache.radix.query_keys`) and the idle time of the
    query's retention."""

    def __init__(
        self,
        *,
        minimum: int,
        step: int = 1,
        idle_seconds: float | None = None,
        capacity_tokens: int | None = None,
    ) -> None:
        self.minimum = minimum
        self.step = step
        self.idle_seconds = idle_seconds
        self.capacity_tokens = capacity_tokens
        self.reset()

    def reset(self) -> None:
        self._trees: dict[bool, tuple[RadixTree, SeenTree]] = {}

    def process(
        self,
        query: CacheQuery,
        namespace: str | None,
        idle_seconds: float | None = None,
        minimum: int | None = None,
    ) -> CacheResult:
        minimum = self.minimum if minimum is None else minimum
        idle = self.idle_seconds if idle_seconds is None else idle_seconds
        now = query.timestamp
        prompt = query.prompt_tokens
        keys = query_keys(query, namespace, output="none")
        layout = query.tokens is None
        if layout not in self._trees:
            self._trees[layout] = (RadixTree(keys.width), SeenTree(keys.width))
        tree, seen = self._trees[layout]

        match = tree.match(keys.full, keys.weights, now, idle, keys.lookup_end)
        longest = keys.weights(match.units)
        hit = self._round(longest) if longest >= minimum else 0
        available = self._round(keys.weights(seen.add(keys.full, keys.weights, keys.lookup_end)))
        if prompt >= minimum:
            if self.capacity_tokens is not None:
                tree.evict(tree.tokens + prompt - longest - self.capacity_tokens, match.node)
            tree.insert(keys.full, keys.weights, now)

        lost: MissReason = "ttl-expired"
        if available < minimum:
            lost = "below-minimum"
        elif self.capacity_tokens is not None and not match.expired:
            lost = "evicted"
        ceiling = self._round(prompt) if prompt >= minimum else 0
        return CacheResult(
            prompt_tokens=prompt,
            cached_tokens=hit,
            miss_reason=miss_reason(prompt, hit, available, ceiling, lost),
            longest_available=available,
        )

    def _round(self, tokens: int) -> int:
        return tokens // self.step * self.step
