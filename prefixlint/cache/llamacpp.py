"""llama.cpp's ``llama-server``: slots chosen by prompt similarity, and the host-RAM prompt cache.

Read from ``ggml-org/llama.cpp`` at commit 0c1e5709 (the llama.cpp that llama-cpp-python
0.3.36 vendors, late 2026; ``tools/server/server-context.cpp``, ``tools/server/server.cpp``,
``tools/server/server-task.cpp``, ``common/common.h``, ``common/arg.cpp``), and checked
against that server (``bench/llama_server_loop.py``). Requests are taken in the order given;
one without a ``finish`` time is over before the next (served one after another):

* Slot choice (``get_available_slot``): among slots holding tokens, the one whose longest
  common prefix with the prompt covers the largest fraction of the prompt, if that fraction is
  above ``--slot-prompt-similarity`` (default 0.10); otherwise the least recently used slot
  (``t_last_used <= t_last``: among equals, the last one). The prompt cache is updated when
  the slot came by LRU, or when it came by similarity but keeps less than half of what it
  holds (``f_keep < 0.5``). Fractions are computed in ``float`` as the server does.
* Prompt cache (``--cache-ram``, default 8192 MiB; 0 disables it, -1 means no size limit),
  ``server_prompt_cache``: *saving* a slot (``alloc``) is skipped when an entry already holds
  all of its tokens, or when the slot alone is over the size limit; entries that are a prefix
  of the slot's tokens are dropped, then the oldest entries until the slot fits; the slot's
  tokens are appended as the newest entry. *Loading* (``load``) restores the entry with the
  largest kept fraction that beats the slot's own on both the kept fraction and the
  similarity (entries keeping under a quarter of themselves are skipped; an empty slot takes
  any), and takes it out of the cache. *Update* drops the oldest entries while the cache
  exceeds its size (entry size = tokens x KV bytes per token), then its token limit (the
  context size, or what the size limit holds if more); it may empty the cache.
* Idle slots (``--cache-idle-slots``, on by default): when a task starts, every other idle slot
  holding tokens is saved to the prompt cache and, with a unified KV cache, cleared. The KV
  cache is unified when ``--parallel`` is left to auto (4 slots, ``server.cpp``) or
  ``--kv-unified`` is given; an explicit ``--parallel N`` leaves it off, so idle slots keep
  their tokens.
* Concurrent requests: a query with ``timestamp`` and ``finish`` runs on its slot until
  ``finish``; a later query arriving before then cannot take that slot (``get_available_slot``
  and the idle-slot pass skip a slot that ``is_processing()``), and when every slot is busy it
  waits for the first to finish (the server defers the task and takes it up when a slot is
  released). Least recently used means released longest ago (``t_last_used``, set on release).
* Reuse: ``n_past`` = the longest common prefix of the slot's tokens and the prompt, one less
  when it covers the whole prompt ("need to evaluate at least 1 token"); the slot then holds
  the prompt and the generated tokens but the last.
* ``--cache-reuse N`` (default 0, off): after the common prefix, chunks of the slot's tokens
  that the prompt continues with are shifted into place instead of recomputed. From the end of
  the prefix, the first position of the slot's tokens where at least ``N`` tokens equal the
  prompt's next ones starts a chunk; the chunk runs as far as they agree, both sides move past
  it, and the search goes on from there; the slot's tokens skipped over are dropped. So a
  prompt that leaves out a stretch of the previous one (history cut from the middle) keeps
  what follows the cut, and one that inserts text keeps nothing after the insertion. The
  server turns it off for multimodal models and for KV caches that cannot shift.

Parameters keep the server's defaults: ``slots`` None (auto: 4, unified KV),
``slot_prompt_similarity`` 0.10, ``cache_ram_mib`` 8192, ``cache_idle_slots`` on,
``kv_unified`` None (on exactly when ``slots`` is auto). The model's geometry is not in a log:
``kv_bytes_per_token`` (default 114,688, Qwen3-0.6B's f16 KV: 28 layers x 8 KV heads x 128 x
2 x 2 bytes) and ``ctx_tokens`` (default 40,960) size the prompt cache; set them to the
served model's; ``cache_reuse`` is 0. Not modelled: context checkpoints of SWA and recurrent
models.
``longest_available`` is what the server would have reused had it kept every earlier prompt
(a miss below it is ``evicted``).
"""

from __future__ import annotations

import math
import struct
from collections import deque
from dataclasses import dataclass

from prefixlint.cache.base import CacheQuery, CacheResult, miss_reason, register, unit_bytes
from prefixlint.cache.radix import RadixTree, SeenTree
from prefixlint.sequences import common_prefix_length

MIB = 1024 * 1024
AUTO_SLOTS = 4  # ``--parallel`` left to auto (server.cpp)
KEEP_TO_SAVE = 0.5  # a slot chosen by similarity that keeps less of itself is saved first
KEEP_TO_LOAD = 0.25  # "don't trash large prompts"


def f32(value: float) -> float:
    """``value`` rounded to a C ``float``; one operation on floats, rounded, is the C result."""
    (rounded,) = struct.unpack("f", struct.pack("f", value))
    return float(rounded)


def fraction(numerator: int, denominator: int) -> float:
    """``float(numerator) / denominator`` as the server computes it, in single precision."""
    return f32(f32(numerator) / f32(denominator))


@dataclass
class Slot:
    """One server slot: its tokens (8 bytes a unit) and when it was last released: ``(finish
    time, order)``, the time 0 for requests without one, so that those go by order alone."""

    tokens: bytes = b""
    last_used: tuple[float, int] = (-math.inf, -1)


@register
class LlamaCppCache:
    """llama-server's slots and host-RAM prompt cache; see the module docstring."""

    name = "llamacpp"
    settings: tuple[str, ...] = (
        "slots",
        "slot_prompt_similarity",
        "cache_ram_mib",
        "kv_unified",
        "cache_reuse",
    )
    # llama-server serves one model and reads neither prompt_cache_key nor cache_salt.
    namespace_params: frozenset[str] = frozenset()

    def __init__(
        self,
        slots: int | None = None,
        slot_prompt_similarity: float = 0.10,
        cache_ram_mib: int = 8192,
        cache_idle_slots: bool = True,
        kv_unified: bool | None = None,
        kv_bytes_per_token: int = 114_688,
        ctx_tokens: int = 40_960,
        cache_reuse: int = 0,
    ) -> None:
        if slots is not None and slots < 1:
            raise ValueError("slots must be at least 1")
        if cache_reuse < 0:
            raise ValueError("cache_reuse must be at least 0")
        self.slot_count = AUTO_SLOTS if slots is None else slots
        self.similarity = slot_prompt_similarity
        self.cache_ram_mib = cache_ram_mib
        self.cache_idle_slots = cache_idle_slots and cache_ram_mib != 0
        self.kv_unified = slots is None if kv_unified is None else kv_unified
        self.kv_bytes_per_token = kv_bytes_per_token
        self.ctx_tokens = ctx_tokens
        self.cache_reuse = cache_reuse
        self.reset()

    def reset(self) -> None:
        self.slots = [Slot() for _ in range(self.slot_count)]
        self.entries: deque[bytes] = deque()
        self._clock = 0
        self._unit_tokens = 1
        self._kind: bool | None = None
        self._seen: dict[bool, RadixTree] = {}
        self._running: list[tuple[float, Slot]] = []
        self._released = 0.0

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

        slot = self._choose(prompt_bytes, self._busy(query.timestamp))
        common = _common_units(slot.tokens, prompt_bytes)
        if self.cache_reuse:
            chunk_units = -(-self.cache_reuse // unit_tokens)
            common += shifted_units(slot.tokens, prompt_bytes, common, chunk_units)
        hit = reusable(common)
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
        released = self._released if query.finish is None else query.finish
        self._released = max(self._released, released)
        slot.last_used = (released, self._clock)
        if query.finish is not None:
            self._running.append((query.finish, slot))
        everything.insert(slot.tokens, weights)
        return CacheResult(
            prompt_tokens=prompt,
            cached_tokens=hit,
            miss_reason=miss_reason(prompt, hit, available, max(prompt - 1, 0), "evicted"),
            longest_available=available,
        )

    # ---------------------------------------------------------------- slots

    def _busy(self, arrival: float | None) -> set[int]:
        """The ids of the slots still processing an earlier query when one arrives at
        ``arrival``: those whose query finishes after it. When every slot is busy the server
        defers the task (``process_single_task``) and takes it up again first when a slot is
        released (``server_queue::pop_deferred_task``), so the earliest finishers are freed."""
        if arrival is None:
            self._running.clear()
            return set()
        running = [(finish, slot) for finish, slot in self._running if finish > arrival]
        while len({id(slot) for _, slot in running}) >= self.slot_count:
            first = min(finish for finish, _ in running)
            running = [(finish, slot) for finish, slot in running if finish > first]
        self._running = running
        return {id(slot) for _, slot in running}

    def _choose(self, prompt: bytes, busy: set[int]) -> Slot:
        """The slot for ``prompt`` among those not ``busy``, with the prompt cache saved and
        loaded as the server does, and the other idle slots saved (and cleared) when the task
        starts; ``get_available_slot`` and the idle-slot pass skip a slot that
        ``is_processing()`` (``server-context.cpp``)."""
        free = [slot for slot in self.slots if id(slot) not in busy]
        chosen, update = self._most_similar(prompt, free), False
        if chosen is not None:
            similarity = fraction(_common_units(chosen.tokens, prompt), _units(prompt))
            kept = f32(f32(similarity * _units(prompt)) / _units(chosen.tokens))
            update = kept < KEEP_TO_SAVE
        else:
            chosen, update = self._least_recent(free), True
        if update and self.cache_ram_mib != 0:
            self._save(chosen.tokens)
            self._load(chosen, prompt)
            self._update()
        if self.cache_idle_slots:
            for slot in free:
                if slot is not chosen and slot.tokens:
                    self._save(slot.tokens)
                    if self.kv_unified:
                        slot.tokens = b""
                    self._update()
        return chosen

    def _most_similar(self, prompt: bytes, free: list[Slot]) -> Slot | None:
        if self.similarity == 0:
            return None
        best, best_fraction = None, 0.0
        for slot in free:
            if not slot.tokens:
                continue
            share = fraction(_common_units(slot.tokens, prompt), _units(prompt))
            if share > best_fraction and share > f32(self.similarity):
                best, best_fraction = slot, share
        return best

    def _least_recent(self, free: list[Slot]) -> Slot:
        """The free slot released longest ago (the last of equals): the server compares
        ``t_last_used``, set by ``server_slot::release``."""
        return min(reversed(free), key=lambda slot: slot.last_used)

    # ---------------------------------------------------------------- prompt cache

    def _save(self, tokens: bytes) -> None:
        """``server_prompt_cache::alloc``: append ``tokens`` unless an entry holds them all or
        they alone are over the size limit; drop the entries they contain, then the oldest
        until they fit."""
        if not tokens:
            return
        if any(_common_units(entry, tokens) == _units(tokens) for entry in self.entries):
            return
        limit = self._limit_bytes()
        size = self._size(tokens)
        if limit and size > limit:
            return
        kept = [e for e in self.entries if _common_units(e, tokens) != _units(e)]
        self.entries = deque(kept)
        while limit and self.entries and self._bytes() + size > limit:
            self.entries.popleft()
        self.entries.append(tokens)

    def _load(self, slot: Slot, prompt: bytes) -> None:
        """``server_prompt_cache::load``: move the best entry for ``prompt`` into ``slot``."""
        common = _common_units(slot.tokens, prompt)
        best_keep = fraction(common, _units(slot.tokens)) if slot.tokens else -1.0
        best_similarity = fraction(common, _units(prompt))
        best = None
        for entry in self.entries:
            common = _common_units(entry, prompt)
            keep, similarity = fraction(common, _units(entry)), fraction(common, _units(prompt))
            if keep < KEEP_TO_LOAD:
                continue
            if best_keep < keep and best_similarity < similarity:
                best, best_keep, best_similarity = entry, keep, similarity
        if best is not None:
            slot.tokens = best
            self.entries.remove(best)

    def _update(self) -> None:
        """``server_prompt_cache::update``: drop the oldest entries beyond the size limit,
        then beyond the token limit (raised to what the size limit holds)."""
        limit_bytes = self._limit_bytes()
        while limit_bytes and self.entries and self._bytes() > limit_bytes:
            self.entries.popleft()
        per_token = max(1, self.kv_bytes_per_token)
        limit_tokens = self.ctx_tokens
        if limit_bytes:
            limit_tokens = max(limit_tokens, limit_bytes // per_token)
        if self.ctx_tokens > 0:
            while self.entries and self._tokens() > limit_tokens:
                self.entries.popleft()

    def _limit_bytes(self) -> int:
        return self.cache_ram_mib * MIB if self.cache_ram_mib > 0 else 0

    def _size(self, tokens: bytes) -> int:
        return _units(tokens) * self._unit_tokens * self.kv_bytes_per_token

    def _bytes(self) -> int:
        return self._tokens() * self.kv_bytes_per_token

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


def shifted_units(cached: bytes, prompt: bytes, start: int, chunk_units: int) -> int:
    """The units of ``prompt`` after its first ``start`` that ``--cache-reuse`` takes from
    ``cached`` by shifting their KV (the chunk loop in ``server-context.cpp``): chunks of at
    least ``chunk_units`` units, each found from where the last one ended."""
    head_cached = head_prompt = start * 8
    reused = 0
    while head_cached < len(cached) and head_prompt < len(prompt):
        chunk = prompt[head_prompt : head_prompt + chunk_units * 8]
        if len(chunk) < chunk_units * 8:
            break  # fewer tokens left than a chunk needs
        found = _unit_find(cached, chunk, head_cached)
        if found < 0:
            break
        length = common_prefix_length(cached[found:], prompt[head_prompt:]) // 8 * 8
        reused += length // 8
        head_cached, head_prompt = found + length, head_prompt + length
    return reused


def _unit_find(haystack: bytes, needle: bytes, start: int) -> int:
    """The first offset from ``start`` where ``needle`` occurs on a unit boundary, or -1."""
    found = haystack.find(needle, start)
    while found >= 0 and found % 8:
        found = haystack.find(needle, found + 8 - found % 8)
    return found
