"""Per-request input placed before a large static block in the same prompt text (PFX301).

A prefix cache keeps what comes before the first difference. ``f"Question: {q}\n{DOCUMENT}"``
puts the question first, so the document's tokens are computed again for every question;
``f"{DOCUMENT}\nQuestion: {q}"`` lets every request reuse them (and is the order that long-
context guidance recommends: task, document, then the question).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import libcst as cst

from prefixlint.pyflow import tables as t
from prefixlint.pyflow.analysis import Analysis
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.sinks import Sink, string_value
from prefixlint.pyflow.templates import FIELD, masked, span_within, static_part
from prefixlint.types import Span
from prefixlint.vocabulary import is_request_input


@dataclass(frozen=True)
class Misplaced:
    """The per-request value ``node`` (or its ``field`` inside a template literal) comes before
    ``static``, the fixed text after it."""

    node: cst.CSTNode
    label: str
    before: str
    static: str
    sink: Sink
    field: str = ""

    def span(self, document: PythonDocument) -> Span:
        """Where the finding points (positions are resolved only for a finding)."""
        whole = document.span(self.node)
        if not self.field:
            return whole
        return span_within(whole, document.source(self.node), self.field)


class Layout:
    """Static text resolution and the search for input-before-static layouts."""

    def __init__(self, document: PythonDocument, input_names: Iterable[str] = ()) -> None:
        self.document = document
        self.analysis = Analysis.of(document)
        self.input_names = tuple(input_names)

    def static_text(self, node: cst.CSTNode, depth: int = 0) -> str | None:
        """The fixed text ``node`` always evaluates to, if it is one."""
        if depth > 4:
            return None
        value = string_value(node)
        if value is not None:
            return value
        if isinstance(node, cst.FormattedString):
            texts = [p for p in node.parts if isinstance(p, cst.FormattedStringText)]
            if len(texts) == len(node.parts):
                return "".join(p.value for p in texts)
            return None
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.Add):
                left = self.static_text(node.left, depth + 1)
                right = self.static_text(node.right, depth + 1)
                return left + right if left is not None and right is not None else None
            if isinstance(node.operator, cst.Multiply) and isinstance(node.right, cst.Integer):
                left = self.static_text(node.left, depth + 1)
                return left * min(int(node.right.value, 0), 10_000) if left is not None else None
        if isinstance(node, cst.Name):
            values = [
                b.value
                for a in self.analysis.bindings.reaching(node)
                for b in self.analysis.bindings.values_of(a)
            ]
            if len(values) == 1:
                return self.static_text(values[0], depth + 1)
        return None

    def _segments(self, node: cst.BaseExpression) -> Iterator[tuple[str, str | cst.BaseExpression]]:
        """("text", str) and ("value", expression) pieces of a text, in order."""
        if isinstance(node, cst.FormattedString):
            for part in node.parts:
                if isinstance(part, cst.FormattedStringText):
                    yield "text", part.value
                elif isinstance(part, cst.FormattedStringExpression):
                    static = self.static_text(part.expression)
                    if static is not None:
                        yield "text", static
                    else:
                        yield "value", part.expression
            return
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Add):
            yield from self._segments(node.left)
            yield from self._segments(node.right)
            return
        static = self.static_text(node)
        yield ("text", static) if static is not None else ("value", node)

    def misplaced(self, min_chars: int) -> Iterator[Misplaced]:
        if not self.analysis.flow.roots:
            return  # nothing reaches a request
        inner: set[int] = set()
        kinds = (cst.FormattedString, cst.BinaryOperation, cst.SimpleString, cst.ConcatenatedString)
        for node in self.document.nodes(*kinds):
            if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.Add):
                continue
            if id(node) in inner:
                continue
            if isinstance(node, (cst.BinaryOperation, cst.ConcatenatedString)):
                self._mark_inner(node, inner)
            sink = self.analysis.sink_of(node)
            if sink is None:
                continue
            if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
                found = self._template_misplaced(node, min_chars, sink)
            else:
                found = self._first_misplaced(node, min_chars, sink)
            if found is not None:
                yield found

    @staticmethod
    def _mark_inner(node: cst.BinaryOperation | cst.ConcatenatedString, inner: set[int]) -> None:
        for side in (node.left, node.right):
            if isinstance(side, (cst.BinaryOperation, cst.ConcatenatedString, cst.SimpleString)):
                inner.add(id(side))
                if not isinstance(side, cst.SimpleString):
                    Layout._mark_inner(side, inner)

    def _first_misplaced(
        self, node: cst.BaseExpression, min_chars: int, sink: Sink
    ) -> Misplaced | None:
        """The first input value followed by ``min_chars`` or more of static text."""
        before: list[str] = []
        after: list[str] = []
        first: tuple[cst.BaseExpression, str] | None = None
        for _kind, piece in self._segments(node):
            if first is not None:
                if isinstance(piece, str):  # a "text" segment
                    after.append(piece)
                continue
            if isinstance(piece, str):
                before.append(piece)
                continue
            label = self._variable(piece)
            if label is not None:
                first = (piece, label)
        if first is None or sum(map(len, after)) < min_chars:
            return None
        value, label = first
        return Misplaced(value, label, "".join(before), "".join(after), sink)

    def _template_misplaced(
        self, node: cst.SimpleString | cst.ConcatenatedString, min_chars: int, sink: Sink
    ) -> Misplaced | None:
        """A ``str.format`` template whose first input field comes before the static text."""
        text = string_value(node)
        if not text or "{" not in text:
            return None
        template = masked(text)
        fields = list(FIELD.finditer(template))
        first = next((f for f in fields if is_request_input(f.group(1), self.input_names)), None)
        if first is None:
            return None
        after = static_part(template[first.end() :])
        if len(after) < min_chars:
            return None
        before = static_part(template[: first.start()])
        return Misplaced(node, first.group(0), before, after, sink, field=first.group(0))

    def _variable(self, node: cst.BaseExpression) -> str | None:
        for origin in self.analysis.flow.origins(node):
            # Dates, ids and per-user values are reported by PFX101-PFX104 wherever they are.
            if origin.code == t.REQUEST_INPUT and is_request_input(origin.label, self.input_names):
                return " ".join(self.document.code(node).split())
        return None
