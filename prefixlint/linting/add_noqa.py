"""``check --add-noqa``: a directive on each line with findings, where one can go without
changing the prompt.

Where a directive can go:

- Python: a ``# prefixlint: noqa: CODES`` comment at the end of a line that ends outside a
  string (a finding inside a triple-quoted string cannot be suppressed on its own line);
- YAML: the same comment, on a line that does not end inside a scalar (block scalars and
  multi-line strings are prompt text: a ``#`` there would be sent to the model);
- Jinja templates: a ``{# prefixlint: noqa: CODES #}`` comment at the very start of the line,
  which renders to nothing whatever the whitespace settings (at the end of the line
  ``trim_blocks`` would swallow the newline after it).

Anywhere else (plain text, Markdown, mustache, JSON, TOML) any added text would reach the
model, so the line is refused with its reason: suppress those with ``per-file-ignores``. An
existing directive on the line gets the new codes added to it.
"""

from __future__ import annotations

import io
import tokenize
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePath

import yaml

from prefixlint.codes import UNPARSABLE, UNUSED_NOQA
from prefixlint.lines import LineIndex
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import check_text
from prefixlint.linting.noqa import find_directives
from prefixlint.sources.templates import JINJA, syntax_for
from prefixlint.textio import encode, read_source, write_atomic
from prefixlint.types import Diagnostic

PYTHON_SUFFIXES = frozenset({".py", ".pyi"})
YAML_SUFFIXES = frozenset({".yaml", ".yml"})
STRUCTURED_SUFFIXES = frozenset({".json", ".toml"})


@dataclass
class NoqaEdit:
    """The text with directives added, how many lines got one, and the lines refused."""

    text: str
    added: int = 0
    refused: list[tuple[int, str]] = field(default_factory=list)


def add_noqa_to_file(path: str, settings: Settings) -> NoqaEdit:
    """Add directives for the findings of the file at ``path`` and write it back.

    The new text is checked again before it is written: unless every finding the directives
    name is gone and nothing new appeared, the file is left as it was and its lines refused.
    Raises ``OSError`` and ``UnreadableText`` for a file that cannot be read or written.
    """
    source = read_source(Path(path))
    found = check_text(source.text, path, settings)
    edit = add_noqa(source.text, path, found)
    if not edit.added:
        return edit
    remaining = {(d.span.line, d.code) for d in check_text(edit.text, path, settings)}
    before = {(d.span.line, d.code) for d in found}
    if not remaining < before:
        lines = sorted({line for line, _ in before})
        return NoqaEdit(
            source.text, 0, [(line, "a directive would change the file") for line in lines]
        )
    write_atomic(Path(path).resolve(), encode(edit.text, source.encoding))
    return edit


def add_noqa(text: str, path: str, diagnostics: Iterable[Diagnostic]) -> NoqaEdit:
    """Add a noqa directive for ``diagnostics`` (those of ``text``, after its noqa comments)."""
    codes_by_line: dict[int, set[str]] = defaultdict(set)
    for diagnostic in diagnostics:
        if diagnostic.code not in (UNPARSABLE, UNUSED_NOQA):
            codes_by_line[diagnostic.span.line].add(diagnostic.code)
    result = NoqaEdit(text)
    if not codes_by_line:
        return result
    style, allowed = _placement(text, path)
    existing = {d.line: d for d in find_directives(text, path) if not d.file_level}
    index = LineIndex(text)
    edits: list[tuple[int, int, str]] = []
    for line in sorted(codes_by_line):
        codes = codes_by_line[line]
        directive = existing.get(line)
        if directive is not None and directive.codes is None:
            continue  # a blanket directive covers every code already
        if directive is not None:
            start, end = directive.codes_span
            merged = sorted({*directive.codes, *codes}) if directive.codes else sorted(codes)
            edits.append((start, end, ", ".join(merged)))
        elif isinstance(allowed, str):
            result.refused.append((line, allowed))
            continue
        elif line not in allowed:
            result.refused.append((line, "the line ends inside a string that is sent as is"))
            continue
        else:
            edits.append(_new_directive(text, index, line, sorted(codes), style))
        result.added += 1
    for start, end, replacement in sorted(edits, reverse=True):
        result.text = result.text[:start] + replacement + result.text[end:]
    return result


def _new_directive(
    text: str, index: LineIndex, line: int, codes: list[str], style: str
) -> tuple[int, int, str]:
    directive = f"prefixlint: noqa: {', '.join(codes)}"
    line_start, line_end = index.line_bounds(line)
    if style == "jinja":
        return line_start, line_start, "{# " + directive + " #}"
    content_end = line_end
    while content_end > line_start and text[content_end - 1] in "\r\n":
        content_end -= 1
    gap = "  " if style == "python" else " "
    return content_end, content_end, f"{gap}# {directive}"


def _placement(text: str, path: str) -> tuple[str, set[int] | str]:
    """The directive style for ``path`` and the lines that can take one (or why none can)."""
    suffix = PurePath(path).suffix.lower()
    if suffix in PYTHON_SUFFIXES:
        return "python", _python_line_ends(text)
    if suffix in YAML_SUFFIXES:
        return "hash", _yaml_line_ends(text)
    if suffix in STRUCTURED_SUFFIXES:
        return "", f"a {suffix[1:].upper()} prompt file has no comment that stays out of the prompt"
    if syntax_for(path, text) == JINJA and "raw %}" not in text:
        return "jinja", set(range(1, text.count("\n") + 2))
    return "", "text added to this template would reach the model"


def _python_line_ends(text: str) -> set[int] | str:
    """Lines whose end is outside any string: a comment can follow the code there."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return "the file cannot be tokenized"
    return {token.start[0] for token in tokens if token.type in (tokenize.NEWLINE, tokenize.NL)} | {
        token.start[0] for token in tokens if token.type == tokenize.COMMENT
    }


def _yaml_line_ends(text: str) -> set[int] | str:
    """Lines that do not end inside a YAML scalar (a block scalar, a multi-line string)."""
    try:
        scalars = [t for t in yaml.scan(text) if isinstance(t, yaml.ScalarToken)]
    except yaml.YAMLError:
        return "the file cannot be read as YAML"
    inside: set[int] = set()
    for token in scalars:
        first, last = token.start_mark.line + 1, token.end_mark.line + 1
        if token.end_mark.column == 0 and last > first:
            last -= 1  # a block scalar ends at the start of the next line
        if last > first:
            inside.update(range(first, last + 1))
    return set(range(1, text.count("\n") + 2)) - inside
