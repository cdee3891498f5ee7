"""Benchmark: prefixlint's Python checks against pcdlint on the same tree of real files.

Usage: python bench/check_python.py [ROOT ...] [--limit N] [--show CODE] [--no-pcdlint]

ROOT defaults to the site-packages of the running interpreter (openai, anthropic,
transformers, langchain... where installed). Both tools run single-threaded in this process
on the same files, read once up front, so the figures compare analysis only. Prints files/s
for each tool, how many files prefixlint's text prefilter skipped, and the findings per code
(``--show PFX101`` prints those findings, to inspect them for false alarms).
"""

from __future__ import annotations

import argparse
import sysconfig
import time
from collections import Counter
from pathlib import Path

from prefixlint.linting.config import Settings
from prefixlint.linting.engine import check_text
from prefixlint.sources.python import may_hold_prompt


def _files(roots: list[Path], limit: int | None) -> list[tuple[str, str]]:
    found = []
    for root in roots:
        paths = [root] if root.is_file() else sorted(root.rglob("*.py"))
        for path in paths:
            try:
                found.append((str(path), path.read_text(encoding="utf-8")))
            except (UnicodeDecodeError, OSError):
                continue
            if limit and len(found) >= limit:
                return found
    return found


def _run_prefixlint(files, show: set[str]):
    settings = Settings()
    counts: Counter = Counter()
    shown = []
    start = time.perf_counter()
    for path, text in files:
        for finding in check_text(text, path, settings):
            counts[finding.code] += 1
            if finding.code in show:
                shown.append(
                    f"{path}:{finding.span.line}:{finding.span.column}: "
                    f"{finding.code} {finding.message}"
                )
    return time.perf_counter() - start, counts, shown


def _run_pcdlint(files):
    from pcdlint.analyzer import analyze_code_ex

    counts: Counter = Counter()
    start = time.perf_counter()
    for path, text in files:
        found, error = analyze_code_ex(text, path)
        if error:
            counts["error"] += 1
        for finding in found:
            counts[finding.rule_id] += 1
    return time.perf_counter() - start, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", type=Path)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--show", action="append", default=[])
    parser.add_argument("--no-pcdlint", action="store_true")
    args = parser.parse_args()
    roots = args.roots or [Path(sysconfig.get_paths()["purelib"])]
    files = _files(roots, args.limit)
    total_bytes = sum(len(text) for _, text in files)
    candidates = sum(may_hold_prompt(text) for _, text in files)
    print(
        f"{len(files)} files, {total_bytes / 1e6:.1f} MB of Python under "
        f"{', '.join(map(str, roots))}"
    )
    print(f"prefilter: {len(files) - candidates} files skipped, {candidates} parsed")

    seconds, counts, shown = _run_prefixlint(files, set(args.show))
    print(
        f"prefixlint: {seconds:.2f} s, {len(files) / seconds:,.0f} files/s, "
        f"findings {dict(sorted(counts.items()))}"
    )
    if not args.no_pcdlint:
        seconds_pcd, counts_pcd = _run_pcdlint(files)
        print(
            f"pcdlint:    {seconds_pcd:.2f} s, {len(files) / seconds_pcd:,.0f} files/s, "
            f"findings {dict(sorted(counts_pcd.items()))}"
        )
        print(f"speed ratio (prefixlint / pcdlint): {seconds_pcd / seconds:.2f}x")
    for line in shown:
        print(line)


if __name__ == "__main__":
    main()
