"""PFX402 in templates: blank-line separators that drift, and trailing whitespace.

Trailing spaces are invisible and editors strip them on save, so the prompt's bytes (and its
cached prefix) change with whoever touched the file last: once per edit, not per request, so
they are one warning per file (the option ``trailing-whitespace`` turns it off); the safe fix
removes them. In a
Markdown file, two or more spaces after text are a hard line break, written on purpose, and are
left alone, as is a file whose every line ends in the same whitespace (its style). Sections of
one kind (Markdown headings of one level, ``<TAG>`` lines; paragraphs, in a template without
either) separated by different numbers of blank lines are the same drift waiting to happen:
code that assembles or reformats the prompt normalises them, and ``\\n\\n`` and
``\\n\\n\\n`` are different tokens. A section that breaks the separator most sections of its
kind use (none counts: a missing blank line) is reported with a display-only fix, since which
separator is right is the author's choice; where more than a quarter of them differ (one, for
three or four sections), the spacing has no convention and nothing is said. The sections of
one kind that break the convention are one finding, at the first of them, the
others folded into it (as trailing whitespace is).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import PurePath

from prefixlint import codes, registry
from prefixlint.context import RuleContext
from prefixlint.rules.templates.folding import fold_sites, folded_fix, folded_lines_text
from prefixlint.rules.templates.sections import lines, section_lines
from prefixlint.sources import MARKDOWN_SUFFIXES
from prefixlint.sources.templates import TemplateDocument
from prefixlint.types import Applicability, Diagnostic

CODE = codes.WHITESPACE_DRIFT
_MIN_SECTIONS = 3
_PARAGRAPH = "paragraph"
_MIN_STYLED_LINES = 6  # fewer lines, all with trailing spaces, are a careless paste
_TITLE = re.compile(r"[ \t]*(?:\*\*)?([^\W\d_][\w '’/&-]*?)(?:\*\*)?[ \t]*:?(?:\*\*)?[ \t]*\r?")
_TITLE_WORDS = 5


@registry.register(CODE, "template")
def check(document: TemplateDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    if ctx.option(CODE, "trailing-whitespace"):
        yield from _trailing_whitespace(document)
    yield from _separator_drift(document)


def _trailing_whitespace(document: TemplateDocument) -> Iterator[Diagnostic]:
    """One finding for the file's trailing whitespace, at its first line, the later lines
    folded into it and its fix removing all of it."""
    sites = list(_trailing_sites(document))
    if _house_style(document, sites):
        return
    for group in fold_sites(document, CODE, sites):
        yield _trailing_finding(document, group)


def _house_style(document: TemplateDocument, sites: list[tuple[int, int]]) -> bool:
    """Whether every line with text ends in the same trailing whitespace: the file's style,
    written and kept as one, not a stray byte that one editor leaves and another strips."""
    text = document.text
    filled = sum(1 for start, end in lines(text) if text[start:end].strip())
    endings = {text[start:end] for start, end in sites}
    return len(sites) >= _MIN_STYLED_LINES and len(sites) == filled and len(endings) == 1


def _trailing_sites(document: TemplateDocument) -> Iterator[tuple[int, int]]:
    """Where each line's trailing spaces and tabs are, in static text (Markdown hard breaks
    left out)."""
    text = document.text
    static = document.parsed.static
    markdown = PurePath(document.path).suffix.lower() in MARKDOWN_SUFFIXES
    for start, end in lines(text):
        stripped = len(text[start:end].rstrip(" \t"))
        if start + stripped == end or not static.is_literal(start + stripped, end):
            continue
        if markdown and _hard_break(text, start, end, stripped):
            continue
        if not _ends_file_line(document, end):
            continue  # ``"Formatting re-enabled. "``: the quote keeps the space
        yield start + stripped, end


def _ends_file_line(document: TemplateDocument, end: int) -> bool:
    """Whether the end of a line of ``document.text`` is the end of a line of its file, where
    editors strip trailing whitespace (in a quoted YAML or JSON string it is followed by the
    closing quote or an escaped newline)."""
    source_end = document.host.to_source(end)
    return document.file_text[source_end : source_end + 1] in ("", "\n", "\r")


def _trailing_finding(document: TemplateDocument, sites: list[tuple[int, int]]) -> Diagnostic:
    first, *rest = sites
    changes = [(start, end, "") for start, end in sites]
    fix = folded_fix(document, changes, "Remove trailing whitespace")
    lines_after = [document.span(*site).line for site in rest]
    message = "trailing whitespace: invisible bytes that editors strip, changing the prompt"
    message += folded_lines_text(lines_after)
    return registry.diagnostic(
        CODE, message, document.span(*first), fix=fix, folded_lines=lines_after
    )


def _hard_break(text: str, start: int, end: int, stripped: int) -> bool:
    """Whether a Markdown line ends in a hard line break: text, then two or more spaces."""
    trailing = text[start + stripped : end]
    return stripped > 0 and len(trailing) >= 2 and "\t" not in trailing


def _section_boundaries(
    document: TemplateDocument,
) -> dict[str, list[tuple[int, int, int, bool]]]:
    """For each kind of section, ``(line start, blank lines before, gap start, reportable)``
    of each section that follows other text outside any block. A template without headings
    or tag lines is cut into paragraphs: each line after blank lines starts one, and only a
    paragraph that opens with a title line (``Rules:``, ``Things we never do``) can break the
    convention (an extra blank line inside prose, or before a label an example repeats, is a
    pause the author chose). A line of only
    block tags or comments renders nothing and starts nothing."""
    text = document.text
    rows = list(section_lines(text))
    paragraphs = not any(kind for _, _, kind in rows)
    blank_run, gap_start, seen_content = 0, 0, False
    boundaries: dict[str, list[tuple[int, int, int, bool]]] = defaultdict(list)
    for start, end, kind in rows:
        if not text[start:end].strip():
            gap_start = start if blank_run == 0 else gap_start
            blank_run += 1
            continue
        if _only_tags(document, start, end):
            continue
        if blank_run == 0:
            gap_start = start
        titled = True
        if paragraphs and blank_run:
            kind, titled = _PARAGRAPH, _is_title(text, text[start:end])
        if seen_content and kind and document.block_depth(start) == 0:
            boundaries[kind].append((start, blank_run, gap_start, titled))
        seen_content, blank_run = True, 0
    return boundaries


def _is_title(text: str, line: str) -> bool:
    """Whether ``line`` is a section's title: a few words, no sentence punctuation, maybe a
    colon, written once (a label that repeats, ``Action:``, is a field of an example)."""
    match = _TITLE.fullmatch(line)
    if match is None or len(match.group(1).split()) > _TITLE_WORDS:
        return False
    return len(re.findall(rf"^{re.escape(line.strip())}[ \t]*\r?$", text, re.MULTILINE)) == 1


def _only_tags(document: TemplateDocument, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` holds tags and no text or placeholder."""
    return (
        bool(document.tags_between(start, end))
        and not document.static_between(start, end).strip()
        and not document.placeholders_between(start, end)
    )


def _separator_drift(document: TemplateDocument) -> Iterator[Diagnostic]:
    for boundaries in _section_boundaries(document).values():
        yield from _drift_in_kind(document, boundaries)


def _drift_in_kind(
    document: TemplateDocument, boundaries: list[tuple[int, int, int, bool]]
) -> Iterator[Diagnostic]:
    if len(boundaries) < _MIN_SECTIONS:
        return
    counts = Counter(blank for _, blank, _, _ in boundaries)
    usual, usual_count = counts.most_common(1)[0]
    breaks = len(boundaries) - usual_count
    if usual_count * 2 <= len(boundaries) or usual == 0 or breaks > max(1, len(boundaries) // 4):
        return  # no convention to drift from: the spacing varies throughout
    gaps = {
        start: (blank, gap_start)
        for start, blank, gap_start, titled in boundaries
        if blank != usual and titled
    }
    if not gaps:
        return
    sites = [(start, document.line_bounds(start)[1] - 1) for start in gaps]
    for group in fold_sites(document, CODE, sites):
        changes = [(gaps[start][1], start, "\n" * usual) for start, _ in group]
        where = "here" if len(group) == 1 else "before these sections"
        message = f"Use {usual} blank line(s) {where}"
        fix = document.fix(changes, Applicability.DISPLAY_ONLY, message)
        lines_after = [document.span(*site).line for site in group[1:]]
        yield registry.diagnostic(
            CODE,
            f"{gaps[group[0][0]][0]} blank line(s) before this section but {usual} before"
            f" {usual_count} others: separators drift when the prompt is reassembled or"
            f" reformatted{folded_lines_text(lines_after)}",
            document.span(*group[0]),
            fix=fix,
            folded_lines=lines_after,
        )
