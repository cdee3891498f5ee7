"""SARIF 2.1.0 for code scanning: the rules from ``rules/*.toml``, results, locations, fixes.

Columns count Unicode code points (``run.columnKind = "unicodeCodePoints"``), as prefixlint's
spans do.
"""

from __future__ import annotations

import json
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import PurePath
from urllib.parse import quote

from prefixlint import registry
from prefixlint.lines import LineIndex
from prefixlint.output import JsonObject, Report
from prefixlint.types import Diagnostic, Fix

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def _tool_version() -> str:
    try:
        return version("prefixlint")
    except PackageNotFoundError:
        return "0+unknown"


def _rule(doc: registry.RuleDoc) -> JsonObject:
    return {
        "id": doc.code,
        "name": doc.name,
        "shortDescription": {"text": doc.summary},
        "fullDescription": {"text": doc.what.strip() or doc.summary},
        "help": {"text": doc.why.strip() or doc.summary, "markdown": doc.render_markdown()},
        "defaultConfiguration": {"level": _LEVEL[doc.severity.value]},
        "properties": {"fix": doc.fix},
    }


def _uri(path: str) -> str:
    """The path as a URI reference; a name that is not UTF-8 keeps its bytes, %-escaped."""
    return quote(os.fsencode(PurePath(path).as_posix()))


def _region(index: LineIndex, start: int, end: int) -> JsonObject:
    line, column = index.position(start)
    end_line, end_column = index.position(end)
    return {"startLine": line, "startColumn": column, "endLine": end_line, "endColumn": end_column}


def _fix(fix: Fix, path: str, index: LineIndex) -> JsonObject:
    replacements = [
        {
            "deletedRegion": _region(index, e.start, e.end),
            "insertedContent": {"text": e.replacement},
        }
        for e in fix.sorted_edits
    ]
    return {
        "description": {"text": f"{fix.message} ({fix.applicability.value})"},
        "artifactChanges": [
            {"artifactLocation": {"uri": _uri(path)}, "replacements": replacements}
        ],
    }


def _result(d: Diagnostic, rule_index: dict[str, int], index: LineIndex | None) -> JsonObject:
    s = d.span
    result: JsonObject = {
        "ruleId": d.code,
        "level": _LEVEL[d.severity.value],
        "message": {"text": d.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(s.path)},
                    "region": {
                        "startLine": s.line,
                        "startColumn": s.column,
                        "endLine": s.end_line,
                        "endColumn": s.end_column,
                    },
                }
            }
        ],
    }
    if d.code in rule_index:
        result["ruleIndex"] = rule_index[d.code]
    if d.fix is not None and d.fix.edits and index is not None:
        result["fixes"] = [_fix(d.fix, s.path, index)]
    measured = {
        "stable_prefix_tokens": d.stable_prefix_tokens,
        "unstable_tokens": d.unstable_tokens,
    }
    properties: JsonObject = {key: value for key, value in measured.items() if value is not None}
    folded = d.extra.get("folded_lines")
    if isinstance(folded, list) and folded:
        # Later volatile values folded into this finding: where they are, as related places.
        properties["folded_lines"] = list(folded)
        result["relatedLocations"] = [
            {
                "id": number,
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(s.path)},
                    "region": {"startLine": line},
                },
                "message": {"text": "a volatile value folded into this finding"},
            }
            for number, line in enumerate(folded, start=1)
        ]
    if properties:
        result["properties"] = properties
    return result


def render(report: Report, color: bool) -> str:
    docs = list(registry.rule_docs().values())
    rule_index = {doc.code: i for i, doc in enumerate(docs)}
    results = [_result(d, rule_index, report.line_index(d.span.path)) for d in report.diagnostics]
    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "prefixlint",
                        "version": _tool_version(),
                        "rules": [_rule(doc) for doc in docs],
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
