"""What to fix first, in the units an SRE plans with, and the assumptions behind the figures.

Each what-if fix is ranked by the prefill tokens it saves. Per-day figures scale the log's own
rate (its first to its last timestamp) to 24 hours; a log without timestamps gets none. Time to
first token and GPU money need a prefill throughput (``--prefill-tokens-per-second``: what the
engine prefills per second on the deployment's GPU and model, measured there); without one they
are not guessed. Money is the price table's API list price for the logged model, which is what
a provider charges; for a self-hosted engine model (vllm, sglang, llamacpp, and the unlimited
and belady bounds) that is only a stand-in, so the basis says so, and ``--gpu-hour-usd`` prices
the GPU time of prefill instead (also in the summary's cost and the what-if savings).
"""

from __future__ import annotations

from prefixlint.auditing.options import ENGINE_MODELS, AuditOptions
from prefixlint.auditing.results import AuditReport, FixFirst, WhatIf
from prefixlint.cache import CacheModel

DAY_SECONDS = 86_400.0


def log_span_seconds(report: AuditReport) -> float | None:
    """Seconds from the first to the last timestamped request (None: no usable timestamps)."""
    times = [r.timestamp for r in report.records if r.timestamp is not None]
    if len(times) < 2 or max(times) <= min(times):
        return None
    return max(times) - min(times)


def price_basis(model_cache: str, prices_version: str | None, options: AuditOptions) -> str:
    """What a dollar figure of ``model_cache`` means."""
    if model_cache in ENGINE_MODELS:
        gpu = options.gpu_price()
        if gpu is not None:
            return (
                f"GPU time of prefill: ${gpu.usd_per_hour:g} per GPU-hour at "
                f"{gpu.prefill_tokens_per_second:,.0f} prefill tokens/s"
            )
        return (
            "the logged model's API list price (a stand-in for a self-hosted engine; give "
            "--gpu-hour-usd and --prefill-tokens-per-second to price GPU time)"
        )
    return f"the provider's API list price for the logged model (prices {prices_version})"


def fix_first(report: AuditReport, options: AuditOptions) -> list[FixFirst]:
    """The what-if fixes (but "all"), the most prefill saved first."""
    span = log_span_seconds(report)
    rows = [_row(w, report, options, span) for w in report.what_if if w.fix != "all"]
    return sorted(rows, key=lambda r: (-r.prefill_tokens_saved, r.fix, r.model_cache))


def _row(entry: WhatIf, report: AuditReport, options: AuditOptions, span: float | None) -> FixFirst:
    saved = entry.prefill_saved
    per_day = None if span is None else saved * DAY_SECONDS / span
    speed = options.prefill_tokens_per_second
    ttft = saved / entry.base.requests / speed * 1000 if speed and entry.base.requests else None
    usd = entry.cost_saved
    return FixFirst(
        fix=entry.fix,
        codes=entry.codes,
        model_cache=entry.model_cache,
        hit_rate_before=entry.base.hit_rate,
        hit_rate_after=entry.fixed.hit_rate,
        prefill_tokens_saved=saved,
        prefill_tokens_per_day=per_day,
        ttft_saved_ms=ttft,
        usd_saved=usd,
        usd_per_day=None if usd is None or span is None else usd * DAY_SECONDS / span,
        basis=price_basis(entry.model_cache, report.prices_version, options),
    )


# Why the audit is slower with a Hugging Face template (see ``chat/hf.py``).
HF_TEMPLATE_COST = (
    "slow: an hf: template is run once per message and per tool of every request to find "
    "where each component went, and each prompt is tokenized whole, so the cost grows with "
    "the length of the conversations; the built-in qwen3 renderer reuses earlier turns"
)


def assumptions(
    options: AuditOptions, models: dict[str, CacheModel], prices_version: str | None
) -> dict[str, dict[str, str]]:
    """Per cache model, what its figures assume: capacity, granularity, rendering, prices."""
    rendering = f"template {options.template}, tokenizer {options.tokenizer}"
    if options.template.startswith("hf:"):
        rendering += f" ({HF_TEMPLATE_COST})"
    return {
        name: {
            "capacity": _capacity(name, options, model),
            "granularity": _granularity(model),
            "rendering": rendering,
            "prices": price_basis(name, prices_version, options),
        }
        for name, model in models.items()
    }


def _capacity(name: str, options: AuditOptions, model: CacheModel) -> str:
    if name in ENGINE_MODELS:
        if name == "unlimited":
            return "unlimited: the ceiling any cache could reach"
        if options.capacity_tokens is not None and name != "llamacpp":
            return f"{options.capacity_tokens:,} tokens of KV cache"
        if name == "llamacpp":
            return _llamacpp_capacity(model)
        return (
            "unlimited (nothing is evicted, so this is the ceiling; give --capacity-tokens, or "
            "--kv-memory with --model-geometry, for a real server's KV cache)"
        )
    return "the provider's, modelled by its documented retention (eviction is undocumented)"


def _llamacpp_capacity(model: CacheModel) -> str:
    """The slots and prompt cache the llamacpp model was built with, as llama-server's options."""
    slots = getattr(model, "slot_count", None)
    if slots is None:
        return "llama-server slots"
    kv = "unified KV cache" if getattr(model, "kv_unified", False) else "a KV cache per slot"
    ram = getattr(model, "cache_ram_mib", 0)
    cache = (
        "no host-RAM prompt cache"
        if ram == 0
        else "an unbounded host-RAM prompt cache"
        if ram < 0
        else f"a host-RAM prompt cache of {ram:,} MiB"
    )
    text = f"{slots} slot{'s' if slots != 1 else ''} ({kv}) and {cache}"
    reuse = getattr(model, "cache_reuse", 0)
    return text + (f", chunks of {reuse:,}+ tokens reused" if reuse else "")


def _granularity(model: CacheModel) -> str:
    if getattr(model, "page_size", None):
        return f"pages of {model.page_size} tokens"  # type: ignore[attr-defined]
    if getattr(model, "block_size", None):
        return f"blocks of {model.block_size} tokens"  # type: ignore[attr-defined]
    minimum = getattr(model, "minimum", None)
    return f"prefixes from {minimum:,} tokens" if minimum else "whole prefixes"
