"""The audit's progress display: one bar over every pass, with requests per second."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from rich.progress import Progress

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.auditing.pipeline import PHASES
from prefixlint.cli.audit import AuditProgress, RateColumn

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
BREAKERS = LOGS / "tau_openai_breakers.jsonl"


def test_every_pass_is_announced_and_counts_its_lines():
    phases: list[str] = []
    lines: list[int] = []
    options = AuditOptions(caches=("vllm", "belady"), what_if=True)

    def on_phase(name: str) -> None:
        phases.append(name)
        lines.append(0)

    def on_line() -> None:
        lines[-1] += 1

    report = run_audit([str(BREAKERS)], options, on_line=on_line, on_phase=on_phase)
    assert report.what_if
    assert phases == list(PHASES)
    count = len(BREAKERS.read_bytes().splitlines())
    assert lines == [count] * 3
    assert report.lines_read == count


def test_the_display_names_the_phase_and_its_rate():
    clock = iter(range(1000))
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    with Progress(RateColumn(), console=console, get_time=lambda: next(clock) / 10) as progress:
        shown = AuditProgress(progress, total=10)
        shown.phase("what-if")
        for _ in range(5):
            shown.line()
        task = progress.tasks[0]
        assert (task.description, task.completed, task.total) == ("what-if", 5, 10)
        assert str(RateColumn().render(task)) == "10 req/s"
