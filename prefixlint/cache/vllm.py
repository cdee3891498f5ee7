"""vLLM v1 automatic prefix caching (APC), as in vLLM 0.33.

Sources (vllm-project/vllm; line numbers of the 0.33.0 wheel):

* ``vllm/v1/core/kv_cache_utils.py``: ``hash_block_tokens`` (line 707) chains
  ``hash((parent_hash, block_token_ids, extra_keys))`` over every *full* block of
  ``request.all_token_ids`` (prompt and generated tokens; "We only hash full blocks");
  ``generate_block_hash_extra_keys`` (line 637) adds LoRA keys to every block, multimodal
  keys to the blocks an item overlaps (:func:`media_hashes`),
  and ``cache_salt`` to the first block only.
* ``vllm/entrypoints/openai/protocol.py``: the chat and responses requests take
  ``cache_salt``; OpenAI's ``prompt_cache_key`` is no field of theirs, and fields a request
  model does not declare are logged and ignored (``OpenAIBaseModel``), so it salts nothing.
* ``vllm/v1/core/kv_cache_manager.py``: ``get_computed_blocks`` (line 266) walks the block
  hashes from the start, stops at the first miss, and caps the hit at ``num_tokens - 1``
  (line 302, "we must recompute the last token to obtain logits"), so a repeated prompt of
  N tokens hits ``floor((N-1)/B)*B``; ``allocate_slots`` registers the hash of every block
  that becomes full (duplicates allowed: a recomputed block is cached a second time).
* ``vllm/v1/core/block_pool.py``: ``free_blocks`` (line 816) frees a request's blocks in
  reverse order; hashed blocks join the tail of the free queue (LRU), unhashed ones its head
  (PR #42656); allocation pops the head and evicts the hash the block still carries.
* https://docs.vllm.ai/en/latest/design/prefix_caching/

Modelled for sequential replay (one request at a time, so reference counts are 0 between
requests): capacity in blocks of ``block_size`` tokens; a request holds
``ceil((prompt + output - 1) / B)`` blocks while it runs (the last sampled token is never
computed, so its KV does not exist); at the end all its blocks go back to the free queue,
tail block first. Output token ids, when logged, are hashed like prompt tokens; an output
known only by its count fills blocks that nothing can hit but that take capacity.
Hashes are Python's 64-bit tuple hash of integers (deterministic across processes), not
vLLM's SHA-256; the hit counts are the same up to hash collisions. A request hashes only the
blocks no earlier request hashed (:mod:`prefixlint.cache.chain_memo`), and of its new blocks
only those a later request's lookup reaches (:mod:`prefixlint.cache.pending_blocks`); the
pool and its free queue are kept as runs of blocks (:mod:`prefixlint.cache.block_runs`).

Block-hash queries (Mooncake traces) are split into vLLM blocks: a vLLM block is identified
by the trace ids it overlaps and its offset in the first one; the trace's last, partial
block contributes only the vLLM blocks it fills completely.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence

from prefixlint.cache.base import (
    SALTED_NAMESPACE,
    CacheQuery,
    CacheResult,
    InvalidQuery,
    miss_reason,
    register,
    resolve_capacity,
    stable_int,
    unit_bytes,
)
from prefixlint.cache.block_runs import Chain, RunPool
from prefixlint.cache.chain_memo import NONE_HASH, ChainHashMemo, block_extras, extend_chain
from prefixlint.cache.pending_blocks import PendingBlocks


def block_contents(query: CacheQuery, block_size: int) -> Sequence[Hashable]:
    """What identifies each full block whose tokens are known: prompt, then logged output.

    The last output token is left out: its KV is never computed.
    """
    if query.tokens is not None:
        sequence = tuple(query.tokens)
        output = query.output_ids
        if output:
            sequence += output[:-1]
        end = len(sequence) // block_size * block_size
        return [sequence[i : i + block_size] for i in range(0, end, block_size)]
    return _trace_block_contents(query, block_size)


def _trace_block_contents(query: CacheQuery, block_size: int) -> Sequence[Hashable]:
    trace_ids, trace_block = query.trace_blocks
    ids = tuple(trace_ids)
    count = query.prompt_tokens // block_size
    if trace_block % block_size == 0:
        per_id = trace_block // block_size  # (id, offset) packed as id * per_id + offset
        used = ids[: -(-count // per_id)]
        return [each * per_id + offset for each in used for offset in range(per_id)][:count]
    contents: list[Hashable] = []
    for start in range(0, count * block_size, block_size):
        first = start // trace_block
        last = (start + block_size - 1) // trace_block
        contents.append((ids[first : last + 1], start - first * trace_block))
    return contents


def chain_hashes(
    contents: Sequence[Hashable],
    extra_keys: Sequence[Hashable] = (),
    cache_salt: str | None = None,
) -> list[int]:
    """Chained block hashes: each depends on every earlier block, its own content and keys."""
    return extend_chain([], contents, block_extras(extra_keys, cache_salt))


def media_hashes(query: CacheQuery, block_size: int) -> list[int]:
    """Chained hashes of a prompt holding media: a block overlapping an item also carries
    ``(identity, offset - block start)`` (``_gen_mm_extra_hash_keys``; early v1 releases:
    the identity alone); the other blocks hash as they do without media."""
    extra, first_extra = block_extras(query.extra_keys, query.cache_salt)
    hashes: list[int] = []
    for index, content in enumerate(block_contents(query, block_size)):
        start = index * block_size
        keys = tuple(
            stable_int((identity, offset - start))
            for offset, length, identity in query.media
            if offset < start + block_size and start < offset + length
        )
        own = (first_extra if index == 0 else extra) + keys
        parent = hashes[-1] if hashes else NONE_HASH
        hashes.append(hash((parent, content, own)))
    return hashes


def block_hashes(query: CacheQuery, block_size: int = 16) -> list[int]:
    """The vLLM block hashes of a query's known-content full blocks (prompt, then output)."""
    if query.media:
        return media_hashes(query, block_size)
    return chain_hashes(block_contents(query, block_size), query.extra_keys, query.cache_salt)


def token_hashes(query: CacheQuery, memo: ChainHashMemo) -> list[int]:
    """The hashes of a token request's known full blocks (prompt, then logged output),
    recalled by ``memo`` where an earlier request hashed them (not with media)."""
    if query.media:
        return media_hashes(query, memo.block_size)
    return memo.hashes(known_bytes(query), query.extra_keys, query.cache_salt)[0]


def known_bytes(query: CacheQuery) -> bytes:
    """A token request's prompt, then its logged output but the last token, packed."""
    data = query.token_bytes
    output = query.output_ids
    if output:
        data += unit_bytes(output[:-1])
    return data


def token_chain(query: CacheQuery, memo: ChainHashMemo, length: int) -> Chain:
    """A token request's blocks as a :class:`~prefixlint.cache.block_runs.Chain` of
    ``length`` blocks: the hashes ``memo`` recalls, the rest of its known blocks pending
    (hashed only as far as the pool's walk reads them); with media, all hashed."""
    if query.media:
        units = media_hashes(query, memo.block_size)
        return Chain(units, 1, len(units), length)
    data = known_bytes(query)
    known = len(data) // (8 * memo.block_size)
    units, extras = memo.lazy_hashes(data, query.extra_keys, query.cache_salt)
    pending = PendingBlocks(data, 0, len(units), known, extras, memo.block)
    return Chain(units, 1, known, length, pending=pending)


def request_hashes(
    query: CacheQuery, block_size: int, memo: ChainHashMemo, unknown_blocks: Iterator[int]
) -> list[int]:
    """The hashes of every full block a request fills.

    Blocks of known content (prompt, then logged output) come first; blocks of output known
    only by its count are numbered from ``unknown_blocks`` so that nothing can hit them.
    """
    if query.tokens is None:
        contents = _trace_block_contents(query, block_size)
        hashes = chain_hashes(contents, query.extra_keys, query.cache_salt)
    else:
        hashes = token_hashes(query, memo)
    blocks = (query.prompt_tokens + max(query.output_count - 1, 0)) // block_size
    if blocks > len(hashes):
        unknown = [(-1, next(unknown_blocks)) for _ in range(blocks - len(hashes))]
        extend_chain(hashes, unknown, block_extras(query.extra_keys, query.cache_salt))
    return hashes


def request_chain(
    query: CacheQuery, block_size: int, memo: ChainHashMemo, prompt: int, kept: int
) -> Chain:
    """A request's full blocks as :class:`prefixlint.cache.block_runs.Chain` units, of
    ``prompt`` tokens and ``kept`` with the computed output.

    Token prompts (and logged output ids) have one unit per block, its chained hash;
    ``memo`` recalls the hashes of earlier requests' prefixes. When trace blocks hold whole
    vLLM blocks, a unit is a trace id, unhashed: equal ids mean equal prefixes, the tree of
    the trace's namespace holds them, and the path down it is what the chained hash would
    name. Blocks of output known only by its count come last and match nothing.
    """
    length = kept // block_size
    if query.tokens is not None:
        return token_chain(query, memo, length)
    trace_ids, trace_block = query.block_hashes, query.block_tokens  # (not a property call)
    assert trace_ids is not None and trace_block is not None
    if trace_block % block_size:
        units = chain_hashes(
            _trace_block_contents(query, block_size), query.extra_keys, query.cache_salt
        )
        return Chain(units, 1, len(units), length)
    per_id = trace_block // block_size
    known = prompt // block_size
    # compared with other trace chains' tuples (of ints only, which the collector untracks)
    ids = tuple(trace_ids[: -(-known // per_id)])
    space = ("trace", per_id, query.extra_keys, query.cache_salt)
    return Chain(ids, per_id, known, length, space)


@register
class VllmCache:
    """vLLM v1 prefix cache: chained full-block hashes, LRU free queue, capacity in blocks.

    ``capacity_tokens`` is the usable cache size (``None``: unlimited); KV geometry keyword
    arguments (``memory_bytes``, ``num_layers``, ``num_kv_heads``, ``head_dim``,
    ``dtype_bytes``) give the pool size instead, less vLLM's reserved null block.
    ``on_evict(hash)`` is called when the last copy of a block hash leaves the cache, and
    ``hash in model`` says whether one is cached (for blocks with a hash of their own:
    token prompts, and trace blocks that do not hold whole vLLM blocks).
    """

    name = "vllm"
    settings: tuple[str, ...] = ("block_size", "capacity_tokens")
    namespace_params = SALTED_NAMESPACE

    def __init__(
        self,
        block_size: int = 16,
        capacity_tokens: int | None = None,
        on_evict: Callable[[int], None] | None = None,
        **geometry: int,
    ) -> None:
        if block_size <= 0:
            raise ValueError("block_size must be positive")
        self.block_size = block_size
        tokens = resolve_capacity(capacity_tokens, geometry)
        self.capacity_blocks = None if tokens is None else tokens // block_size - bool(geometry)
        self.on_evict = on_evict
        self.reset()

    def reset(self) -> None:
        self._pool = RunPool(self.capacity_blocks, self.on_evict)
        self._memo = ChainHashMemo(self.block_size)

    def __contains__(self, block_hash: int) -> bool:
        return block_hash in self._pool

    def process(self, query: CacheQuery) -> CacheResult:
        size = self.block_size
        prompt = query.prompt_tokens
        output = query.output_tokens  # (query.output_count, without a property call)
        if not isinstance(output, int):
            output = len(output)
        kept = prompt + output - 1 if output > 1 else prompt  # the last output token: no KV
        held = -(-kept // size)
        if self.capacity_blocks is not None and held > self.capacity_blocks:
            raise InvalidQuery(
                f"request needs {held} KV blocks; the cache holds {self.capacity_blocks}"
            )
        chain = request_chain(query, size, self._memo, prompt, kept)
        lookup = (prompt - 1) // size if prompt > 1 else 0
        hit, available = self._pool.admit(chain, lookup, held)

        cached, available = hit * size, available * size
        reason = miss_reason(prompt, cached, available, lookup * size, "evicted")
        return CacheResult(prompt, cached, 0, reason, available)  # (keywords cost a dict)
