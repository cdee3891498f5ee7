"""Turn reaches into diagnostics: the message says what reaches which request part, and how."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from prefixlint import codes, registry
from prefixlint.pyflow import tables as t
from prefixlint.pyflow.analysis import Analysis, Reach
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.templates import span_within
from prefixlint.types import Diagnostic, Fix, Severity, Span

_HOW: dict[str, dict[str | None, str]] = {
    codes.TIMESTAMP: {
        t.INSTANT: "changes on every call",
        t.DAILY: "changes once a day",
        t.PROCESS: "changes between calls",
    },
    codes.UNIQUE_ID: {None: "is new on every call"},
    codes.PER_USER: {None: "differs per user"},
    codes.ENVIRONMENT: {None: "differs per machine, process or checkout"},
    codes.UNORDERED: {None: "comes out in a different order between runs"},
    codes.KEY_ORDER: {None: "writes keys in whatever order the dict was built"},
    codes.RANDOM_SELECTION: {None: "picks or orders items differently on every call"},
    codes.LINE_ENDINGS: {None: "is \\r\\n on Windows and \\n elsewhere"},
    codes.WHITESPACE_DRIFT: {None: "puts different whitespace in the same text on different paths"},
}


def message(reach: Reach) -> str:
    """``datetime.now() reaches the system prompt of X via f-string in f(); it changes ...``"""
    origin, sink = reach.origin, reach.sink
    how = _HOW[origin.code]
    change = how.get(origin.granularity) or how.get(None) or next(iter(how.values()))
    via = f" via {', '.join(origin.via)}" if origin.via else ""
    label = ", ".join(o.label for o in (origin, *reach.also))
    verb = "reach" if reach.also else "reaches"
    return f"{label} {verb} {sink.description}{via}; it {change}, so the cached prefix ends there"


def _span(document: PythonDocument, reach: Reach) -> Span:
    """The finding's place: the value, or the field of a template literal it stands for."""
    span = document.span(reach.at)
    if reach.origin.within and reach.at is reach.origin.node:
        return span_within(span, document.source(reach.at), reach.origin.within)
    return span


def prefix_diagnostics(
    document: PythonDocument,
    code: str,
    fix_for: Callable[[Reach], Fix | None] = lambda reach: None,
) -> Iterator[Diagnostic]:
    """A diagnostic for every value of ``code`` that reaches a request prefix."""
    for reach in Analysis.of(document).in_prefix(code):
        found = registry.diagnostic(
            code,
            message(reach),
            _span(document, reach),
            fix=fix_for(reach),
            sink=reach.sink.description,
            source=reach.origin.label,
        )
        if code == codes.TIMESTAMP and reach.origin.granularity == t.DAILY:
            found = dataclasses.replace(found, severity=Severity.WARNING)
        yield found
