"""Compare an audit with a saved JSON report and list only what got worse.

A regression is: a cache model's hit rate below the baseline's by more than ``tolerance``
(absolute), or a rule code among the causes that the baseline did not have. Anything that
stayed the same or improved passes, so a CI gate on a baseline fails only on regressions.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from prefixlint.auditing.report_json import model_summary
from prefixlint.auditing.results import AuditReport
from prefixlint.plural import counted

DEFAULT_TOLERANCE = 0.001


class BaselineError(Exception):
    """The baseline file cannot be used; the message names the file and why."""


def load_baseline(path: str) -> dict[str, Any]:
    """The per-model summaries of a saved ``--format json`` report."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise BaselineError(f"{path}: baseline is not a JSON report: {exc}") from None
    models = data.get("models") if isinstance(data, dict) else None
    if not isinstance(models, dict) or not all(
        isinstance(m, dict) and isinstance(m.get("hit_rate"), (int, float)) for m in models.values()
    ):
        raise BaselineError(f"{path}: not an audit report (no 'models' with hit rates)")
    return models


def regressions(
    report: AuditReport, baseline: dict[str, Any], tolerance: float = DEFAULT_TOLERANCE
) -> list[str]:
    """One line per regression against ``baseline`` (see the module docstring)."""
    found = []
    for model in report.cache_models:
        if model not in baseline:
            continue
        now, before = model_summary(report, model), baseline[model]
        if now["hit_rate"] < before["hit_rate"] - tolerance:
            found.append(
                f"{model}: hit rate fell from {before['hit_rate']:.2%} to {now['hit_rate']:.2%}"
            )
        old_codes = set(before.get("by_cause", {}))
        for cause, entry in now["by_cause"].items():
            if cause.startswith("PFX") and cause not in old_codes:
                found.append(
                    f"{model}: new cause {cause} ({counted(entry['requests'], 'request')}, "
                    f"{counted(entry['cost_tokens'], 'token')} lost)"
                )
    return found
