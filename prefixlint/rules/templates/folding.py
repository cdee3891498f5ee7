"""Repeated findings of one kind in a file, folded into the first.

A file that repeats one problem on many lines (trailing spaces, a no-break space used as its
word separator) gets one finding at the first line, the later lines named in its message and
``folded_lines`` and fixed by its fix. ``noqa`` on the first line suppresses the finding with
what it folds; a later line that waives the rule is reported on its own, for its directive to
suppress.
"""

from __future__ import annotations

from prefixlint.linting.noqa import find_directives
from prefixlint.sources.templates import TemplateDocument
from prefixlint.types import Applicability, Fix

_SHOWN_LINES = 8


def fold_sites(
    document: TemplateDocument, code: str, sites: list[tuple[int, int]]
) -> list[list[tuple[int, int]]]:
    """``sites`` (``(start, end)`` in ``document.text``, in order) grouped one group per
    finding: the first with every later site, except the later sites on lines that waive
    ``code``, each alone."""
    if not sites:
        return []
    directives = find_directives(document.file_text, document.path)
    waived = {d.line for d in directives if d.covers(code) and not d.file_level}
    first, *later = sites
    alone = [site for site in later if document.span(*site).line in waived]
    return [[first, *(site for site in later if site not in alone)], *([site] for site in alone)]


def folded_lines_text(lines: list[int]) -> str:
    """``; and on N more lines after it (a, b, ...)`` for the folded ``lines``, else ``""``."""
    if not lines:
        return ""
    shown = ", ".join(map(str, lines[:_SHOWN_LINES]))
    if len(lines) > _SHOWN_LINES:
        shown += ", ..."
    noun = "line" if len(lines) == 1 else "lines"
    return f"; and on {len(lines)} more {noun} after it ({shown})"


def folded_fix(
    document: TemplateDocument, changes: list[tuple[int, int, str]], message: str
) -> Fix | None:
    """One safe fix making every change; where the file's syntax cannot make one of them, a
    fix making the others."""
    fix = document.fix(changes, Applicability.SAFE, message)
    if fix is not None or len(changes) < 2:
        return fix
    kept = [c for c in changes if document.fix([c], Applicability.SAFE, "") is not None]
    return document.fix(kept, Applicability.SAFE, message) if kept else None
