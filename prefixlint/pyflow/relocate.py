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


def _split(fstring: cst.FormattedString, index: int) -> tuple[Parts, Parts] | None:
    """(kept parts, moved parts) around the line holding part ``index``, or ``None``."""
    parts = list(fstring.parts)
    head: Parts = []
    start: tuple[int, str] | None = None
    for j in range(index - 1, -1, -1):
        part = parts[j]
        if isinstance(part, cst.FormattedStringText) and _last_break(part.value) is not None:
            cut = _last_break(part.value)
            head = [*parts[:j], part.with_changes(value=part.value[:cut])]
            start = (j, part.value[cut:])
            break
    tail: Parts = []
    end: tuple[int, str] | None = None
    for j in range(index + 1, len(parts)):
        part = parts[j]
        if isinstance(part, cst.FormattedStringText) and _first_break(part.value) is not None:
            cut = _first_break(part.value)
            end = (j, part.value[:cut])
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
    if start is not None:
        # Drop the line break that ended the previous line; keep the one after the moved line.
        broken = head[-1]
        if not isinstance(broken, cst.FormattedStringText):  # the text cut above
            return None
        cut = max(broken.value.rfind(b) for b in _BREAKS if b in broken.value)
        cut -= broken.value.endswith("\r", 0, cut)  # a CRLF file's literal break is two chars
        head[-1] = broken.with_changes(value=broken.value[:cut])
        kept = head + (tail if end else [])
    else:
        first_tail = tail[0]
        if not isinstance(first_tail, cst.FormattedStringText):  # the text cut above
            return None
        cut = _first_break(first_tail.value)
        if cut is None:  # it starts with the break found above
            return None
        length = 2 if first_tail.value.startswith(("\\n", "\r\n"), cut) else 1
        kept = [first_tail.with_changes(value=first_tail.value[cut + length :]), *tail[1:]]
    kept = [p for p in kept if not (isinstance(p, cst.FormattedStringText) and not p.value)]
    return kept, moved


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
    kept, moved = split
    if not _same_meaning(document, tree, joined, moved, sink.last_user):
        return None
    destination = _destination(tree, last_user, moved)
    if destination is None:
        return None
    start, end = tree.offsets(fstring)
    edits = (
        Edit(start, end, render(tree, fstring.with_changes(parts=kept), at=fstring)),
        Edit(*tree.offsets(last_user), render(tree, destination, at=last_user)),
    )
    return Fix(edits, Applicability.UNSAFE, "Move the line to the end of the last user message")
