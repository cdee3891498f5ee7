"""The interface every prefix-cache model implements.

A model is fed the logged requests in log order, one :class:`CacheQuery` each, and answers
with a :class:`CacheResult`: how many prompt tokens it would have served from cache, how many
it would have written (providers that charge for writes), and, for the rest, why not.

Queries carry either the rendered prompt token ids (``tokens``) or, for Mooncake-style
traces, one id per block of ``block_tokens`` tokens (``block_hashes``; equal ids mean equal
prefixes up to and including that block; the last block may be partial, ``input_length``
says how long the prompt really is).

``miss_reason`` names the cause of the uncached part when the model knows it:

* ``None``: nothing to attribute (everything cached, or the rest is lost only to the
  model's granularity: the block or step rounding, or the last token an engine recomputes);
* ``"first-seen"``: the uncached tokens were never cached before (new content, or a prefix
  that diverged from everything cached);
* ``"evicted"``: an earlier request left them, capacity pushed them out;
* ``"ttl-expired"``: an earlier request left them, they expired;
* ``"below-minimum"``: the matching prefix, or the whole prompt, is shorter than the
  smallest cacheable unit (a provider's minimum, an engine's first block).

``longest_available`` is what this request would have had cached with infinite capacity and
TTL and no minimum, at the model's own granularity: ``cached_tokens < longest_available``
means capacity, expiry or a minimum cost hits; ``cached_tokens == longest_available`` with
uncached tokens means the prompt diverged (or is new).

Models are stateful: call ``process`` in log order, ``reset`` to start over. Build one with
``prefixlint.cache.make_cache_model(name, **params)``; ``CACHE_MODELS`` maps names to classes.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Literal, Protocol, TypeVar

from prefixlint.cache.running_digests import RunningDigests

MissReason = Literal["first-seen", "evicted", "ttl-expired", "below-minimum"]

# The request parameters behind ``CacheQuery.cache_key`` and ``CacheQuery.cache_salt``.
PROVIDER_KEY_PARAM = "prompt_cache_key"
ENGINE_SALT_PARAM = "cache_salt"
# What each model's ``namespace_params`` holds: the request fields, named as attribution
# names a changed one (``model``, ``params.<name>``), whose change puts a request in another
# namespace of the cache.
MODEL_NAMESPACE = frozenset({"model"})
SALTED_NAMESPACE = MODEL_NAMESPACE | {f"params.{ENGINE_SALT_PARAM}"}
ROUTED_NAMESPACE = MODEL_NAMESPACE | {f"params.{PROVIDER_KEY_PARAM}"}

CACHE_MODELS: dict[str, type[CacheModel]] = {}


class InvalidQuery(ValueError):
    """A query the modelled engine or provider would reject, or that is inconsistent."""


Model = TypeVar("Model", bound="CacheModel")


def register(cls: type[Model]) -> type[Model]:
    """Class decorator: add a model class to ``CACHE_MODELS`` under its ``name``."""
    CACHE_MODELS[cls.name] = cls
    return cls


@dataclass(frozen=True)
class CacheQuery:
    """One request as a cache sees it.

    Give ``tokens`` (prompt token ids) or ``block_hashes`` with ``block_tokens``.
    ``output_tokens`` are the decoded tokens (ids, or only their count) that engines also
    keep in their cache. ``cache_key`` is a provider's routing key (OpenAI's
    ``prompt_cache_key``), which only the ``openai`` model reads; ``cache_salt`` is an
    engine's isolation salt (vLLM's and SGLang's ``cache_salt``), which the engine models and
    the ``unlimited`` and ``belady`` references read. ``breakpoints`` are ``(token position
    where a marked component ends, ttl seconds)`` pairs (Anthropic ``cache_control``, OpenAI
    ``prompt_cache_breakpoint``);
    ``boundaries`` are the token positions where content blocks end, in order (Anthropic's
    lookback walks them; OpenAI GPT-5.6+ puts its implicit breakpoint at the last one).
    ``extra_keys`` isolate every block (model, vLLM LoRA name). ``media`` are the multimodal
    items, ``(offset, length, identity)`` of each one's placeholder tokens: the ``vllm``
    model adds the identity to the blocks that overlap them.
    ``timestamp`` is in seconds; ``None`` means "no time passed" (nothing expires).
    ``finish`` is when the request's answer was complete, on ``timestamp``'s clock; ``None``
    means at once. A model of an engine that serves requests concurrently (``llamacpp``) counts
    the request as running from ``timestamp`` to ``finish``: a later query whose timestamp
    falls before that finish arrives while it runs.
    ``packed`` is optional: ``tokens`` already packed as :func:`unit_bytes` packs them
    (``array("q", tokens).tobytes()``), when the caller has them; the models then skip
    packing. Its length is checked against ``tokens``, its content is the caller's promise.
    """

    tokens: Sequence[int] | None = None
    block_hashes: Sequence[int] | None = None
    block_tokens: int | None = None
    input_length: int | None = None
    timestamp: float | None = None
    output_tokens: int | Sequence[int] = 0
    cache_key: str | None = None
    cache_salt: str | None = None
    model: str | None = None
    breakpoints: Sequence[tuple[int, float]] = ()
    boundaries: Sequence[int] = ()
    extra_keys: tuple[Hashable, ...] = ()
    media: tuple[tuple[int, int, Hashable], ...] = ()
    finish: float | None = None
    packed: bytes | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if (self.tokens is None) == (self.block_hashes is None):
            raise InvalidQuery("give either tokens or block_hashes")
        if self.packed is not None and (
            self.tokens is None or len(self.packed) != 8 * len(self.tokens)
        ):
            raise InvalidQuery("packed must hold the tokens as 8-byte integers")
        if self.block_hashes is None:
            return
        if not self.block_tokens or self.block_tokens <= 0:
            raise InvalidQuery("block_hashes need a positive block_tokens")
        if not isinstance(self.output_tokens, int):
            raise InvalidQuery("block-hash queries take an output token count, not ids")
        if self.input_length is not None:
            count = len(self.block_hashes)
            if not (count - 1) * self.block_tokens < self.input_length <= count * self.block_tokens:
                raise InvalidQuery(
                    f"input_length {self.input_length} does not fit {count} blocks "
                    f"of {self.block_tokens} tokens"
                )

    @property
    def prompt_tokens(self) -> int:
        if self.tokens is not None:
            return len(self.tokens)
        if self.input_length is not None:
            return self.input_length
        ids, block = self.trace_blocks
        return len(ids) * block

    @property
    def trace_blocks(self) -> tuple[Sequence[int], int]:
        """A block-hash query's ids and tokens per block."""
        if self.block_hashes is None or self.block_tokens is None:
            raise InvalidQuery("a token query has no trace blocks")
        return self.block_hashes, self.block_tokens

    @cached_property
    def token_bytes(self) -> bytes:
        """``tokens`` as :func:`unit_bytes`, packed once per query (``packed`` when given)."""
        if self.packed is not None:
            return self.packed
        if self.tokens is None:
            raise InvalidQuery("a block-hash query has no tokens")
        return unit_bytes(self.tokens)

    @property
    def output_count(self) -> int:
        if isinstance(self.output_tokens, int):
            return self.output_tokens
        return len(self.output_tokens)

    @property
    def output_ids(self) -> tuple[int, ...] | None:
        """The decoded token ids when known (``None`` when only a count was logged)."""
        if isinstance(self.output_tokens, int):
            return None
        return tuple(self.output_tokens)


@dataclass(slots=True)
class CacheResult:
    """What a model says about one request; see the module docstring for the fields.

    Not frozen: every model builds one per request, and a frozen dataclass's ``__init__``
    (one ``object.__setattr__`` per field) took 2.4 times as long, about 7% of the ``vllm``
    model's time on the Mooncake trace (``bench/cache_models.py``)."""

    prompt_tokens: int
    cached_tokens: int
    cache_write_tokens: int = 0
    miss_reason: MissReason | None = None
    longest_available: int | None = None

    @property
    def uncached_tokens(self) -> int:
        return self.prompt_tokens - self.cached_tokens


class CacheModel(Protocol):
    """A prefix cache fed requests in log order."""

    name: str
    # The engine settings an audit passes on when they are given (``block_size``,
    # ``page_size``, ``capacity_tokens``); the model's other parameters keep their defaults.
    settings: tuple[str, ...]
    # The request fields whose change puts a request in another namespace of this cache
    # (``MODEL_NAMESPACE``, ``SALTED_NAMESPACE``, ``ROUTED_NAMESPACE`` or none).
    namespace_params: frozenset[str]

    def process(self, query: CacheQuery) -> CacheResult: ...

    def reset(self) -> None: ...


def miss_reason(
    prompt: int, cached: int, available: int, ceiling: int, lost: MissReason
) -> MissReason | None:
    """Classify the uncached part of a prompt.

    ``available``: the hit with infinite capacity and TTL and no minimum; ``ceiling``: the
    most this prompt could ever hit under the model's rules (0 when it is too short);
    ``lost``: why an available prefix was not hit.
    """
    if cached >= prompt:
        return None
    if cached < available:
        return lost
    if ceiling == 0:
        return "below-minimum"
    if cached >= ceiling:
        return None
    return "first-seen"


def stable_int(value: Hashable) -> int:
    """A process-independent 64-bit integer for a key (``hash`` of ``str`` is salted)."""
    digest = hashlib.blake2b(repr(value).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def unit_bytes(values: Sequence[int]) -> bytes:
    """Token or block ids as packed 64-bit integers, for fast slicing and comparison."""
    return array("q", values).tobytes()


def kv_capacity_tokens(
    *,
    memory_bytes: int,
    num_layers: int,
    num_kv_heads: int,
    head_dim: int,
    dtype_bytes: int = 2,
) -> int:
    """Tokens of KV cache that fit in ``memory_bytes`` (keys and values, every layer)."""
    per_token = 2 * num_layers * num_kv_heads * head_dim * dtype_bytes
    if per_token <= 0:
        raise ValueError("model geometry must be positive")
    return memory_bytes // per_token


def resolve_capacity(capacity_tokens: int | None, geometry: dict[str, int]) -> int | None:
    """``capacity_tokens`` as given, or computed from KV geometry keyword arguments.

    Geometry keys: ``memory_bytes``, ``num_layers``, ``num_kv_heads``, ``head_dim``,
    ``dtype_bytes``. ``None`` (no capacity, no geometry) means unlimited.
    """
    if geometry:
        if capacity_tokens is not None:
            raise ValueError("give capacity_tokens or KV geometry, not both")
        return kv_capacity_tokens(**geometry)
    if capacity_tokens is not None and capacity_tokens < 0:
        raise ValueError("capacity_tokens must be >= 0")
    return capacity_tokens


def prefix_digests(
    query: CacheQuery, positions: Iterable[int], namespace: str | None
) -> dict[int, tuple[bytes, int]]:
    """A key per token position naming the prompt prefix that ends there.

    Equal keys mean equal prefixes in the same namespace: ``namespace`` (the query's key
    that the cache reads, if any) and ``extra_keys``.
    With trace blocks a position stands for the blocks it reaches into. Asked again about
    the same prompt, only bytes past the prefixes digested so far are hashed
    (:class:`~prefixlint.cache.running_digests.RunningDigests`).
    """
    if query.tokens is not None:
        data, unit_tokens = query.token_bytes, 1
    else:
        ids, unit_tokens = query.trace_blocks
        data = unit_bytes(ids)
    salt = repr((namespace, tuple(query.extra_keys))).encode()
    keys = {}
    for position in sorted(set(positions)):
        end = min(-(-position // unit_tokens) * 8, len(data))
        keys[position] = (_DIGESTS.digest(data, salt, end), position)
    return keys


_DIGESTS = RunningDigests()
