"""What an audit is asked to do, and the cache models it builds from that."""

from __future__ import annotations

from dataclasses import dataclass

from prefixlint.auditing.prices import GpuTimePrice, PriceTable
from prefixlint.cache import CACHE_MODELS, CacheModel, make_configured_model
from prefixlint.chat import DEFAULT_ENGINE, DEFAULT_TEMPLATE
from prefixlint.chat.media import DEFAULT_VISION, IMAGE_TOKENS
from prefixlint.sources.logs.limits import DEFAULT_LIMITS, LogLimits

MOONCAKE_BLOCK_TOKENS = 512
# Self-hosted engines and the bounds: no provider bills them.
ENGINE_MODELS = frozenset({"vllm", "sglang", "llamacpp", "unlimited", "belady"})


class AuditError(Exception):
    """The audit cannot run (unknown cache model, bad option); the message says why."""


@dataclass(frozen=True)
class AuditOptions:
    """How to audit: which cache models, how to render, how to find sessions."""

    caches: tuple[str, ...] = ("vllm",)
    block_size: int | None = None
    page_size: int | None = None
    capacity_tokens: int | None = None
    tokenizer: str = "qwen"
    template: str = DEFAULT_TEMPLATE
    engine: str = DEFAULT_ENGINE
    log_format: str = "auto"
    session_key: str | None = None
    what_if: bool = True
    trace_block_tokens: int = MOONCAKE_BLOCK_TOKENS
    max_snapshots: int = 1024
    examples_per_cause: int = 3
    full_text: bool = False
    prices: PriceTable | None = None
    # llama-server settings (``--parallel``, ``--slot-prompt-similarity``, ``--cache-ram``,
    # ``--cache-reuse``, ``--kv-unified``).
    slots: int | None = None
    slot_prompt_similarity: float | None = None
    cache_ram_mib: int | None = None
    cache_reuse: int | None = None
    kv_unified: bool | None = None
    # The LoRA adapters a vLLM server serves (``--lora-modules``), by name.
    lora_modules: frozenset[str] = frozenset()
    # Pad tokens per media part of unknown size on the vllm engine path (``--image-tokens``),
    # and the image processor that sizes inline images (``--vision-processor``).
    image_tokens: int = IMAGE_TOKENS
    vision_processor: str = DEFAULT_VISION
    log_limits: LogLimits = DEFAULT_LIMITS
    # Folders and files whose templates and Python built the logged prompts (audit --source).
    source_paths: tuple[str, ...] = ()
    # A request field to break the results down by (route, session, model, metadata.FIELD).
    group_by: str | None = None
    # The deployment's prefill speed and GPU price: time to first token and GPU money.
    prefill_tokens_per_second: float | None = None
    gpu_hour_usd: float | None = None
    # Capacity planning (audit --sweep): token capacities (none: the default series) and the
    # model's KV bytes per token (--model-geometry), named ``geometry_name``.
    sweep: bool = False
    sweep_capacities: tuple[int, ...] = ()
    kv_bytes_per_token: int | None = None
    geometry_name: str | None = None
    # Routing what-if (audit --replicas): replicas, router and its load bound.
    replicas: int | None = None
    router: str = "prefix-aware"
    router_epsilon: float = 0.1
    # Worker processes that render and tokenize (audit --jobs); 1: all in this process.
    jobs: int = 1

    def gpu_price(self) -> GpuTimePrice | None:
        """The price of a self-hosted engine's prefill, when both figures are given."""
        if self.gpu_hour_usd is None or not self.prefill_tokens_per_second:
            return None
        return GpuTimePrice(self.gpu_hour_usd, self.prefill_tokens_per_second)


def new_cache_model(name: str, options: AuditOptions) -> CacheModel:
    """A fresh cache model for the audit; bad names and parameters become an AuditError."""
    if name not in CACHE_MODELS:
        known = ", ".join(sorted(CACHE_MODELS))
        raise AuditError(f"unknown cache model {name!r} (known: {known})")
    try:
        return make_configured_model(
            name,
            block_size=options.block_size,
            page_size=options.page_size,
            capacity_tokens=options.capacity_tokens,
            slots=options.slots,
            slot_prompt_similarity=options.slot_prompt_similarity,
            cache_ram_mib=options.cache_ram_mib,
            cache_reuse=options.cache_reuse,
            kv_unified=options.kv_unified,
        )
    except ValueError as exc:
        raise AuditError(f"cache model {name}: {exc}") from None
