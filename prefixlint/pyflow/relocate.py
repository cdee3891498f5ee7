"""Move a volatile line out of the system prompt, to the end of the last user message.

The system prompt is an f-string (written at the request, or bound to a name used only there);
the line holding the volatile value (from the line break before it to the one after it) is
cut from it and appended, after a blank line, to the last user message of the same request.
The model still reads the same words; the system prompt, and every turn after it, stays
identical between requests. Only done when every name the line uses means the same thing at
the user message, and the strings' quoting allows it without re-escaping.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from typing import Literal, TypeAlias

import libcst as cst

from prefixlint.pyflow.analysis import Reach
from prefixlint.pyflow.concrete import ConcreteTree
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.fixes import render
from prefixlint.types import Applicability, Edit, Fix

Parts: TypeAlias = list[cst.BaseFormattedStringContent]
Quote: TypeAlias = Literal['"', "'"]

_BREAKS = ("\\n", "\n")
_SEPARATOR = "\\n\\n"


def _last_break(raw: str) -> int | None:
    """Index just past the last line break (escaped or literal) in ``raw``."""
    found = [raw.rfind(b) + len(b) for b in _BREAKS if b in raw]
    return max(found) if found else None


def _first_break(raw: str) -> int | None:
    """Index of the first line break in ``raw`` (at its carriage return in a CRLF file)."""
    found = [raw.find(b) for b in _BREAKS if b in raw]
    if not found:
        return None
    first = min(found)
    return first - 1 if raw.startswith("\r\n", first - 1) and first > 0 else first


def _same_meaning(
    document: PythonDocument,
    tree: ConcreteTree,
    fstring: ast.JoinedStr,
    parts: Sequence[cst.BaseFormattedStringContent],
    destination: ast.expr,
) -> bool:
    """Every name used in ``parts`` resolves to the same assignments at ``destination``."""
    ranges = [
        tree.offsets(part.expression)
        for part in parts
        if isinstance(part, cst.FormattedStringExpression)
    ]
    target_scope = document.scope(destination)
    for name in ast.walk(fstring):
        if not isinstance(name, ast.Name):
            continue
        start, end = document.offsets(name)
        if not any(low <= start and end <= high for low, high in ranges):
            continue
        scope = document.scope(name)
        if scope is None or target_scope is None:
            return False
        here = scope[name.id]
        if not here or {id(a) for a in here} != {id(a) for a in target_scope[name.id]}:
            return False
    return True


# The end of a sentence followed by another on the same line: ``Be brief. Today is ...``.
_SENTENCE_END = re.compile(r"[.!?](?=[ \t]+\S)")
LINE, SENTENCE = "line", "sentence"


def _past_spaces(raw: str, at: int) -> int:
    return len(raw) - len(raw[at:].lstrip(" \t"))


def _cut_before(raw: str) -> tuple[int, int, str] | None:
    """Where the moved text starts in ``raw`` (text before the value): ``(end of the text
    kept, start of the text moved, kind)``, at the last line break or, after it, the last
    sentence end; ``None`` when ``raw`` has neither."""
    line = _last_break(raw)
    sentences = list(_SENTENCE_END.finditer(raw, line or 0))
    if sentences:
        end = sentences[-1].end()
        return end, _past_spaces(raw, end), SENTENCE
    return (line, line, LINE) if line is not None else None


def _cut_after(raw: str) -> tuple[int, str] | None:
    """Where the moved text ends in ``raw`` (text after the value), and its kind: at the
    first line break or, before it, the first sentence end (the space after it is kept)."""
    line = _first_break(raw)
    sentence = _SENTENCE_END.search(raw, 0, len(raw) if line is None else line)
    if sentence is not None:
        return sentence.end(), SENTENCE
    return (line, LINE) if line is not None else None


def _split(fstring: cst.FormattedString, index: int) -> tuple[Parts, Parts, str] | None:
    """(kept parts, moved parts, ``LINE`` or ``SENTENCE``) around the line, or the sentence of
    a line of several, that holds part ``index``; ``None`` when the string is that one line."""
    parts = list(fstring.parts)
    head: Parts = []
    start: tuple[int, str, str] | None = None  # (part index, moved text, kind)
    for j in range(index - 1, -1, -1):
        part = parts[j]
        found = _cut_before(part.value) if isinstance(part, cst.FormattedStringText) else None
        if found is not None and isinstance(part, cst.FormattedStringText):
            kept_end, moved_start, kind = found
            head = [*parts[:j], part.with_changes(value=part.value[:kept_end])]
            start = (j, part.value[moved_start:], kind)
            break
    tail: Parts = []
    end: tuple[int, str, str] | None = None
    for j in range(index + 1, len(parts)):
        part = parts[j]
        after = _cut_after(part.value) if isinstance(part, cst.FormattedStringText) else None
        if after is not None and isinstance(part, cst.FormattedStringText):
            cut, kind = after
            end = (j, part.value[:cut], kind)
            tail = [part.with_changes(value=part.value[cut:]), *parts[j + 1 :]]
            break
    if start is None and end is None:
        return None
    first = start[0] + 1 if start else 0
    last = end[0] if end else len(parts)
    moved = parts[first:last]
    if start and start[1]:
        moved.insert(0, cst.FormattedStringText(start[1]))
    if end and end[1]:
        moved.append(cst.FormattedStringText(end[1]))
    kept = _joined(head, tail, start[2] if start else None, end[2] if end else None)
    if kept is None:
        return None
    kept = [p for p in kept if not (isinstance(p, cst.FormattedStringText) and not p.value)]
    kinds = {start[2] if start else None, end[2] if end else None}
    return kept, moved, SENTENCE if SENTENCE in kinds else LINE


def _joined(head: Parts, tail: Parts, before: str | None, after: str | None) -> Parts | None:
    """The parts kept around the moved text: one line break between the lines left, one
    space between the sentences left, none at either end of the string."""
    if before == LINE and after != SENTENCE:
        # Drop the line break that ended the previous line; keep the one after the moved line.
        broken = head[-1]
        if not isinstance(broken, cst.FormattedStringText):  # the text cut above
            return None
        cut = max(broken.value.rfind(b) for b in _BREAKS if b in broken.value)
        cut -= broken.value.endswith("\r", 0, cut)  # a CRLF file's literal break is two chars
        head = [*head[:-1], broken.with_changes(value=broken.value[:cut])]
        return head + (tail if after else [])
    if after is None:
        return head
    first_tail = tail[0]
    if not isinstance(first_tail, cst.FormattedStringText):  # the text cut above
        return None
    value = first_tail.value
    if after == SENTENCE and before != SENTENCE:
        value = value[_past_spaces(value, 0) :]
    elif after == LINE and before is None:
        line = _first_break(value)
        if line is None:  # it starts with the break found above
            return None
        value = value[line + (2 if value.startswith(("\\n", "\r\n"), line) else 1) :]
    return [*head, first_tail.with_changes(value=value), *tail[1:]]


def _remaining(fstring: cst.FormattedString, kept: Parts) -> cst.BaseExpression:
    """The system prompt left: a plain string once no replacement field is left in it."""
    texts = [p.value for p in kept if isinstance(p, cst.FormattedStringText)]
    text = "".join(texts)
    if len(texts) < len(kept) or "{" in text or "}" in text:
        return fstring.with_changes(parts=kept)
    prefix = fstring.start[: -len(fstring.end)].replace("f", "").replace("F", "")
    return cst.SimpleString(prefix + fstring.end + text + fstring.end)


def _quote_for(*texts: str) -> Quote | None:
    quotes: tuple[Quote, ...] = ('"', "'")
    for quote in quotes:
        if not any(quote in text for text in texts):
            return quote
    return None


def _destination(
    tree: ConcreteTree, content: cst.BaseExpression, moved: Parts
) -> cst.FormattedString | None:
    moved_raw = "".join(
        p.value if isinstance(p, cst.FormattedStringText) else render(tree, p) for p in moved
    )
    addition = [cst.FormattedStringText(_SEPARATOR), *moved]
    if isinstance(content, cst.FormattedString):
        if "r" in content.prefix.lower() or content.quote[0] in moved_raw:
            return None
        return content.with_changes(parts=[*content.parts, *addition])
    if isinstance(content, cst.SimpleString):
        prefix = content.prefix.lower()
        if prefix not in ("", "u") or content.quote[0] in moved_raw:
            return None
        raw = content.raw_value.replace("{", "{{").replace("}", "}}")
        return cst.FormattedString(
            parts=[cst.FormattedStringText(raw), *addition],
            start="f" + content.quote,
            end=content.quote,
        )
    if isinstance(content, (cst.List, cst.Dict, cst.Tuple, cst.ListComp)):
        return None
    quote = _quote_for(moved_raw, tree.source(content))
    if quote is None:
        return None
    hole = cst.FormattedStringExpression(content.with_changes(lpar=[], rpar=[]))
    return cst.FormattedString(parts=[hole, *addition], start="f" + quote, end=quote)


def relocate(
    document: PythonDocument, reach: Reach, found: ast.FormattedValue, joined: ast.JoinedStr
) -> Fix | None:
    """Cut the line holding ``found`` from the system prompt ``joined`` (see
    :func:`prefixlint.pyflow.fixers.relocation_site`) and append it to the last user message."""
    sink = reach.sink
    tree = ConcreteTree.of(document)
    if tree is None or sink.last_user is None:
        return None
    fstring = tree.node(joined, cst.FormattedString)
    value = tree.expression(found.value)
    last_user = tree.expression(sink.last_user)
    hole = tree.parent(value) if value is not None else None
    if fstring is None or last_user is None or "r" in fstring.prefix.lower():
        return None
    if not isinstance(hole, cst.FormattedStringExpression) or hole not in fstring.parts:
        return None
    split = _split(fstring, list(fstring.parts).index(hole))
    if split is None:
        return None
    kept, moved, unit = split
    if not _same_meaning(document, tree, joined, moved, sink.last_user):
        return None
    destination = _destination(tree, last_user, moved)
    if destination is None:
        return None
    start, end = tree.offsets(fstring)
    edits = (
        Edit(start, end, render(tree, _remaining(fstring, kept), at=fstring)),
        Edit(*tree.offsets(last_user), render(tree, destination, at=last_user)),
    )
    return Fix(edits, Applicability.UNSAFE, f"Move the {unit} to the end of the last user message")
