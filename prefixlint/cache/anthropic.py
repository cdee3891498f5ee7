"""Anthropic prompt caching (Claude API; Bedrock ``cache_control`` behaves the same).

Source: https://platform.claude.com/docs/en/build-with-claude/prompt-caching (2026-07 text;
values and dates in ``providers.toml``) and the Bedrock guide
https://docs.aws.amazon.com/bedrock/latest/userguide/prompt-caching.html.

* Caching happens only at ``cache_control`` breakpoints, at most 4 per request (more is a
  400 error, raised here as :class:`InvalidQuery`). Automatic caching (one top-level
  ``cache_control``) is a breakpoint on the last cacheable block: the caller passes it so.
  Without breakpoints nothing is cached and nothing is attributed (``miss_reason=None``).
* The prefix is tools → system → messages up to and including the marked block; putting the
  request in that order is the renderer's job. ``query.breakpoints`` are token positions.
* Reads: at each breakpoint the cache is checked at that position and at earlier
  content-block boundaries (``query.boundaries``), 20 positions in all counting the
  breakpoint itself ("up to approximately 20 blocks"); the longest alive entry wins.
* Writes: every breakpoint whose prefix has at least the model's minimum length (a dated,
  per-model table) becomes an entry; shorter ones are silently not cached. The tokens from
  the read position to the last breakpoint are reported as ``cache_write_tokens``
  (``cache_creation_input_tokens``; billed 1.25x for 5 minutes, 2x for 1 hour).
* TTL: 5 minutes, refreshed for free on every hit, or 1 hour (``ttl: "1h"``); a longer TTL
  may not follow a shorter one (a 400 error).

Entries are per model; OpenAI's ``prompt_cache_key`` and an engine's ``cache_salt`` are no
Anthropic parameters and are not read. Not modelled: an entry becomes readable only once the
first response starts (concurrent identical requests all write); cache isolation per
workspace.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import pairwise

from prefixlint.cache.base import (
    MODEL_NAMESPACE,
    CacheQuery,
    CacheResult,
    InvalidQuery,
    miss_reason,
    prefix_digests,
    register,
)
from prefixlint.cache.entries import PrefixEntries
from prefixlint.cache.provider_data import minimum_tokens, provider


@register
class AnthropicCache:
    """Breakpoint-based cache with lookback, per-model minimums and refreshing TTLs.

    Parameters: ``model`` (used when a query names none), ``minimum`` (overrides the
    table), ``lookback_blocks``, ``max_breakpoints``.
    """

    name = "anthropic"
    settings: tuple[str, ...] = ()
    namespace_params = MODEL_NAMESPACE

    def __init__(
        self,
        model: str | None = None,
        minimum: int | None = None,
        lookback_blocks: int | None = None,
        max_breakpoints: int | None = None,
    ) -> None:
        data = provider("anthropic")
        self.model = model
        self.minimum = minimum
        self.lookback_blocks = lookback_blocks or data["lookback_blocks"]
        self.max_breakpoints = max_breakpoints or data["max_breakpoints"]
        self._entries = PrefixEntries()

    def reset(self) -> None:
        self._entries.reset()

    def minimum_for(self, model: str | None) -> int:
        if self.minimum is not None:
            return self.minimum
        return minimum_tokens("anthropic", model or self.model)

    def process(self, query: CacheQuery) -> CacheResult:
        prompt, now = query.prompt_tokens, query.timestamp
        breakpoints = sorted((min(position, prompt), ttl) for position, ttl in query.breakpoints)
        self._validate(breakpoints)
        if not breakpoints:
            return CacheResult(prompt_tokens=prompt, cached_tokens=0)
        minimum = self.minimum_for(query.model)
        marks = [position for position, _ttl in breakpoints]
        boundaries = sorted({*query.boundaries, *marks})
        candidates = set()
        for position in marks:
            end = bisect_right(boundaries, position)
            candidates.update(boundaries[max(end - self.lookback_blocks, 0) : end])
        candidates = {position for position in candidates if position >= minimum}
        keys = prefix_digests(query, candidates, None)

        hit = max((p for p in candidates if self._entries.alive(keys[p], now)), default=0)
        available = max((p for p in candidates if keys[p] in self._entries.ever), default=0)
        if hit:
            self._entries.refresh(keys[hit], now)
        for position, ttl in breakpoints:
            if position >= minimum:
                self._entries.write(keys[position], now, ttl)
        ceiling = max((position for position in marks if position >= minimum), default=0)
        return CacheResult(
            prompt_tokens=prompt,
            cached_tokens=hit,
            cache_write_tokens=max(ceiling - hit, 0),
            miss_reason=miss_reason(prompt, hit, available, ceiling, "ttl-expired"),
            longest_available=available,
        )

    def _validate(self, breakpoints: list[tuple[int, float]]) -> None:
        if len(breakpoints) > self.max_breakpoints:
            raise InvalidQuery(
                f"{len(breakpoints)} cache_control breakpoints; Anthropic accepts at most "
                f"{self.max_breakpoints}"
            )
        for (_, earlier), (_, later) in pairwise(breakpoints):
            if later > earlier:
                raise InvalidQuery("a longer cache TTL must not follow a shorter one")
