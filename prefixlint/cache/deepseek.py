"""DeepSeek context caching on disk.

Source: https://api-docs.deepseek.com/guides/kv_cache (text fetched 2026-08-13) and the
2024 launch note https://api-docs.deepseek.com/news/news0802.

Current rules (``rules="units"``): a request hits only a whole persisted "cache prefix
unit" that is a prefix of it, the longest one. Units are persisted at the end of each
request's input and at the end of its output (here: when output ids are logged), at
common prefixes the system detects across requests (persisted after those requests: ``A+B``
and ``A+C`` both miss, ``A+D`` then hits ``A``), and at fixed token intervals inside long
inputs (the interval is not published: ``interval_tokens``, 0 = not modelled).

Earlier rules (``rules="legacy"``): the longest shared prefix from token 0 in 64-token
storage units; less than 64 tokens is never cached.

Assumed (undocumented): unused units are cleared after ``idle_seconds`` (docs: "usually
within a few hours to a few days"); one cache per model, which neither OpenAI's
``prompt_cache_key`` nor an engine's ``cache_salt`` (no DeepSeek parameters) divides;
construction delay ("takes seconds") is not modelled.
"""

from __future__ import annotations

from prefixlint.cache.base import MODEL_NAMESPACE, CacheQuery, CacheResult, miss_reason, register
from prefixlint.cache.provider_data import provider
from prefixlint.cache.radix import RadixTree, SeenTree, query_keys
from prefixlint.cache.timed import TimedPrefixCache


@register
class DeepSeekCache:
    """Prefix-unit cache (current rules) or 64-token units (``rules="legacy"``).

    Parameters: ``rules``, ``idle_seconds``, ``interval_tokens``.
    """

    name = "deepseek"
    settings: tuple[str, ...] = ()
    namespace_params = MODEL_NAMESPACE

    def __init__(
        self,
        rules: str = "units",
        idle_seconds: float | None = None,
        interval_tokens: int | None = None,
    ) -> None:
        if rules not in ("units", "legacy"):
            raise ValueError("rules must be 'units' or 'legacy'")
        data = provider("deepseek")
        self.rules = rules
        assumed = data["assumed"]
        self.idle_seconds = assumed["idle_seconds"] if idle_seconds is None else idle_seconds
        self.interval_tokens = (
            assumed["interval_tokens"] if interval_tokens is None else interval_tokens
        )
        unit = data["legacy_unit_tokens"]
        self._legacy = TimedPrefixCache(minimum=unit, step=unit, idle_seconds=self.idle_seconds)
        self.reset()

    def reset(self) -> None:
        self._legacy.reset()
        self._trees: dict[bool, tuple[RadixTree, RadixTree]] = {}

    def process(self, query: CacheQuery) -> CacheResult:
        if self.rules == "legacy":
            return self._legacy.process(query, None)
        prompt, now = query.prompt_tokens, query.timestamp
        keys = query_keys(query, None, output="all")
        layout = query.tokens is None
        if layout not in self._trees:
            self._trees[layout] = (RadixTree(keys.width), SeenTree(keys.width))
        tree, seen = self._trees[layout]

        match = tree.match(keys.full, keys.weights, now, self.idle_seconds, keys.lookup_end)
        ever = seen.match(keys.full, keys.weights, end=keys.lookup_end)
        hit = keys.weights(match.best_mark)
        available = keys.weights(ever.best_mark)
        ends = {keys.lookup_units, len(keys.full) // keys.width}
        if self.interval_tokens and query.tokens is not None:
            step = self.interval_tokens
            ends.update(keys.lead + depth for depth in range(step, prompt, step))
        for each, found in ((tree, match), (seen, ever)):
            each.insert(keys.full, keys.weights, now)
            common = {found.units} if keys.lead < found.units < keys.lookup_units else set()
            each.add_marks(keys.full, ends | common)
        return CacheResult(
            prompt_tokens=prompt,
            cached_tokens=hit,
            miss_reason=miss_reason(prompt, hit, available, prompt, "ttl-expired"),
            longest_available=available,
        )
