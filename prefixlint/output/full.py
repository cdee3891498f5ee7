"""Findings grouped by file, each with its source line, a caret underline and the prefix cost."""

from __future__ import annotations

from itertools import groupby

from rich.cells import cell_len
from rich.markup import escape

from prefixlint.output import Report, summary
from prefixlint.output.style import to_text
from prefixlint.plural import counted
from prefixlint.types import Applicability, Diagnostic

MAX_SHOWN = 120
"""Source lines longer than this are shown as a window around the finding, like ruff does."""
_CONTEXT = 40  # characters shown before the finding in a cut line
_SEVERITY_STYLE = {"error": "bold red", "warning": "bold yellow", "info": "bold blue"}


def _fix_note(report: Report, d: Diagnostic) -> str | None:
    if d.fix is None:
        return None
    if d.fix.applicability is Applicability.DISPLAY_ONLY:
        how = "suggestion, not applied automatically"
    elif report.hidden_unsafe(d):
        how = "unsafe, applied with --unsafe-fixes"
    else:
        how = d.fix.applicability.value
    return f"fix ({how}): {d.fix.message}"


def _prefix_note(d: Diagnostic) -> str | None:
    if d.stable_prefix_tokens is None:
        return None
    note = f"stable prefix: {counted(d.stable_prefix_tokens, 'token')}"
    if d.unstable_tokens is not None:
        note += f", then {counted(d.unstable_tokens, 'token')} that the cache cannot reuse"
    return note


def _window(line: str, start: int, end: int) -> tuple[str, int, int]:
    """``line`` cut to at most :data:`MAX_SHOWN` characters around ``line[start:end]`` (``…``
    marks a cut), with the start and end of the marked part in the cut line."""
    if len(line) <= MAX_SHOWN:
        return line, start, end
    left = max(0, min(start - _CONTEXT, len(line) - MAX_SHOWN))
    right = min(len(line), left + MAX_SHOWN)
    shown = ("…" if left else "") + line[left:right] + ("…" if right < len(line) else "")
    shift = left - (1 if left else 0)
    return shown, start - shift, min(end, right) - shift


def _snippet(report: Report, d: Diagnostic, gutter: int) -> list[str]:
    index = report.line_index(d.span.path)
    if index is None or d.span.line > len(index.starts):
        return []
    raw = index.line_text(d.span.line)
    start = min(d.span.column - 1, len(raw))
    end = d.span.end_column - 1 if d.span.end_line == d.span.line else len(raw)
    end = max(min(end, len(raw)), start + 1)
    expanded_start = len(raw[:start].expandtabs(4))
    expanded_end = expanded_start + len(raw[start:end].expandtabs(4))
    line, start, end = _window(raw.expandtabs(4), expanded_start, expanded_end)
    pad = cell_len(line[:start])
    width = max(cell_len(line[start:end]), 1)
    bar = " " * gutter + " |"
    return [
        f"[blue]{bar}[/]",
        f"[blue]{d.span.line:>{gutter}} |[/] {escape(line)}",
        f"[blue]{bar}[/] {' ' * pad}[bold red]{'^' * width}[/]",
    ]


def _diagnostic(report: Report, d: Diagnostic) -> list[str]:
    s = d.span
    style = _SEVERITY_STYLE[d.severity.value]
    marker = " [*]" if report.fixable(d) else ""
    gutter = len(str(s.line))
    lines = [
        f"[{style}]{d.code}[/]{escape(marker)} {escape(d.message)} [dim]({d.name})[/]",
        f"[blue]{' ' * gutter}-->[/] {escape(s.path)}:{s.line}:{s.column}",
        *_snippet(report, d, gutter),
    ]
    notes = [n for n in (_prefix_note(d), _fix_note(report, d)) if n]
    lines += [f"[blue]{' ' * gutter} =[/] {escape(note)}" for note in notes]
    return lines


def render(report: Report, color: bool) -> str:
    blocks = []
    for path, group in groupby(report.diagnostics, key=lambda d: d.span.path):
        block = [f"[bold underline]{escape(path)}[/]"]
        for d in group:
            block += _diagnostic(report, d)
            block.append("")
        blocks.append("\n".join(block))
    text = "\n".join([*blocks, *summary(report)])
    return to_text(text + "\n", color) if text else ""
