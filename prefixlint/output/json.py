"""A JSON list of findings with a stable schema (ruff's fields, snake_case, plus prefix costs).

Each element::

    {"code": "PFX101", "name": "...", "message": "...", "severity": "error|warning|info",
     "path": "...", "line": 3, "column": 15, "end_line": 3, "end_column": 26,
     "fix": null | {"applicability": "safe|unsafe|display-only", "message": "...",
                    "edits": [{"start": 40, "end": 51, "content": "...",
                               "line": 3, "column": 15, "end_line": 3, "end_column": 26}]},
     "stable_prefix_tokens": 412 | null, "unstable_tokens": 1203 | null, "extra": {...}}

Lines and columns are 1-based, ends exclusive; ``start``/``end`` are character offsets into
the file's text (after fixing, when ``--fix`` was given).
"""

from __future__ import annotations

import json

from prefixlint.lines import LineIndex
from prefixlint.output import JsonObject, Report
from prefixlint.types import Diagnostic, Fix


def _edits(fix: Fix, index: LineIndex | None) -> list[JsonObject]:
    edits = []
    for edit in fix.sorted_edits:
        entry: JsonObject = {
            "start": edit.start,
            "end": edit.end,
            "content": edit.replacement,
        }
        if index is not None:
            line, column = index.position(edit.start)
            end_line, end_column = index.position(edit.end)
            entry |= {
                "line": line,
                "column": column,
                "end_line": end_line,
                "end_column": end_column,
            }
        edits.append(entry)
    return edits


def diagnostic_dict(d: Diagnostic, index: LineIndex | None) -> JsonObject:
    """The JSON object for one finding."""
    s = d.span
    fix = None
    if d.fix is not None:
        fix = {
            "applicability": d.fix.applicability.value,
            "message": d.fix.message,
            "edits": _edits(d.fix, index),
        }
    return {
        "code": d.code,
        "name": d.name,
        "message": d.message,
        "severity": d.severity.value,
        "path": s.path,
        "line": s.line,
        "column": s.column,
        "end_line": s.end_line,
        "end_column": s.end_column,
        "fix": fix,
        "stable_prefix_tokens": d.stable_prefix_tokens,
        "unstable_tokens": d.unstable_tokens,
        "extra": d.extra,
    }


def render(report: Report, color: bool) -> str:
    items = [diagnostic_dict(d, report.line_index(d.span.path)) for d in report.diagnostics]
    return json.dumps(items, indent=2, ensure_ascii=False, default=str) + "\n"
