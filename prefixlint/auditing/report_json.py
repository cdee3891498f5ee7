"""The audit as JSON (schema in the README's audit section; ``version`` changes when it does).

``redact=True`` renders :func:`prefixlint.auditing.redact.redact_report`'s copy, in which
every piece of logged text is a ``sha256:`` digest, so a report can be shared without the
prompts. ``skipped`` lists the first skipped lines (at most
:data:`~prefixlint.auditing.results.SKIPPED_SAMPLE`); ``skipped_reasons`` counts all of them
by kind of reason. The JSON is strict: no ``NaN`` or ``Infinity``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from prefixlint.auditing.engine_metrics import check_dict
from prefixlint.auditing.redact import redact_report
from prefixlint.auditing.report_breakpoints import advice_dict
from prefixlint.auditing.results import (
    AuditReport,
    CapacitySweep,
    FixFirst,
    RequestRecord,
    Routing,
    Totals,
    WhatIf,
)

SCHEMA_VERSION = 1


def _rate(value: float) -> float:
    return round(value, 6)


def _money(value: float | None) -> float | None:
    """Dollars to the micro-dollar; None when unknown or not finite (a price of ``nan``)."""
    return None if value is None or not math.isfinite(value) else round(value, 6)


def _totals(totals: Totals) -> dict[str, Any]:
    return {
        "requests": totals.requests,
        "prompt_tokens": totals.prompt_tokens,
        "cached_tokens": totals.cached_tokens,
        "hit_rate": _rate(totals.hit_rate),
        "cache_write_tokens": totals.cache_write_tokens,
        "cost_usd": _money(totals.cost_usd),
    }


def model_summary(report: AuditReport, model: str) -> dict[str, Any]:
    """Totals, misses by cause and provider usage for one cache model."""
    usage = report.usage(model)
    summary = _totals(report.totals(model))
    summary["skipped_lines"] = len(report.skipped)
    summary["by_cause"] = {
        cause: {
            "requests": entry.requests,
            "uncached_tokens": entry.uncached_tokens,
            "cost_tokens": entry.cost_tokens,
        }
        for cause, entry in report.by_cause(model).items()
    }
    summary["usage"] = {
        "requests_reporting": usage.requests,
        "observed_cached_tokens": usage.observed_cached,
        "predicted_cached_tokens": usage.predicted_cached,
        "prompt_tokens": usage.prompt_tokens,
    }
    return summary


def _request(record: RequestRecord) -> dict[str, Any]:
    divergence = None
    if record.divergence_char is not None or record.divergence_token is not None:
        divergence = {"char": record.divergence_char, "token": record.divergence_token}
    return {
        "file": record.file,
        "line": record.line,
        "session_id": record.session_id,
        "timestamp": record.timestamp,
        "model_cache": record.model_cache,
        "prompt_tokens": record.prompt_tokens,
        "cached_tokens": record.cached_tokens,
        "cache_write_tokens": record.cache_write_tokens,
        "observed_cached_tokens": record.observed_cached,
        "cause": record.cause,
        "component": record.component,
        "divergence": divergence,
        "predecessor_line": record.predecessor_line,
        "cost_tokens": record.cost_tokens,
        "cost_usd": _money(record.cost_usd),
        "source": [
            {"path": path, "line": line, "code": code} for path, line, code in record.source
        ],
    }


def _what_if(entry: WhatIf) -> dict[str, Any]:
    return {
        "fix": entry.fix,
        "codes": list(entry.codes),
        "model_cache": entry.model_cache,
        "hit_rate_before": _rate(entry.base.hit_rate),
        "hit_rate_after": _rate(entry.fixed.hit_rate),
        "gain": _rate(entry.gain),
        "prompt_tokens": entry.fixed.prompt_tokens,
        "cached_tokens": entry.fixed.cached_tokens,
        "prefill_tokens_saved": entry.prefill_saved,
        "cost_saved_usd": _money(entry.cost_saved),
    }


def to_dict(report: AuditReport, *, redact: bool = False) -> dict[str, Any]:
    """The whole report as plain data; ``summary`` is the first cache model's."""
    if redact:
        report = redact_report(report)
    models = {model: model_summary(report, model) for model in report.cache_models}
    primary = report.cache_models[0]
    examples: dict[str, dict[str | None, list[Any]]] = {}
    for (model, cause), found in report.examples.items():
        examples.setdefault(model, {})[cause] = [
            {
                "file": e.file,
                "line": e.line,
                "predecessor_line": e.predecessor_line,
                "component": e.component,
                "divergence": {"char": e.char, "token": e.token},
                "before": e.before,
                "after": e.after,
            }
            for e in found
        ]
    return {
        "version": SCHEMA_VERSION,
        "files": report.files,
        "cache_models": report.cache_models,
        "prices_version": report.prices_version,
        "summary": {
            "model_cache": primary,
            "lines": report.lines_read,
            **models[primary],
        },
        "models": models,
        "requests": [_request(r) for r in report.records],
        "skipped": [{"file": s.file, "line": s.line, "reason": s.reason} for s in report.skipped],
        "skipped_reasons": dict(report.skipped.by_reason),
        "examples": examples,
        "what_if": [_what_if(w) for w in report.what_if],
        "sources": {model: _sources(report, model) for model in report.cache_models},
        "fix_first": [_fix_first(row) for row in report.fix_first],
        "groups": {model: _groups(report, model) for model in report.cache_models}
        if report.group_by
        else {},
        "assumptions": report.assumptions,
        "cache_control": advice_dict(report.cache_control),
        "vllm_metrics": check_dict(report.engine_check),
        "sweep": _sweep_points(report.sweep),
        "sweep_summary": _sweep_summary(report.sweep),
        "routing": _routing(report.routing),
    }


def _sweep_points(sweep: CapacitySweep | None) -> list[dict[str, Any]]:
    if sweep is None:
        return []
    return [
        {
            "policy": p.policy,
            "capacity_tokens": p.capacity_tokens,
            "capacity_bytes": p.capacity_bytes,
            "hit_rate": _rate(p.hit_rate),
            "prefill_tokens": p.prefill_tokens,
        }
        for p in sweep.points
    ]


def _sweep_summary(sweep: CapacitySweep | None) -> dict[str, Any] | None:
    if sweep is None:
        return None
    return {
        "block_size": sweep.block_size,
        "working_set_tokens": sweep.working_set_tokens,
        "ceiling_hit_rate": _rate(sweep.ceiling_hit_rate),
        "model_geometry": sweep.geometry,
        "bytes_per_token": sweep.bytes_per_token,
        "knee_capacity_tokens": sweep.knees,
    }


def _routing(routing: Routing | None) -> dict[str, Any] | None:
    if routing is None:
        return None
    return {
        "router": routing.router,
        "epsilon": routing.epsilon,
        "capacity_tokens": routing.capacity_tokens,
        "hit_rate": _rate(routing.hit_rate),
        "imbalance": round(routing.imbalance, 6),
        "replicas": [
            {
                "requests": r.requests,
                "prompt_tokens": r.prompt_tokens,
                "cached_tokens": r.cached_tokens,
                "hit_rate": _rate(r.hit_rate),
            }
            for r in routing.replicas
        ],
    }


def _groups(report: AuditReport, model: str) -> list[dict[str, Any]]:
    return [
        {
            "group": group.name,
            "requests": group.totals.requests,
            "prompt_tokens": group.totals.prompt_tokens,
            "cached_tokens": group.totals.cached_tokens,
            "hit_rate": _rate(group.totals.hit_rate),
            "cost_tokens": group.cost_tokens,
            "costliest_cause": group.top_cause,
        }
        for group in report.by_group(model)
    ]


def _fix_first(row: FixFirst) -> dict[str, Any]:
    return {
        "fix": row.fix,
        "codes": list(row.codes),
        "model_cache": row.model_cache,
        "hit_rate_before": _rate(row.hit_rate_before),
        "hit_rate_after": _rate(row.hit_rate_after),
        "prefill_tokens_saved": row.prefill_tokens_saved,
        "prefill_tokens_per_day": None
        if row.prefill_tokens_per_day is None
        else round(row.prefill_tokens_per_day),
        "ttft_saved_ms": None if row.ttft_saved_ms is None else round(row.ttft_saved_ms, 3),
        "usd_saved": _money(row.usd_saved),
        "usd_per_day": _money(row.usd_per_day),
        "basis": row.basis,
    }


def _sources(report: AuditReport, model: str) -> list[dict[str, Any]]:
    return [
        {
            "path": path,
            "line": line,
            "code": code,
            "requests": entry.requests,
            "uncached_tokens": entry.uncached_tokens,
            "cost_tokens": entry.cost_tokens,
        }
        for (path, line, code), entry in report.by_source(model).items()
    ]


def render_json(report: AuditReport, *, redact: bool = False) -> str:
    data = to_dict(report, redact=redact)
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
