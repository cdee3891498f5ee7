"""The libcst tree of a document, built only to render a fix: libcst keeps the formatting and
comments that ``ast`` drops, so a replacement prints exactly as the file writes it.

The tree is parsed once per document, on the first fix, and its nodes are found by the source
range of the ``ast`` node the analysis found (both exclude the parentheses around a node).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TypeVar

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from prefixlint.pyflow.document import PythonDocument

C = TypeVar("C", bound=cst.CSTNode)


class ConcreteTree:
    """The libcst module of a document, with offsets and parents of its nodes."""

    @classmethod
    def of(cls, document: PythonDocument) -> ConcreteTree | None:
        """The document's tree, parsed on first use; ``None`` where libcst cannot parse it."""
        if "concrete" not in document.derived:
            try:
                module = cst.parse_module(document.text)
            except (cst.ParserSyntaxError, RecursionError):
                document.derived["concrete"] = None
            else:
                document.derived["concrete"] = cls(document, module)
        found: ConcreteTree | None = document.derived["concrete"]
        return found

    def __init__(self, document: PythonDocument, module: cst.Module) -> None:
        self.document = document
        wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        self.module = wrapper.module
        self._offsets: dict[int, tuple[int, int]] = {}
        self._by_range: dict[tuple[int, int], list[cst.CSTNode]] = {}
        for node, where in wrapper.resolve(PositionProvider).items():
            span = (
                self._offset(where.start.line, where.start.column),
                self._offset(where.end.line, where.end.column),
            )
            self._offsets[id(node)] = span
            self._by_range.setdefault(span, []).append(node)
        self._parents: dict[int, cst.CSTNode] = {}
        stack: list[cst.CSTNode] = [self.module]
        while stack:
            node = stack.pop()
            for child in node.children:
                self._parents[id(child)] = node
                stack.append(child)

    def _offset(self, line: int, column: int) -> int:
        """A libcst position as an offset (the module itself ends past the last line)."""
        if line > self.document.lines:
            return len(self.document.text)
        return self.document.offset(line, column)

    def node(self, node: ast.AST, kind: type[C]) -> C | None:
        """The libcst node of type ``kind`` written where ``node`` is."""
        found = self._by_range.get(self.document.offsets(node), ())
        return next((n for n in found if isinstance(n, kind)), None)

    def expression(self, node: ast.AST) -> cst.BaseExpression | None:
        """The libcst expression written where ``node`` is."""
        found = self._by_range.get(self.document.offsets(node), ())
        return next((n for n in found if isinstance(n, cst.BaseExpression)), None)

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        return self._offsets[id(node)]

    def source(self, node: cst.CSTNode) -> str:
        start, end = self.offsets(node)
        return self.document.text[start:end]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        above = self._parents.get(id(node))
        while above is not None:
            yield above
            above = self._parents.get(id(above))
