"""Per-request input placed before a large static block in the same prompt text (PFX301).

A prefix cache keeps what comes before the first difference. ``f"Question: {q}\n{DOCUMENT}"``
puts the question first, so the document's tokens are computed again for every question;
``f"{DOCUMENT}\nQuestion: {q}"`` lets every request reuse them (and is the order that long-
context guidance recommends: task, document, then the question).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst

from prefixlint.pyflow import tables as t
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.sinks import string_value
from prefixlint.vocabulary import is_request_input


@dataclass(frozen=True)
class Misplaced:
    """``value`` (per-request) comes before ``static`` characters of fixed text."""

    value: cst.BaseExpression
    label: str
    before: str
    static: str
    sink: object


class Layout:
    """Static text resolution and the search for input-before-static layouts."""

    def __init__(self, document: PythonDocument, input_names=()) -> None:
        self.document = document
        self.analysis = document.analysis
        self.input_names = tuple(input_names)

    def static_text(self, node: cst.CSTNode, depth: int = 0) -> str | None:
        """The fixed text ``node`` always evaluates to, if it is one."""
        if depth > 4:
            return None
        value = string_value(node)
        if value is not None:
            return value
        if isinstance(node, cst.FormattedString):
            if all(isinstance(p, cst.FormattedStringText) for p in node.parts):
                return "".join(p.value for p in node.parts)
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

    def _segments(self, node) -> Iterator[tuple[str, object]]:
        """("text", str) and ("value", expression) pieces of a text, in order."""
        if isinstance(node, cst.FormattedString):
            for part in node.parts:
                if isinstance(part, cst.FormattedStringText):
                    yield "text", part.value
                else:
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
        for node in self.document.nodes(cst.FormattedString, cst.BinaryOperation):
            if isinstance(node, cst.BinaryOperation) and not isinstance(node.operator, cst.Add):
                continue
            if id(node) in inner:
                continue
            if isinstance(node, cst.BinaryOperation):
                self._mark_inner(node, inner)
            sink = self.analysis.sink_of(node)
            if sink is None:
                continue
            found = self._first_misplaced(node, min_chars, sink)
            if found is not None:
                yield found

    @staticmethod
    def _mark_inner(node, inner: set[int]) -> None:
        for side in (node.left, node.right):
            if isinstance(side, cst.BinaryOperation) and isinstance(side.operator, cst.Add):
                inner.add(id(side))
                Layout._mark_inner(side, inner)

    def _first_misplaced(self, node, min_chars: int, sink) -> Misplaced | None:
        """The first input value followed by a contiguous static block of ``min_chars`` or more."""
        before: list[str] = []
        pending: tuple[cst.BaseExpression, str] | None = None
        block: list[str] = []
        for kind, piece in [*self._segments(node), ("end", None)]:
            if kind == "text":
                (block if pending is not None else before).append(piece)
                continue
            if pending is not None and sum(map(len, block)) >= min_chars:
                value, label = pending
                return Misplaced(value, label, "".join(before), "".join(block), sink)
            block = []
            if pending is None and kind == "value":
                label = self._variable(piece)
                if label is not None:
                    pending = (piece, label)
                else:
                    before.append("")
        return None

    def _variable(self, node) -> str | None:
        for origin in self.analysis.flow.origins(node):
            # Dates, ids and per-user values are reported by PFX101-PFX104 wherever they are.
            if origin.code == t.REQUEST_INPUT and is_request_input(origin.label, self.input_names):
                return " ".join(self.document.code(node).split())
        return None
