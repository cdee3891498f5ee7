"""Measure how often the audit names the right miss cause, on generated logs.

    .venv/bin/python bench/audit_causes.py [--seeds 3] [--sessions 58] [--cache vllm]

The logs come from ``tests/audit_logs.py``: airline-support sessions in OpenAI and Anthropic
form, each with at most one cache breaker (volatile values inserted, replaced or removed,
host and replica names, tool order, key order and tool set, whitespace, CRLF, NBSP, edited,
deleted and truncated history, rewritten tool results, model switches), with the cause of
every break known from the data. Reported per format and overall:

* accuracy: breaks whose audit cause is the expected one, over all breaks;
* false alarms: requests that do not break but get a content cause (a rule code,
  ``content-changed``, ``tool-arguments-reserialised``), over all such requests; the cache's
  own reasons (``first-seen``, ``evicted``, ``ttl-expired``, ``below-minimum``) are not
  alarms: a small llama-server slot pool evicts without any break;

and every wrong answer by breaker, so a regression names its shape.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from audit_logs import plan  # noqa: E402

from prefixlint.auditing import AuditOptions, run_audit  # noqa: E402

NO_ALARM = frozenset({None, "first-seen", "evicted", "ttl-expired", "below-minimum"})


def measure(seed: int, sessions: int, fmt: str, cache: str) -> tuple[Counter, Counter]:
    """Counts of breaks, right causes, quiet requests and false alarms; wrong answers."""
    from audit_logs import log_line

    planned = plan(seed, sessions, fmt=fmt)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{fmt}-{seed}.jsonl"
        path.write_text("\n".join(log_line(p, fmt) for p in planned) + "\n", encoding="utf-8")
        report = run_audit([str(path)], AuditOptions(caches=(cache,), what_if=False))
    causes = {record.line: record.cause for record in report.records}
    counts, wrong = Counter(), Counter()
    for line, request in enumerate(planned, start=1):
        cause = causes.get(line, "skipped")
        name = request.breaker.name if request.breaker else "clean"
        if request.expected is None:
            counts["quiet"] += 1
            if cause not in NO_ALARM:
                counts["alarms"] += 1
                wrong[(name, "no break", cause)] += 1
        else:
            counts["breaks"] += 1
            if cause == request.expected:
                counts["right"] += 1
            else:
                wrong[(name, request.expected, cause)] += 1
    return counts, wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=58)
    parser.add_argument("--cache", default="vllm")
    args = parser.parse_args()
    total, wrong = Counter(), Counter()
    for fmt in ("openai", "anthropic"):
        counts = Counter()
        for seed in range(args.seeds):
            found, errors = measure(seed, args.sessions, fmt, args.cache)
            counts += found
            wrong += errors
        total += counts
        print(_line(fmt, counts))
    print(_line("all", total))
    for (name, expected, cause), n in sorted(wrong.items()):
        print(f"  {n:4d} x {name}: expected {expected}, got {cause}")
    return 0


def _line(label: str, counts: Counter) -> str:
    accuracy = counts["right"] / counts["breaks"] if counts["breaks"] else 1.0
    alarms = counts["alarms"] / counts["quiet"] if counts["quiet"] else 0.0
    return (
        f"{label:9s} breaks {counts['breaks']:5d}  accuracy {accuracy:.4f}  "
        f"quiet {counts['quiet']:5d}  false alarms {alarms:.4f}"
    )


if __name__ == "__main__":
    sys.exit(main())
