"""Run rendered prompts through one backend and say what it found, as a :class:`ReplayReport`."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from prefixlint.cache.query import prefill_query
from prefixlint.replay.inputs import Inputs
from prefixlint.replay.report import ReplayReport, percentile, token_summary
from prefixlint.replay.sim import cache_params, simulate


def _logs(inputs: Inputs) -> list[str]:
    return sorted({prompt.path for prompt in inputs.prompts})


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000.0, 3)


def run_sim(inputs: Inputs, *, cache: str, params: dict[str, Any]) -> ReplayReport:
    """The logged requests (timestamps, cache keys, output lengths) on the ``cache`` model."""
    prompt_tokens = [len(p.tokens) for p in inputs.prompts]
    cached = simulate(cache, ((p.where, p.query) for p in inputs.prompts), **params)
    rows = [
        {"path": p.path, "line": p.line, "prompt_tokens": n, "cached_tokens": c}
        for p, n, c in zip(inputs.prompts, prompt_tokens, cached, strict=True)
    ]
    return ReplayReport(
        backend="sim",
        settings={"logs": _logs(inputs), "cache": cache, **params},
        summary=token_summary(prompt_tokens, cached),
        checks={},
        requests=rows,
        skipped=inputs.skipped,
    )


@dataclass(frozen=True)
class TorchOptions:
    model: str = "qwen3-0.6b"
    weights: str | None = None
    device: str = "auto"
    dtype: str = "auto"
    kv_memory: str | None = None
    kv_fraction: float = 0.5
    block_size: int = 16
    seed: int = 0


def run_torch(inputs: Inputs, options: TorchOptions, *, tokenizer_vocab: int) -> ReplayReport:
    """Prefill with reuse from a device block pool, then without; compare with ``vllm``."""
    from prefixlint.replay.block_table import VllmBlockTable
    from prefixlint.replay.kv_pool import (
        DeviceBlockPool,
        blocks_for_memory,
        free_device_memory,
        parse_bytes,
    )
    from prefixlint.replay.models import import_torch, load_model
    from prefixlint.replay.torch_backend import TorchReplayer, replay_with_baseline

    loaded = load_model(
        options.model,
        weights=options.weights,
        device=options.device,
        dtype=options.dtype,
        vocab_needed=tokenizer_vocab,
        seed=options.seed,
    )
    torch, transformers = import_torch()
    if options.kv_memory is not None:
        memory = parse_bytes(options.kv_memory)
    else:
        memory = int(free_device_memory(torch, loaded.device) * options.kv_fraction)
    num_blocks = blocks_for_memory(memory, loaded.geometry, options.block_size)
    pool = DeviceBlockPool(
        torch, loaded.geometry, num_blocks, options.block_size, loaded.device, loaded.dtype
    )
    table = VllmBlockTable(options.block_size, num_blocks)
    replayer = TorchReplayer(torch, transformers, loaded, pool, table)
    compared = replay_with_baseline(replayer, inputs.prompts)
    sim_cached = simulate(
        "vllm",
        ((p.where, prefill_query(p.query)) for p in inputs.prompts),
        **cache_params(
            "vllm", block_size=options.block_size, capacity_tokens=table.capacity_tokens
        ),
    )
    rows: list[dict[str, Any]] = [
        {
            "path": c.prompt.path,
            "line": c.prompt.line,
            "prompt_tokens": len(c.prompt.tokens),
            "cached_tokens": c.with_reuse.reused_tokens,
            "computed_tokens": c.with_reuse.computed_tokens,
            "sim_cached_tokens": sim,
            "ttft_ms": _ms(c.with_reuse.ttft_s),
            "baseline_ttft_ms": _ms(c.without_reuse.ttft_s),
            "peak_memory_bytes": c.with_reuse.peak_memory_bytes,
            "max_abs_logit_diff": c.max_abs_logit_diff,
            "same_first_token": c.with_reuse.first_token == c.without_reuse.first_token,
        }
        for c, sim in zip(compared, sim_cached, strict=True)
    ]
    with_reuse = [c.with_reuse.ttft_s * 1000 for c in compared]
    without = [c.without_reuse.ttft_s * 1000 for c in compared]
    peaks = [
        m.peak_memory_bytes
        for c in compared
        for m in (c.with_reuse, c.without_reuse)
        if m.peak_memory_bytes is not None
    ]
    summary: dict[str, Any] = token_summary(
        [len(c.prompt.tokens) for c in compared], [c.with_reuse.reused_tokens for c in compared]
    )
    summary.update(
        {
            "computed_tokens": sum(c.with_reuse.computed_tokens for c in compared),
            "ttft_ms_p50": percentile(with_reuse, 50),
            "ttft_ms_p95": percentile(with_reuse, 95),
            "baseline_ttft_ms_p50": percentile(without, 50),
            "baseline_ttft_ms_p95": percentile(without, 95),
            "speedup_p50": _ratio(percentile(without, 50), percentile(with_reuse, 50)),
            "speedup_total": _ratio(sum(without), sum(with_reuse)),
            "peak_memory_bytes": max(peaks) if peaks else None,
            "max_abs_logit_diff": max((c.max_abs_logit_diff for c in compared), default=0.0),
            "same_first_token": sum(r["same_first_token"] for r in rows),
        }
    )
    return ReplayReport(
        backend="torch",
        settings={
            "logs": _logs(inputs),
            "model": loaded.name,
            "random_weights": loaded.random_weights,
            "device": str(loaded.device),
            "dtype": str(loaded.dtype).removeprefix("torch."),
            "block_size": options.block_size,
            "kv_blocks": num_blocks,
            "kv_pool_bytes": pool.nbytes,
            "capacity_tokens": table.capacity_tokens,
            "cache": "vllm",
        },
        summary=summary,
        checks={
            "logits_match_full_prefill": all(c.logits_match for c in compared),
            "reuse_matches_sim": all(r["cached_tokens"] == r["sim_cached_tokens"] for r in rows),
        },
        requests=rows,
        skipped=inputs.skipped,
    )


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    if numerator is None or not denominator:
        return None
    return numerator / denominator


@dataclass(frozen=True)
class ServerOptions:
    url: str
    served_model: str | None = None
    concurrency: int = 1
    timeout: float = 60.0
    retries: int = 3
    backoff: float = 0.5
    api_key: str | None = None
    absent_means_zero: bool = False
    scrape_metrics: bool = True
    reset_cache: bool = False
    max_response_bytes: int | None = None  # None: the client's default


def run_server(
    inputs: Inputs,
    options: ServerOptions,
    *,
    cache: str,
    params: dict[str, Any],
    lora_modules: frozenset[str] = frozenset(),
) -> ReplayReport:
    """Send the requests to ``options.url`` and compare what it reused with ``cache``'s model.

    A request naming one of ``lora_modules`` is sent under that adapter's name; the others
    under the served model's.
    Each request carries the ``chat_template_kwargs`` the rendering of ``inputs`` assumed, so
    the server's prompt is the one the model is fed."""
    from prefixlint.replay.server import (
        MAX_RESPONSE_BYTES,
        EngineClient,
        request_body,
        request_from_body,
        send_in_order,
        sent_query,
        timed_queries,
    )

    with EngineClient(
        options.url,
        timeout=options.timeout,
        retries=options.retries,
        backoff=options.backoff,
        api_key=options.api_key,
        absent_means_zero=options.absent_means_zero,
        max_response_bytes=options.max_response_bytes or MAX_RESPONSE_BYTES,
    ) as client:
        model = options.served_model or client.served_model()
        reset = client.reset_cache() if options.reset_cache else None
        before = client.prefix_cache_counters() if options.scrape_metrics else None
        renderer = inputs.renderer
        bodies = [
            request_body(
                p.request,
                p.request.model if p.request.model in lora_modules else model,
                renderer.template_kwargs(p.request),
            )
            for p in inputs.prompts
        ]
        replies = list(send_in_order(client, bodies, options.concurrency))
        after = client.prefix_cache_counters() if options.scrape_metrics else None
    sent = [sent_query(renderer, request_from_body(body), lora_modules) for body in bodies]
    if options.concurrency > 1:
        # Requests overlap: the model takes them in the order they were sent, each running
        # from when the server took it (seen on a slot, or estimated) to its release, and the
        # predictions go back to log order.
        order = timed_queries(sent, replies)
        timed = simulate(cache, ((inputs.prompts[i].where, q) for i, q in order), **params)
        predicted = [0] * len(sent)
        for (i, _), cached in zip(order, timed, strict=True):
            predicted[i] = cached
    else:
        predicted = simulate(
            cache, ((p.where, q) for p, q in zip(inputs.prompts, sent, strict=True)), **params
        )
    rows: list[dict[str, Any]] = [
        {
            "path": prompt.path,
            "line": prompt.line,
            "prompt_tokens": query.prompt_tokens,
            "server_prompt_tokens": reply.prompt_tokens,
            "cached_tokens": reply.cached_tokens,
            "sim_cached_tokens": sim,
            "agrees": reply.cached_tokens == sim if reply.cached_tokens is not None else None,
            "cached_field": reply.cached_field,
            "latency_ms": _ms(reply.latency_s),
            "error": reply.error,
        }
        for prompt, query, reply, sim in zip(inputs.prompts, sent, replies, predicted, strict=True)
    ]
    reported = [r for r in rows if r["cached_tokens"] is not None]
    summary: dict[str, Any] = token_summary(
        [r["server_prompt_tokens"] or r["prompt_tokens"] for r in reported],
        [r["cached_tokens"] for r in reported],
    )
    latencies = [r["latency_ms"] for r in rows if r["error"] is None]
    summary.update(
        {
            "requests": len(rows),
            "reported": len(reported),
            "errors": sum(r["error"] is not None for r in rows),
            "agreeing": sum(bool(r["agrees"]) for r in reported),
            "agreement": sum(bool(r["agrees"]) for r in reported) / len(reported)
            if reported
            else None,
            "sim_cached_tokens": sum(predicted),
            "latency_ms_p50": percentile(latencies, 50),
            "latency_ms_p95": percentile(latencies, 95),
        }
    )
    if before is not None and after is not None:
        delta = after - before
        # Garbage /metrics can say NaN or Infinity: unknown, never a number in the report.
        summary["metrics_prefix_cache_queries"] = _finite(delta.queries)
        summary["metrics_prefix_cache_hits"] = _finite(delta.hits)
    return ReplayReport(
        backend="server",
        settings={
            "logs": _logs(inputs),
            "url": options.url,
            "model": model,
            "concurrency": options.concurrency,
            "cache_reset": reset,
            "cache": cache,
            **params,
        },
        summary=summary,
        checks={
            "every_request_reported": len(reported) == len(rows),
            "prompt_tokens_match": all(
                r["server_prompt_tokens"] in (None, r["prompt_tokens"]) for r in rows
            ),
            "agrees_with_sim": bool(reported) and all(r["agrees"] for r in reported),
        },
        requests=rows,
        skipped=inputs.skipped,
    )
