"""The ceiling: the longest prefix ever seen before, at token granularity, never evicted.

No engine or provider can serve more from cache than this: no capacity, no expiry, no
block rounding, no recomputed last token, no minimum. Prompts and known output ids (less
the last token) are remembered; requests with different ``extra_keys`` (model, LoRA
adapter) or ``cache_salt`` share nothing.

Those are the hard namespaces: KV states belong to one model and adapter, and a salt asks
the engine never to serve one salt's entries to another (vLLM's ``cache_salt`` exists to
stop prompts being guessed from cache timings). OpenAI's ``prompt_cache_key`` (``cache_key``)
is not one: it steers requests to a machine that may hold their prefix, caches are per
organisation, and busy keys overflow to other machines, so a cache could serve one key's
prefix to another. The ``openai`` model keeps keys apart, which can only lower its hits;
it ignores ``cache_salt``, which no OpenAI request carries (a salted log was served by an
engine).
"""

from __future__ import annotations

from prefixlint.cache.base import SALTED_NAMESPACE, CacheQuery, CacheResult, miss_reason, register
from prefixlint.cache.radix import SeenTree, query_keys


@register
class UnlimitedCache:
    """Longest previously seen prefix; see the module docstring."""

    name = "unlimited"
    settings: tuple[str, ...] = ()
    namespace_params = SALTED_NAMESPACE

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._trees: dict[bool, SeenTree] = {}

    def process(self, query: CacheQuery) -> CacheResult:
        keys = query_keys(query, query.cache_salt)
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
