"""Summarise ``prefixlint replay --format json`` reports as one Markdown table.

python3 bench/replay_summary.py results/*.json > results/summary.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

COLUMNS = (
    ("run", lambda r: r["name"]),
    ("backend", lambda r: r["backend"]),
    ("model", lambda r: r["settings"].get("model")),
    ("dtype", lambda r: r["settings"].get("dtype")),
    ("requests", lambda r: r["summary"]["requests"]),
    ("prompt tok", lambda r: r["summary"]["prompt_tokens"]),
    ("hit rate", lambda r: r["summary"]["hit_rate"]),
    ("tokens saved", lambda r: r["summary"]["tokens_saved"]),
    ("TTFT p50 ms", lambda r: r["summary"].get("ttft_ms_p50")),
    ("TTFT p95 ms", lambda r: r["summary"].get("ttft_ms_p95")),
    ("no-reuse p50 ms", lambda r: r["summary"].get("baseline_ttft_ms_p50")),
    ("no-reuse p95 ms", lambda r: r["summary"].get("baseline_ttft_ms_p95")),
    ("speedup p50", lambda r: r["summary"].get("speedup_p50")),
    ("speedup total", lambda r: r["summary"].get("speedup_total")),
    ("peak GiB", lambda r: _gib(r["summary"].get("peak_memory_bytes"))),
    ("KV pool GiB", lambda r: _gib(r["settings"].get("kv_pool_bytes"))),
    ("max |dlogit|", lambda r: r["summary"].get("max_abs_logit_diff")),
    ("agreement", lambda r: r["summary"].get("agreement")),
    ("checks", lambda r: ", ".join(f"{k}={'ok' if v else 'FAIL'}" for k, v in r["checks"].items())),
)


def _gib(value: int | None) -> float | None:
    return None if value is None else value / 2**30


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def main(paths: list[str]) -> None:
    reports = []
    for path in paths:
        report = json.loads(Path(path).read_text())
        report["name"] = Path(path).stem
        reports.append(report)
    print("| " + " | ".join(title for title, _ in COLUMNS) + " |")
    print("|" + "---|" * len(COLUMNS))
    for report in reports:
        print("| " + " | ".join(_cell(get(report)) for _, get in COLUMNS) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
