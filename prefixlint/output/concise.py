"""One line per finding, ruff-like: ``path:line:col: CODE [*] message``."""

from __future__ import annotations

from rich.markup import escape

from prefixlint.output import Report, summary
from prefixlint.output.style import to_text


def render(report: Report, color: bool) -> str:
    lines = []
    for d in report.diagnostics:
        s = d.span
        marker = "[*] " if report.fixable(d) else ""
        lines.append(
            f"[bold]{escape(s.path)}[/]:{s.line}:{s.column}: [bold red]{d.code}[/]"
            f" {escape(marker)}{escape(d.message)}"
        )
    text = "\n".join([*lines, *summary(report)])
    return to_text(text + "\n", color) if text else ""
