"""GitHub Actions workflow commands: one annotation per finding.

Format: ``::error file=P,line=L,col=C,endLine=L2,endColumn=C2,title=CODE::message`` (see
https://docs.github.com/actions/reference/workflow-commands-for-github-actions).
"""

from __future__ import annotations

from prefixlint.output import Report

_COMMAND = {"error": "error", "warning": "warning", "info": "notice"}


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def render(report: Report, color: bool) -> str:
    lines = []
    for d in report.diagnostics:
        s = d.span
        properties = (
            f"file={_escape_property(s.path)},line={s.line},col={s.column},"
            f"endLine={s.end_line},endColumn={s.end_column},title={_escape_property(d.code)}"
        )
        message = _escape_data(f"{d.code} {d.message} ({d.name})")
        lines.append(f"::{_COMMAND[d.severity.value]} {properties}::{message}\n")
    return "".join(lines)
