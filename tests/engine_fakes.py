"""A tiny source kind and rules for testing the engine without the real rules.

``install(monkeypatch)`` makes every file a "fake" source whose checker reports:

- PFX990 trailing spaces on a line (safe fix: delete them);
- PFX991 the word ``TODAY`` (unsafe fix: delete it);
- PFX992 ``@@`` (safe fix: replace with two lines, ``x\\ny``);
- PFX993 ``AB`` and ``BA`` (safe fixes that swap them back and forth, never converging);
- PFX994 ``BREAK`` (safe fix that writes the unparsable ``{{ x }``);

and raises ``SourceError`` at ``{{ x }``.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

from prefixlint import registry, sources
from prefixlint.context import SourceError
from prefixlint.lines import LineIndex
from prefixlint.registry import RuleDoc
from prefixlint.types import Applicability, Edit, Fix, Severity, Span

_FIXES = {
    "PFX990": (re.compile(r"[ \t]+(?=\r?\n|\Z)"), "", Applicability.SAFE),
    "PFX991": (re.compile(r"TODAY"), "", Applicability.UNSAFE),
    "PFX992": (re.compile(r"@@"), "x\ny", Applicability.SAFE),
    "PFX993": (re.compile(r"AB|BA"), None, Applicability.SAFE),
    "PFX994": (re.compile(r"BREAK"), "{{ x }", Applicability.SAFE),
}
FAKE_DOCS = {
    code: RuleDoc(
        code=code,
        name=f"fake-rule-{code[-1]}",
        summary=f"Fake rule {code}.",
        severity=Severity.ERROR,
        fix="always",
        what="Test rule.",
        why="Testing.",
        example="",
        use_instead="",
        fix_safety="Test.",
    )
    for code in _FIXES
}


def check(text: str, ctx) -> list:
    broken = text.find("{{ x }")
    if broken != -1 and not text.startswith("}", broken + 6):
        line, column = LineIndex(text).position(broken)
        raise SourceError("unexpected '}'", line, column)
    index = LineIndex(text)
    found = []
    for code, (pattern, replacement, applicability) in _FIXES.items():
        if not ctx.is_enabled(code):
            continue
        for match in pattern.finditer(text):
            if match.start() == match.end():
                continue
            new = match[0][::-1] if replacement is None else replacement
            fix = Fix((Edit(match.start(), match.end(), new),), applicability, f"fix {code}")
            line, column = index.position(match.start())
            end_line, end_column = index.position(match.end())
            span = Span(ctx.path, line, column, end_line, end_column)
            found.append(registry.diagnostic(code, f"found {match[0]!r}", span, fix=fix))
    return found


FAKE_SOURCE = SimpleNamespace(check=check)


def install(monkeypatch) -> None:
    """Route every file to the fake source and document the fake rules."""
    docs = {**registry.rule_docs(), **FAKE_DOCS}
    monkeypatch.setattr(registry, "rule_docs", lambda: docs)
    monkeypatch.setattr(sources, "source_module", lambda path, text: FAKE_SOURCE)
