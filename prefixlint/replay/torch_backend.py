"""Replay rendered requests on a real transformer with a paged KV block pool.

For each request, in log order: look its blocks up in the block table (vLLM's chained
hashes and LRU, :mod:`.block_table`), gather the matched blocks' keys and values from the
device pool into a ``DynamicCache``, prefill only the remaining tokens, take the first token,
then store the request's new full blocks. Then the same requests run again with reuse
disabled (a full prefill each), which is both the TTFT baseline and the reference for the
exactness check: the last position's logits with reuse must equal the full prefill's within
the dtype's tolerance.

Time to first token covers the lookup, the gather, the prefill and the first token's
argmax, measured with CUDA events on a GPU and a monotonic clock on CPU. Copying the new
blocks into the pool comes after the first token (an engine writes them during the forward
pass) and is not counted; the gather is (an engine with paged attention reads blocks in
place), so the measured speedup is, if anything, an underestimate.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from prefixlint.cache.base import CacheQuery
from prefixlint.cache.query import prefill_query
from prefixlint.replay import ReplayError
from prefixlint.replay.block_table import VllmBlockTable
from prefixlint.replay.inputs import Prompt
from prefixlint.replay.kv_pool import DeviceBlockPool, LayerKV
from prefixlint.replay.models import LoadedModel

if TYPE_CHECKING:
    from torch import Tensor
    from torch import device as TorchDevice
    from torch import dtype as TorchDtype

# (absolute, relative to the largest reference logit) tolerance per dtype.
TOLERANCES = {
    "float32": (1e-4, 1e-4),
    "float16": (5e-3, 5e-3),
    "bfloat16": (3e-2, 3e-2),
}


def tolerance(dtype: TorchDtype, reference_max: float) -> float:
    """The largest logit difference allowed for ``dtype`` around logits up to ``reference_max``."""
    absolute, relative = TOLERANCES[str(dtype).removeprefix("torch.")]
    return absolute + relative * reference_max


class Stopwatch:
    """Elapsed seconds of device work: CUDA events on a GPU, ``perf_counter`` on CPU."""

    def __init__(self, torch: ModuleType, device: TorchDevice) -> None:
        self.torch = torch
        self.cuda = device.type == "cuda"

    def start(self) -> None:
        """Start timing."""
        if self.cuda:
            self._begin = self.torch.cuda.Event(enable_timing=True)
            self._end = self.torch.cuda.Event(enable_timing=True)
            self._begin.record()
        else:
            self._begin_s = time.perf_counter()

    def stop(self) -> float:
        """Seconds since :meth:`start`, once the device work queued since is done."""
        if self.cuda:
            self._end.record()
            self._end.synchronize()
            return float(self._begin.elapsed_time(self._end)) / 1000.0
        return time.perf_counter() - self._begin_s


class Prefill:
    """One forward pass over new tokens, optionally after a cached prefix."""

    def __init__(self, torch: ModuleType, transformers: ModuleType, loaded: LoadedModel) -> None:
        self.torch = torch
        self.cache_class = transformers.DynamicCache
        self.loaded = loaded
        accepted = inspect.signature(loaded.model.forward).parameters
        self.cache_argument = "cache" if "cache" in accepted else "past_key_values"
        self.extra = {"logits_to_keep": 1} if "logits_to_keep" in accepted else {}

    def __call__(self, tokens: Sequence[int], past: list[LayerKV] | None) -> tuple[Tensor, object]:
        """``(last-position logits, cache)``; the cache (transformers') holds the whole
        sequence's K/V."""
        cache = self.cache_class()
        for layer, (keys, values) in enumerate(past or ()):
            cache.update(keys, values, layer)
        ids = self.torch.tensor([list(tokens)], device=self.loaded.device)
        with self.torch.inference_mode():
            out = self.loaded.model(
                input_ids=ids, use_cache=True, **{self.cache_argument: cache}, **self.extra
            )
        logits: Tensor = out.logits[0, -1]
        return logits, cache


class _CacheLayer(Protocol):
    keys: Tensor
    values: Tensor


@runtime_checkable
class _LayeredCache(Protocol):
    """A transformers 5.x cache: one object per layer."""

    layers: Sequence[_CacheLayer]


@runtime_checkable
class _ListCache(Protocol):
    """A transformers 4.x cache: lists of keys and values."""

    key_cache: Sequence[Tensor]
    value_cache: Sequence[Tensor]


def layer_kv(cache: object) -> list[LayerKV]:
    """Per layer ``(keys, values)`` of a transformers cache (5.x ``layers`` or 4.x lists)."""
    if isinstance(cache, _LayeredCache):
        return [(layer.keys, layer.values) for layer in cache.layers]
    if isinstance(cache, _ListCache):
        return list(zip(cache.key_cache, cache.value_cache, strict=True))
    raise ReplayError(f"cannot read keys and values from a {type(cache).__name__}")


@dataclass(frozen=True)
class PrefillMeasure:
    """One request's prefill, as measured."""

    reused_tokens: int
    computed_tokens: int
    ttft_s: float
    peak_memory_bytes: int | None
    first_token: int


class TorchReplayer:
    """Runs prefills for one model, with or without the block pool."""

    def __init__(
        self,
        torch: ModuleType,
        transformers: ModuleType,
        loaded: LoadedModel,
        pool: DeviceBlockPool,
        table: VllmBlockTable,
    ) -> None:
        self.torch = torch
        self.loaded = loaded
        self.pool = pool
        self.table = table
        self.prefill = Prefill(torch, transformers, loaded)
        self.watch = Stopwatch(torch, loaded.device)
        self.cuda = loaded.device.type == "cuda"

    def warm_up(self, tokens: Sequence[int]) -> None:
        """Prefill ``tokens`` untimed, so the first timed request does not pay for kernel setup."""
        for _ in range(2):
            self.prefill(tokens, None)
        if self.cuda:
            self.torch.cuda.synchronize()

    def _peak_reset(self) -> None:
        if self.cuda:
            self.torch.cuda.reset_peak_memory_stats(self.loaded.device)

    def _peak(self) -> int | None:
        if not self.cuda:
            return None
        return int(self.torch.cuda.max_memory_allocated(self.loaded.device))

    def run(self, query: CacheQuery, *, reuse: bool) -> tuple[PrefillMeasure, Tensor]:
        """``(measure, last-position logits on the host)`` for one request's prompt
        (``query.tokens``), reusing blocks of its namespace only."""
        tokens = query.tokens
        if tokens is None:
            raise ReplayError("a replay needs the prompt's token ids")
        self._peak_reset()
        self.watch.start()
        plan = self.table.admit(query) if reuse else None
        reused = plan.hit_tokens if plan is not None else 0
        past = self.pool.gather(plan.hit_slots) if plan is not None and reused else None
        logits, cache = self.prefill(tokens[reused:], past)
        first = int(logits.argmax())
        ttft = self.watch.stop()
        if plan is not None:
            self.pool.store(layer_kv(cache), plan.store_blocks, plan.store_slots)
        measure = PrefillMeasure(reused, len(tokens) - reused, ttft, self._peak(), first)
        return measure, logits.float().cpu()


@dataclass(frozen=True)
class ComparedRequest:
    """A request replayed with and without reuse, and how the two compare."""

    prompt: Prompt
    with_reuse: PrefillMeasure
    without_reuse: PrefillMeasure
    max_abs_logit_diff: float
    logit_tolerance: float

    @property
    def logits_match(self) -> bool:
        return self.max_abs_logit_diff <= self.logit_tolerance


def _run_at(
    replayer: TorchReplayer, prompt: Prompt, *, reuse: bool
) -> tuple[PrefillMeasure, Tensor]:
    try:
        return replayer.run(prefill_query(prompt.query), reuse=reuse)
    except ReplayError as exc:
        raise ReplayError(f"{prompt.where}: {exc}") from None


def replay_with_baseline(
    replayer: TorchReplayer, prompts: Sequence[Prompt]
) -> list[ComparedRequest]:
    """Replay the prompts with reuse, then without, and compare each request."""
    if not prompts:
        return []
    replayer.warm_up(prompts[0].tokens)
    reused = [_run_at(replayer, prompt, reuse=True) for prompt in prompts]
    compared = []
    for prompt, (with_reuse, logits) in zip(prompts, reused, strict=True):
        without_reuse, reference = _run_at(replayer, prompt, reuse=False)
        diff = float((logits - reference).abs().max())
        allowed = tolerance(replayer.loaded.dtype, float(reference.abs().max()))
        compared.append(ComparedRequest(prompt, with_reuse, without_reuse, diff, allowed))
    return compared
