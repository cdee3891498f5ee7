"""llama.cpp's ``llama-server``: slots chosen by prompt similarity, and the host-RAM prompt cache.

Read from ``ggml-org/llama.cpp`` master (late 2026; ``tools/server/server-context.cpp`` at
commit 001d906a, ``tools/server/server-task.cpp``, ``common/common.h``, ``common/arg.cpp``).
Requests are served one after another, in log order:

* Slot choice (``get_available_slot``): among slots holding tokens, the one whose longest
  common prefix with the prompt covers the largest fraction of the prompt, if that fraction is
  above ``--slot-prompt-similarity`` (default 0.10); otherwise the least recently used slot
  (``t_last_used <= t_last``: among equals, the last one). The prompt cache is updated when
  the slot came by LRU, or when it came by similarity but keeps less than half of what it
  holds (``f_keep < 0.5``).
* Prompt cache (``--cache-ram``, default 8192 MiB; 0 disables it, -1 means no size limit),
  ``server_prompt_cache``: *saving* a slot (``alloc``) is skipped when an entry already holds
  all of its tokens; entries that are a prefix of the slot's tokens are dropped; the slot's
  tokens are appended as the newest entry. *Loading* (``load``) restores the entry with the
  largest kept fraction that beats the slot's own on both the kept fraction and the
  similarity (entries keeping under a quarter of themselves are skipped; an empty slot takes
  any), and takes it out of the cache. *Update* drops the oldest entries while more than one
  is left and the cache exceeds its size (entry size = tokens x KV bytes per token), then its
  token limit (the context size, or what the size limit holds if more).
* Idle slots (``--cache-idle-slots``, on by default): when a task starts, every other idle slot
  holding tokens is saved to the prompt cache and, with the unified KV cache that the default
  ``--parallel`` (auto: 4 slots) turns on, cleared.
* Reuse: ``n_past`` = the longest common prefix of the slot's tokens and the prompt, one less
  when it covers the whole prompt ("need to evaluate at least 1 token"); the slot then holds
  the prompt and the generated tokens but the last.

Parameters keep the server's defaults: ``slots`` 4, ``slot_prompt_similarity`` 0.10,
``cache_ram_mib`` 8192, ``cache_idle_slots`` and ``kv_unified`` on. The model's geometry is
not in a log: ``kv_bytes_per_token`` (default 114,688, Qwen3-0.6B's f16 KV: 28 layers x 8 KV
heads x 128 x 2 x 2 bytes) and ``ctx_tokens`` (default 40,960) size the prompt cache; set
them to the served model's. Not modelled: ``--cache-reuse`` KV shifting, context checkpoints
of SWA and recurrent models, concurrent requests. ``longest_available`` is what the server
would have reused had it kept every earlier prompt (a miss below it is ``evicted``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from prefixlint.cache.base import CacheQuery, CacheResult, miss_reason, register, unit_bytes
from prefixlint.cache.radix import RadixTree, SeenTree
from prefixlint.sequences import common_prefix_length

MIB = 1024 * 1024
KEEP_TO_SAVE = 0.5  # a slot chosen by similarity that keeps less of itself is saved first
KEEP_TO_LOAD = 0.25  # "don't trash large prompts"


@dataclass
class Slot:
    """One server slot: its tokens (8 bytes a unit) and when it was last used."""

    tokens: bytes = b""
    last_used: int = -1


@register
class LlamaCppCache:
    """llama-server's slots and host-RAM prompt cache; see the module docstring."""

    name = "llamacpp"
    settings: tuple[str, ...] = ("slots", "slot_prompt_similarity", "cache_ram_mib")

    def __init__(
        self,
        slots: int = 4,
        slot_prompt_similarity: float = 0.10,
        cache_ram_mib: int = 8192,
        cache_idle_slots: bool = True,
        kv_unified: bool = True,
        kv_bytes_per_token: int = 114_688,
        ctx_tokens: int = 40_960,
    ) -> None:
        if slots < 1:
            raise ValueError("slots must be at least 1")
        self.slot_count = slots
        self.similarity = slot_prompt_similarity
        self.cache_ram_mib = cache_ram_mib
        self.cache_idle_slots = cache_idle_slots and cache_ram_mib != 0
        self.kv_unified = kv_unified
        self.kv_bytes_per_token = kv_bytes_per_token
        self.ctx_tokens = ctx_tokens
        self.reset()

    def reset(self) -> None:
        self.slots = [Slot() for _ in range(self.slot_count)]
        self.entries: deque[bytes] = deque()
        self._clock = 0
        self._unit_tokens = 1
        self._kind: bool | None = None
        self._seen: dict[bool, RadixTree] = {}

    def process(self, query: CacheQuery) -> CacheResult:
        prompt_bytes = (
            query.token_bytes if query.tokens is not None else unit_bytes(query.trace_blocks[0])
        )
        kind = query.tokens is None
        unit_tokens = query.block_tokens or 1
        if self._kind is not None and (kind, unit_tokens) != (self._kind, self._unit_tokens):
            self.reset()
        self._kind, self._unit_tokens = kind, unit_tokens
        prompt = query.prompt_tokens

        def reusable(common_units: int) -> int:
            tokens = min(common_units * unit_tokens, prompt)
            return tokens - 1 if tokens == prompt and tokens > 0 else tokens

        slot = self._choose(prompt_bytes)
        hit = reusable(_common_units(slot.tokens, prompt_bytes))
        everything = self._seen.get(kind)
        if everything is None:
            everything = self._seen[kind] = SeenTree(8)

        def weights(units: int) -> int:
            return units * unit_tokens

        available = max(hit, reusable(everything.match(prompt_bytes, weights).units))
        output = query.output_ids
        slot.tokens = prompt_bytes + (unit_bytes(output[:-1]) if output else b"")
        if output is None and query.output_count > 1:
            slot.tokens += b"\xff" * 8  # generated tokens of unknown ids end any later match
        self._clock += 1
        slot.last_used = self._clock
        everything.insert(slot.tokens, weights)
        return CacheResult(
            prompt_tokens=prompt,
            cached_tokens=hit,
            miss_reason=miss_reason(prompt, hit, available, max(prompt - 1, 0), "evicted"),
            longest_available=available,
        )

    # ---------------------------------------------------------------- slots

    def _choose(self, prompt: bytes) -> Slot:
        """The slot for ``prompt``, with the prompt cache saved and loaded as the server does,
        and the other idle slots saved (and cleared) when the task starts."""
        chosen, update = self._most_similar(prompt), False
        if chosen is not None:
            kept = _common_units(chosen.tokens, prompt) / _units(chosen.tokens)
            update = kept < KEEP_TO_SAVE
        else:
            chosen, update = self._least_recent(), True
        if update and self.cache_ram_mib != 0:
            self._save(chosen.tokens)
            self._load(chosen, prompt)
            self._update()
        if self.cache_idle_slots:
            for slot in self.slots:
                if slot is not chosen and slot.tokens:
                    self._save(slot.tokens)
                    if self.kv_unified:
                        slot.tokens = b""
                    self._update()
        return chosen

    def _most_similar(self, prompt: bytes) -> Slot | None:
        if self.similarity == 0:
            return None
        best, best_fraction = None, 0.0
        for slot in self.slots:
            if not slot.tokens:
                continue
            fraction = _common_units(slot.tokens, prompt) / _units(prompt)
            if fraction > best_fraction and fraction > self.similarity:
                best, best_fraction = slot, fraction
        return best

    def _least_recent(self) -> Slot:
        """The slot used longest ago (the last of equals)."""
        return min(reversed(self.slots), key=lambda slot: slot.last_used)

    # ---------------------------------------------------------------- prompt cache

    def _save(self, tokens: bytes) -> None:
        """``server_prompt_cache::alloc``: append ``tokens`` unless an entry holds them all;
        drop the entries they contain."""
        if not tokens:
            return
        if any(_common_units(entry, tokens) == _units(tokens) for entry in self.entries):
            return
        kept = [e for e in self.entries if _common_units(e, tokens) != _units(e)]
        self.entries = deque(kept)
        self.entries.append(tokens)

    def _load(self, slot: Slot, prompt: bytes) -> None:
        """``server_prompt_cache::load``: move the best entry for ``prompt`` into ``slot``."""
        common = _common_units(slot.tokens, prompt)
        best_keep = common / _units(slot.tokens) if slot.tokens else -1.0
        best_similarity = common / _units(prompt)
        best = None
        for entry in self.entries:
            common = _common_units(entry, prompt)
            keep, similarity = common / _units(entry), common / _units(prompt)
            if keep < KEEP_TO_LOAD:
                continue
            if best_keep < keep and best_similarity < similarity:
                best, best_keep, best_similarity = entry, keep, similarity
        if best is not None:
            slot.tokens = best
            self.entries.remove(best)

    def _update(self) -> None:
        """``server_prompt_cache::update``: drop the oldest entries beyond the size limit,
        then beyond the token limit, always keeping one."""
        limit_bytes = self.cache_ram_mib * MIB if self.cache_ram_mib > 0 else 0
        per_token = max(1, self.kv_bytes_per_token)
        if limit_bytes:
            while len(self.entries) > 1 and self._tokens() * per_token > limit_bytes:
                self.entries.popleft()
        limit_tokens = max(self.ctx_tokens, limit_bytes // per_token)
        if self.ctx_tokens > 0:
            while len(self.entries) > 1 and self._tokens() > limit_tokens:
                self.entries.popleft()

    def _tokens(self) -> int:
        return sum(_units(entry) for entry in self.entries) * self._unit_tokens


def _units(tokens: bytes) -> int:
    return max(1, len(tokens) // 8)


def _common_units(left: bytes, right: bytes) -> int:
    if len(left) > len(right):
        left, right = right, left
    if right.startswith(left):  # the usual case: the new prompt extends the slot
        return len(left) // 8
    return common_prefix_length(left, right) // 8
