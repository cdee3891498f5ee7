"""llama.cpp server with one slot: reuse the common prefix with what the slot holds.

Source: ggml-org/llama.cpp ``tools/server/server-context.cpp`` (``update_slots``): the slot
keeps the tokens of its previous task (prompt, then generated tokens); a new task reuses
``n_past = get_common_prefix(slot tokens, new prompt)`` and, "[TAG_PROMPT_LOGITS] need to
evaluate at least 1 token", ``n_past == n_prompt_tokens`` is lowered by one. So an exact
repeat of an N-token prompt, or a prompt that is a prefix of what the slot holds, reuses
N - 1 tokens; anything else reuses the longest common prefix. The same rule is in every
older ``server.cpp`` since 2023 ("we have to evaluate at least 1 token to generate logits").

Not modelled: ``--parallel`` slots (chosen by prompt similarity), ``--cache-reuse`` KV
shifting of matching chunks, the host-memory prompt cache (``--cache-ram``) and SWA or
recurrent models that can only restore checkpoints. ``longest_available`` is what the slot
would have reused had it kept every earlier request (a miss below it is ``evicted``: another
request took the slot in between).
"""

from __future__ import annotations

from prefixlint.cache.base import CacheQuery, CacheResult, miss_reason, register, unit_bytes
from prefixlint.cache.radix import RadixTree
from prefixlint.sequences import common_prefix_length


@register
class LlamaCppCache:
    """One slot, longest common prefix with its contents; see the module docstring."""

    name = "llamacpp"
    settings = ()

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._slot = b""
        self._unit_tokens = 1
        self._kind: bool | None = None
        self._seen: dict[bool, RadixTree] = {}

    def process(self, query: CacheQuery) -> CacheResult:
        prompt_bytes = (
            query.token_bytes if query.tokens is not None else unit_bytes(query.block_hashes)
        )
        kind = query.tokens is None
        unit_tokens = query.block_tokens or 1
        if self._kind is not None and (kind, unit_tokens) != (self._kind, self._unit_tokens):
            self._slot = b""
        prompt = query.prompt_tokens

        def reusable(common_units: int) -> int:
            tokens = min(common_units * unit_tokens, prompt)
            return tokens - 1 if tokens == prompt and tokens > 0 else tokens

        def weights(units: int) -> int:
            return units * unit_tokens

        hit = reusable(_common_prefix_units(self._slot, prompt_bytes))
        everything = self._seen.setdefault(kind, RadixTree(8))
        available = max(hit, reusable(everything.match(prompt_bytes, weights).units))
        self._kind, self._unit_tokens = kind, unit_tokens
        output = query.output_ids
        self._slot = prompt_bytes + (unit_bytes(output[:-1]) if output else b"")
        if output is None and query.output_count > 1:
            self._slot += b"\xff" * 8  # generated tokens of unknown ids end any later match
        everything.insert(self._slot, weights)
        return CacheResult(
            prompt_tokens=prompt,
            cached_tokens=hit,
            miss_reason=miss_reason(prompt, hit, available, max(prompt - 1, 0), "evicted"),
            longest_available=available,
        )


def _common_prefix_units(left: bytes, right: bytes) -> int:
    if len(left) > len(right):
        left, right = right, left
    if right.startswith(left):  # the usual case: the new prompt extends the slot
        return len(left) // 8
    return common_prefix_length(left, right) // 8
