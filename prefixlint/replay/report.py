"""What a replay found, as one report object rendered for a terminal or as JSON.

JSON schema (``prefixlint replay --format json``)::

    {"backend": "sim" | "torch" | "server",
     "settings": {...},                 # what was replayed and how (cache model, capacity, ...)
     "summary": {"requests", "prompt_tokens", "cached_tokens", "hit_rate", "tokens_saved", ...},
     "checks": {"NAME": true | false},  # exactness / agreement checks; exit status 1 if one fails
     "requests": [{"line", "prompt_tokens", "cached_tokens", ...}],   # one per request
     "skipped": [{"path", "line", "reason"}]}
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

TERMINAL_ROWS = 20


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-th percentile (0-100) with linear interpolation, None for no values."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def token_summary(prompt_tokens: Sequence[int], cached_tokens: Sequence[int]) -> dict[str, Any]:
    total, cached = sum(prompt_tokens), sum(cached_tokens)
    return {
        "requests": len(prompt_tokens),
        "prompt_tokens": total,
        "cached_tokens": cached,
        "hit_rate": cached / total if total else 0.0,
        "tokens_saved": cached,
    }


@dataclass
class ReplayReport:
    backend: str
    settings: dict[str, Any]
    summary: dict[str, Any]
    checks: dict[str, bool]
    requests: list[dict[str, Any]]
    skipped: list[dict[str, Any]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return all(self.checks.values())

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "settings": self.settings,
            "summary": self.summary,
            "checks": self.checks,
            "requests": self.requests,
            "skipped": self.skipped,
        }


def _show(value: Any) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() and abs(value) < 1e15 else f"{value:.4g}"
    if isinstance(value, dict):
        return ", ".join(f"{k} {_show(v)}" for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(map(_show, value))
    return "-" if value is None else str(value)


def strict(value: Any) -> Any:
    """``value`` with every non-finite float (``NaN``, ``Infinity``) as None: JSON has none."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: strict(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [strict(item) for item in value]
    return value


def render_json(report: ReplayReport) -> str:
    data = strict(report.to_json())
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_terminal(report: ReplayReport) -> str:
    """Settings, summary and checks as aligned lines, then the first requests as a table."""
    lines = [f"replay ({report.backend})"]
    for title, values in (("settings", report.settings), ("summary", report.summary)):
        lines.append(f"{title}:")
        width = max((len(key) for key in values), default=0)
        lines.extend(f"  {key.ljust(width)}  {_show(value)}" for key, value in values.items())
    if report.checks:
        lines.append("checks:")
        lines.extend(f"  {'pass' if ok else 'FAIL'}  {name}" for name, ok in report.checks.items())
    for skipped in report.skipped:
        lines.append(f"skipped {skipped['path']}:{skipped['line']}: {skipped['reason']}")
    shown = report.requests[:TERMINAL_ROWS]
    if shown:
        columns = list(shown[0])
        if len({row.get("path") for row in report.requests}) == 1:
            columns = [column for column in columns if column != "path"]
        cells = [[_show(row.get(column)) for column in columns] for row in shown]
        widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
        lines.append("  ".join(c.rjust(w) for c, w in zip(columns, widths, strict=True)))
        lines.extend(
            "  ".join(cell.rjust(w) for cell, w in zip(row, widths, strict=True)) for row in cells
        )
        if len(report.requests) > len(shown):
            more = len(report.requests) - len(shown)
            lines.append(f"... {more} more requests (--format json lists them all)")
    return "\n".join(lines) + "\n"


RENDERERS = {"terminal": render_terminal, "json": render_json}
