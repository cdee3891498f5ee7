"""JUnit XML: one test suite per checked file, one failing test case per finding.

Files without findings get one passing test case, so CI dashboards count them as checked.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from itertools import groupby

from prefixlint.output import Report


def render(report: Report, color: bool) -> str:
    by_path = {
        path: list(group) for path, group in groupby(report.diagnostics, key=lambda d: d.span.path)
    }
    paths = list(dict.fromkeys([*report.paths, *by_path]))
    cases = sum(len(by_path.get(path, ())) or 1 for path in paths)
    root = ET.Element(
        "testsuites", name="prefixlint", tests=str(cases), failures=str(len(report.diagnostics))
    )
    for path in paths:
        found = by_path.get(path, [])
        suite = ET.SubElement(
            root, "testsuite", name=path, tests=str(len(found) or 1), failures=str(len(found))
        )
        if not found:
            ET.SubElement(suite, "testcase", name="prefixlint", classname=path)
        for d in found:
            s = d.span
            case = ET.SubElement(
                suite,
                "testcase",
                name=f"prefixlint.{d.code}",
                classname=path,
                line=str(s.line),
                column=str(s.column),
            )
            failure = ET.SubElement(case, "failure", message=d.message, type=d.code)
            failure.text = f"line {s.line}, col {s.column}, {d.code} ({d.name}): {d.message}"
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, "unicode") + "\n"
