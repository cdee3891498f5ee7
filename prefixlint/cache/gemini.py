"""Gemini implicit caching (Gemini API; Vertex AI behaves alike).

Sources: https://ai.google.dev/gemini-api/docs/caching ("Last updated 2026-07-07" table of
minimum input tokens per model; earlier tables in ``providers.toml`` history) and
https://cloud.google.com/vertex-ai/generative-ai/docs/context-cache/context-cache-overview
("Caching requests must contain a minimum of 2,048 tokens").

Implicit caching is on by default for Gemini 2.5 and later, "no cost saving guarantee":
requests that share a prefix of at least the model's minimum, sent "in a short amount of
time", may hit it. The hit granularity, the retention and the eviction are not documented:
this model hits the longest shared prefix at token granularity, assumes a 5-minute idle
retention (``idle_seconds``) and no capacity limit (``capacity_tokens``). Explicit
``CachedContent`` objects are not modelled. Entries are per model; OpenAI's
``prompt_cache_key`` and an engine's ``cache_salt`` are no Gemini parameters and are not read.
"""

from __future__ import annotations

from prefixlint.cache.base import MODEL_NAMESPACE, CacheQuery, CacheResult, register
from prefixlint.cache.provider_data import minimum_tokens, provider
from prefixlint.cache.timed import TimedPrefixCache


@register
class GeminiCache:
    """Longest shared prefix above the model's minimum, with an assumed idle retention.

    Parameters: ``model`` (used when a query names none), ``minimum`` (overrides the
    table), ``idle_seconds``, ``capacity_tokens``.
    """

    name = "gemini"
    settings: tuple[str, ...] = ("capacity_tokens",)
    namespace_params = MODEL_NAMESPACE

    def __init__(
        self,
        model: str | None = None,
        minimum: int | None = None,
        idle_seconds: float | None = None,
        capacity_tokens: int | None = None,
    ) -> None:
        data = provider("gemini")
        self.model = model
        self.minimum = minimum
        self._store = TimedPrefixCache(
            minimum=minimum or data["default_minimum_tokens"],
            idle_seconds=data["assumed"]["idle_seconds"] if idle_seconds is None else idle_seconds,
            capacity_tokens=capacity_tokens,
        )

    def reset(self) -> None:
        self._store.reset()

    def process(self, query: CacheQuery) -> CacheResult:
        minimum = self.minimum or minimum_tokens("gemini", query.model or self.model)
        return self._store.process(query, None, minimum=minimum)
