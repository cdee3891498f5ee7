"""``--redact``: an audit report that carries digests of the log's text, never the text.

:func:`redact_report` returns a copy of a report in which every piece of logged text is a
``sha256:`` digest: example windows, session ids, the object keys that a skip reason names
(``unknown format (keys: ...)``) and the messages of errors that may quote the log (a chat
template's error, an unexpected shape). Every output (terminal, JSON, HTML) renders that
copy, so none of them can show a prompt. Equal texts get equal digests, so a reader can
still tell which examples are the same.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from typing import overload

from prefixlint.auditing.results import AuditReport, Example, RequestRecord, Skipped, SkippedLines


@overload
def digest(text: str) -> str: ...
@overload
def digest(text: None) -> None: ...
def digest(text: str | None) -> str | None:
    """``sha256:`` and the first 16 hex digits of the text's SHA-256, None for None."""
    if text is None:
        return None
    data = text.encode("utf-8", "surrogatepass")
    return "sha256:" + hashlib.sha256(data).hexdigest()[:16]


_UNKNOWN_KEYS = re.compile(r"^(unknown format \(keys: )(.*)\)$", re.DOTALL)
# Reasons whose tail may quote the log: the tail (after the marker) becomes a digest.
_QUOTING_MARKERS = ("chat template failed: ",)
# Errors caught on a line of an unexpected shape: the type is kept, its message is not.
_UNEXPECTED = re.compile(
    r"^((?:unexpected shape|cannot render|cannot audit): \w+)(?::.*)?$", re.DOTALL
)


def redact_reason(reason: str) -> str:
    """A skip reason without the log text it may name (object keys, quoted errors)."""
    keys = _UNKNOWN_KEYS.match(reason)
    if keys is not None:
        names = keys.group(2)
        hidden = "none" if names == "none" else ", ".join(map(digest, names.split(", ")))
        return f"{keys.group(1)}{hidden})"
    unexpected = _UNEXPECTED.match(reason)
    if unexpected is not None:
        return unexpected.group(1)
    for marker in _QUOTING_MARKERS:
        head, found, tail = reason.partition(marker)
        if found:
            return f"{head}{marker}{digest(tail)}"
    return reason


def _example(example: Example) -> Example:
    return dataclasses.replace(example, before=digest(example.before), after=digest(example.after))


def _record(record: RequestRecord) -> RequestRecord:
    # A --group-by value can be a session, user or tenant id: digested too.
    return dataclasses.replace(
        record, session_id=digest(record.session_id), group=digest(record.group)
    )


def _skipped(skipped: SkippedLines) -> SkippedLines:
    hidden = SkippedLines()
    hidden.count = skipped.count
    hidden.sample = [
        Skipped(entry.file, entry.line, redact_reason(entry.reason)) for entry in skipped
    ]
    for kind, count in skipped.by_reason.items():
        kind = redact_reason(kind)
        hidden.by_reason[kind] = hidden.by_reason.get(kind, 0) + count
    return hidden


def redact_report(report: AuditReport) -> AuditReport:
    """A copy of ``report`` with digests in place of the log's text (see the module)."""
    return dataclasses.replace(
        report,
        records=[_record(record) for record in report.records],
        skipped=_skipped(report.skipped),
        examples={
            key: [_example(example) for example in examples]
            for key, examples in report.examples.items()
        },
    )
