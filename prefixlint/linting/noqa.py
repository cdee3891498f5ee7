"""Suppression comments: ``prefixlint: noqa`` on a line, ``prefixlint: noqa-file`` for a file.

Forms::

    text  # prefixlint: noqa: PFX101, PFX102   (Python, YAML, TOML comments)
    text  {# prefixlint: noqa: PFX101 #}       (Jinja comments, in any template)
    text  prefixlint: noqa                     (every code on this line)
    # prefixlint: noqa-file: PFX402            (these codes in the whole file)
    # prefixlint: noqa-file                    (every code in the whole file)

Where a directive counts: in Python only inside comments (found with ``tokenize``); in YAML
and TOML only after a ``#`` comment marker or inside a Jinja comment; in templates and JSON
anywhere on a line. A directive right after a backtick is documentation quoting it, not a
directive. A line directive suppresses findings whose span starts on its line. Directives
that suppress nothing are reported as PFX901, with a fix that removes the unused codes or the
directive.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePath

from prefixlint import registry
from prefixlint.codes import UNUSED_NOQA
from prefixlint.lines import LineIndex
from prefixlint.types import Applicability, Diagnostic, Edit, Fix, Span

_HASH_COMMENT_SUFFIXES = frozenset({".py", ".pyi", ".yaml", ".yml", ".toml"})
_DIRECTIVE = re.compile(
    r"(?i:prefixlint:[ \t]*noqa)(?P<file>(?i:-file))?"
    r"(?:[ \t]*:[ \t]*(?P<codes>[A-Z]+[0-9]+(?:[ \t]*,?[ \t]*[A-Z]+[0-9]+)*))?"
)
_CODE = re.compile(r"[A-Z]+[0-9]+")
_JINJA_OPEN = re.compile(r"[ \t]*\{#(?P<ws>[-+]?)[ \t]*$")
_JINJA_CLOSE = re.compile(r"^[ \t]*(?P<ws>[-+]?)#\}")
_HASH_OPEN = re.compile(r"[ \t]*#[ \t]*$")
_HASH_COMMENT_START = re.compile(r"(?:^|[ \t])#")
_PYTHON_SUFFIXES = frozenset({".py", ".pyi"})


@dataclass(frozen=True)
class Directive:
    """One ``prefixlint: noqa`` directive.

    ``codes`` is ``None`` for a blanket directive. ``codes_span`` are the offsets of the code
    list, ``removal`` the offsets to delete to remove the directive with its comment, and
    ``removal_safe`` whether deleting them leaves what the file means unchanged.
    """

    line: int
    column: int
    end_column: int
    codes: tuple[str, ...] | None
    file_level: bool
    codes_span: tuple[int, int]
    removal: tuple[int, int]
    removal_safe: bool

    def covers(self, code: str) -> bool:
        return self.codes is None or code in self.codes


def _removal(
    text: str, index: LineIndex, line: int, start: int, end: int, hash_comments: bool
) -> tuple[tuple[int, int], bool]:
    """The region to delete to remove the directive at ``start:end``, and whether that is safe."""
    line_start, line_end = index.line_bounds(line)
    before, after = text[line_start:start], text[end:line_end]
    jinja_open, jinja_close = _JINJA_OPEN.search(before), _JINJA_CLOSE.match(after)
    if jinja_open and jinja_close:
        safe = not (jinja_open["ws"] or jinja_close["ws"])
        return (line_start + jinja_open.start(), end + jinja_close.end()), safe
    hash_open = _HASH_OPEN.search(before) if hash_comments else None
    if hash_open and not after.strip():
        removal_start = line_start + hash_open.start()
        if not text[line_start:removal_start].strip():
            newline_end = min(line_end + 1, len(text))
            return (line_start, newline_end), True
        return (removal_start, line_end), True
    while start > line_start and text[start - 1] in " \t":
        start -= 1
    return (start, end), False


def _python_comments(text: str, index: LineIndex) -> list[tuple[int, int]] | None:
    """Offsets of the comments of Python source, or None when it does not tokenize."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        comments = [t for t in tokens if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return None
    return [
        (index.offset(t.start[0], t.start[1] + 1), index.offset(t.end[0], t.end[1] + 1))
        for t in comments
    ]


def _counts(
    text: str,
    start: int,
    line_start: int,
    hash_comments: bool,
    comments: list[tuple[int, int]] | None,
) -> bool:
    """Whether the directive text at ``start`` is a directive in this kind of file."""
    if start > 0 and text[start - 1] == "`":
        return False
    if comments is not None:
        return any(begin <= start < end for begin, end in comments)
    if not hash_comments:
        return True
    before = text[line_start:start]
    return bool(_JINJA_OPEN.search(before) or _HASH_COMMENT_START.search(before))


def find_directives(text: str, path: str) -> list[Directive]:
    """Every noqa directive in ``text``, in order."""
    if "noqa" not in text.lower():
        return []
    matches = list(_DIRECTIVE.finditer(text))
    if not matches:  # only other linters' directives: no comments to find
        return []
    index = LineIndex(text)
    suffix = PurePath(path).suffix.lower()
    hash_comments = suffix in _HASH_COMMENT_SUFFIXES
    comments = _python_comments(text, index) if suffix in _PYTHON_SUFFIXES else None
    directives = []
    for match in matches:
        line, column = index.position(match.start())
        if not _counts(text, match.start(), index.starts[line - 1], hash_comments, comments):
            continue
        codes = tuple(_CODE.findall(match["codes"])) if match["codes"] else None
        codes_span = match.span("codes") if match["codes"] else (match.end(), match.end())
        removal, safe = _removal(text, index, line, match.start(), match.end(), hash_comments)
        directives.append(
            Directive(
                line=line,
                column=column,
                end_column=column + match.end() - match.start(),
                codes=codes,
                file_level=bool(match["file"]),
                codes_span=codes_span,
                removal=removal,
                removal_safe=safe,
            )
        )
    return directives


def _suppressor(diagnostic: Diagnostic, directives: list[Directive]) -> Directive | None:
    for directive in directives:
        if directive.covers(diagnostic.code) and (
            directive.file_level or directive.line == diagnostic.span.line
        ):
            return directive
    return None


def _unused_noqa(
    directive: Directive, unused: list[str], enabled: frozenset[str], path: str
) -> Diagnostic:
    known = registry.rule_docs()
    span = Span(path, directive.line, directive.column, directive.line, directive.end_column)
    applicability = Applicability.SAFE if directive.removal_safe else Applicability.UNSAFE
    if directive.codes is None or len(unused) == len(directive.codes):
        kind = "blanket " if directive.codes is None else ""
        start, end = directive.removal
        fix = Fix((Edit(start, end, ""),), applicability, "Remove unused noqa directive")
    else:
        kept = ", ".join(code for code in directive.codes if code not in unused)
        start, end = directive.codes_span
        kind = ""
        fix = Fix((Edit(start, end, kept),), applicability, "Remove unused codes")
    groups = {
        "unknown": [c for c in unused if c not in known],
        "non-enabled": [c for c in unused if c in known and c not in enabled],
        "unused": [c for c in unused if c in known and c in enabled],
    }
    detail = "; ".join(f"{name}: {', '.join(codes)}" for name, codes in groups.items() if codes)
    scope = "noqa-file" if directive.file_level else "noqa"
    message = f"Unused {kind}{scope} directive" + (f" ({detail})" if detail else "")
    return registry.diagnostic(UNUSED_NOQA, message, span, fix=fix)


def apply_noqa(
    diagnostics: Iterable[Diagnostic], text: str, path: str, enabled: frozenset[str]
) -> list[Diagnostic]:
    """Drop suppressed diagnostics; add PFX901 for directives that suppressed nothing."""
    directives = find_directives(text, path)
    if not directives:
        return list(diagnostics)
    used: dict[Directive, set[str]] = {d: set() for d in directives}
    kept = []
    for diagnostic in diagnostics:
        directive = _suppressor(diagnostic, directives)
        if directive is None:
            kept.append(diagnostic)
        else:
            used[directive].add(diagnostic.code)
    if UNUSED_NOQA not in enabled:
        return kept
    for directive in directives:
        if directive.codes is None:
            unused = [] if used[directive] else ["*"]
        else:
            unused = [c for c in directive.codes if c not in used[directive] and c != UNUSED_NOQA]
        if not unused:
            continue
        report = _unused_noqa(directive, [c for c in unused if c != "*"], enabled, path)
        if _suppressor(report, [d for d in directives if d.codes is not None]) is None:
            kept.append(report)
    return kept
