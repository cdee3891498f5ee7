"""Turn reaches into diagnostics: the message says what reaches which request part, and how."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator

from prefixlint import registry
from prefixlint.pyflow.analysis import Analysis, Reach
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.templates import span_within
from prefixlint.types import Diagnostic, Fix, Severity, Span


def message(reach: Reach, change: str) -> str:
    """``datetime.now() reaches the system prompt of X via f-string in f(); it changes ...``"""
    origin, sink = reach.origin, reach.sink
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
    change: str | Callable[[Reach], str],
    fix_for: Callable[[Reach], Fix | None] = lambda reach: None,
    severity_for: Callable[[Reach], Severity | None] = lambda reach: None,
) -> Iterator[Diagnostic]:
    """A diagnostic for every value of ``code`` that reaches a request prefix: the rule says
    how its value changes (``change``), how to fix it and, where it is not the rule's default,
    its severity."""
    for reach in Analysis.of(document).in_prefix(code):
        how = change if isinstance(change, str) else change(reach)
        found = registry.diagnostic(
            code,
            message(reach, how),
            _span(document, reach),
            fix=fix_for(reach),
            sink=reach.sink.description,
            source=reach.origin.label,
        )
        severity = severity_for(reach)
        yield found if severity is None else dataclasses.replace(found, severity=severity)
