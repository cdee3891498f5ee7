"""OpenAI prompt caching: automatic before GPT-5.6, breakpoint-based from GPT-5.6.

Source: https://developers.openai.com/api/docs/guides/prompt-caching (read 2026-08; values
and dates in ``providers.toml``), the cookbook "Prompt Caching 201" (128-token increments),
the SDK ``PromptCacheRetention`` docs (``24h`` only from gpt-5.5; default ``24h`` for
non-ZDR organisations), and openai/codex#35300 (GPT-5.6 breakpoints "no longer rely on
128-token rounding").

Before GPT-5.6 (``automatic``): prompts of at least 1,024 tokens are cached; a request hits
the longest prefix it shares with a cached prompt in 1,024 + 128·k token steps (reported
``cached_tokens`` is 0 or 1,024 + 128·k); ``prompt_cache_key`` is combined with the prefix
hash that routes requests to machines, so requests with different keys share nothing.
Retention ``in_memory`` keeps entries "5 to 10 minutes of inactivity" (10 minutes assumed),
``24h`` up to a day.

From GPT-5.6 (``breakpoints``): only prefixes that end at a breakpoint are cached: the
explicit ``prompt_cache_breakpoint``s and, in implicit mode, one at the latest user or tool
message (here: the last of ``query.boundaries``, else the end of the prompt). A request
reads the longest alive breakpoint prefix among its latest 50 breakpoints, with no fallback
to shorter unmarked prefixes; it writes its newest 4 (each at least 1,024 tokens) with a
30-minute TTL; writes are reported in ``cache_write_tokens`` (billed 1.25x).

vLLM's and SGLang's ``cache_salt`` is no OpenAI parameter and is not read.

Assumptions (undocumented): one cache per ``prompt_cache_key`` with no overflow to other
machines (the docs warn that more than ~15 requests per minute per prefix and key may
spill over), refresh of an entry's idle time on every hit, no capacity eviction unless
``capacity_tokens`` is given.
"""

from __future__ import annotations

from prefixlint.cache.base import (
    ROUTED_NAMESPACE,
    CacheQuery,
    CacheResult,
    miss_reason,
    prefix_digests,
    register,
)
from prefixlint.cache.entries import PrefixEntries
from prefixlint.cache.provider_data import gpt_version, provider
from prefixlint.cache.timed import TimedPrefixCache

MODES = ("auto", "automatic", "breakpoints")


def _version(text: str) -> tuple[int, int]:
    found = gpt_version(text)
    if found is None:
        raise ValueError(f"not a gpt model name: {text!r}")
    return found


@register
class OpenAICache:
    """OpenAI prompt caching; the mode follows the model name unless ``mode`` forces one.

    Parameters: ``model`` (used when a query names none), ``mode`` (``auto``,
    ``automatic``, ``breakpoints``), ``retention`` (``in_memory`` or ``24h``; default by
    model), ``idle_seconds`` (overrides the retention's idle time), ``minimum``, ``step``,
    ``breakpoint_ttl``, ``implicit_breakpoint`` (GPT-5.6 implicit mode, default on),
    ``capacity_tokens``.
    """

    name = "openai"
    settings: tuple[str, ...] = ("capacity_tokens",)
    namespace_params = ROUTED_NAMESPACE

    def __init__(
        self,
        model: str | None = None,
        mode: str = "auto",
        retention: str | None = None,
        idle_seconds: float | None = None,
        minimum: int | None = None,
        step: int | None = None,
        breakpoint_ttl: float | None = None,
        implicit_breakpoint: bool = True,
        capacity_tokens: int | None = None,
    ) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}")
        if retention not in (None, "in_memory", "24h"):
            raise ValueError("retention must be 'in_memory' or '24h'")
        data = provider("openai")
        self.model = model
        self.mode = mode
        self.retention = retention
        self.idle_seconds = idle_seconds
        self.minimum = data["minimum_tokens"] if minimum is None else minimum
        self.breakpoint_ttl = (
            data["breakpoint_ttl_seconds"] if breakpoint_ttl is None else breakpoint_ttl
        )
        self.implicit_breakpoint = implicit_breakpoint
        self._data = data
        self._automatic = TimedPrefixCache(
            minimum=self.minimum,
            step=data["step_tokens"] if step is None else step,
            capacity_tokens=capacity_tokens,
        )
        self._entries = PrefixEntries()

    def reset(self) -> None:
        self._automatic.reset()
        self._entries.reset()

    def process(self, query: CacheQuery) -> CacheResult:
        model = query.model or self.model
        if self._uses_breakpoints(model):
            return self._process_breakpoints(query)
        return self._automatic.process(
            query, query.cache_key, idle_seconds=self._idle_seconds(model)
        )

    def _uses_breakpoints(self, model: str | None) -> bool:
        if self.mode != "auto":
            return self.mode == "breakpoints"
        version = gpt_version(model)
        return version is not None and version >= _version(self._data["breakpoints_from"])

    def _idle_seconds(self, model: str | None) -> float:
        if self.idle_seconds is not None:
            return self.idle_seconds
        retention = self.retention
        if retention is None:
            version = gpt_version(model)
            extended = version is not None and version >= _version(self._data["extended_only_from"])
            retention = "24h" if extended else "in_memory"
        if retention == "24h":
            return float(self._data["extended_retention_seconds"])
        return float(self._data["assumed"]["in_memory_idle_seconds"])

    def _process_breakpoints(self, query: CacheQuery) -> CacheResult:
        prompt, now = query.prompt_tokens, query.timestamp
        positions = {position for position, _ttl in query.breakpoints if 0 < position <= prompt}
        if self.implicit_breakpoint:
            positions.add(query.boundaries[-1] if query.boundaries else prompt)
        latest = sorted(positions)[-self._data["breakpoint_read_window"] :]
        readable = [position for position in latest if position >= self.minimum]
        keys = prefix_digests(query, readable, query.cache_key)
        hit = max((p for p in readable if self._entries.alive(keys[p], now)), default=0)
        available = max((p for p in readable if keys[p] in self._entries.ever), default=0)
        if hit:
            self._entries.refresh(keys[hit], now)
        written = 0
        for position in latest[-self._data["breakpoint_max_writes"] :]:
            if position < self.minimum:
                continue
            if not self._entries.alive(keys[position], now):
                written = max(written, position)
            self._entries.write(keys[position], now, self.breakpoint_ttl)
        ceiling = readable[-1] if readable else 0
        return CacheResult(
            prompt_tokens=prompt,
            cached_tokens=hit,
            cache_write_tokens=max(written - hit, 0),
            miss_reason=miss_reason(prompt, hit, available, ceiling, "ttl-expired"),
            longest_available=available,
        )
