"""One parsed Python file: the libcst tree, its metadata, and conversions to spans and offsets."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any, TypeAlias, TypeVar, overload

import libcst as cst
from libcst._metadata_dependent import LazyValue
from libcst.metadata import (
    CodeRange,
    MetadataWrapper,
    PositionProvider,
    QualifiedName,
    QualifiedNameProvider,
    Scope,
    ScopeProvider,
)

from prefixlint.codes import ENVIRONMENT, PER_USER, TIMESTAMP, UNIQUE_ID
from prefixlint.context import RuleContext
from prefixlint.types import Span

N = TypeVar("N", bound=cst.CSTNode)
N2 = TypeVar("N2", bound=cst.CSTNode)
N3 = TypeVar("N3", bound=cst.CSTNode)
N4 = TypeVar("N4", bound=cst.CSTNode)
# Parents and preorder numbers keyed by ``id(node)``, and the nodes of each type.
_Index: TypeAlias = tuple[dict[int, cst.CSTNode], dict[int, int], dict[type, list[cst.CSTNode]]]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


# Fields that hold only punctuation, whitespace or comments: never walked.
_PUNCTUATION_FIELDS = frozenset(
    {
        "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators",
        "header", "footer", "trailing_whitespace", "equal", "colon", "dot", "operator",
        "lbracket", "rbracket", "lbrace", "rbrace", "asynchronous", "first_line",
        "empty_lines", "last_line", "between", "comment", "newline",
    }
)  # fmt: skip
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = tuple(
            f.name
            for f in dataclasses.fields(kind)
            if f.name not in _PUNCTUATION_FIELDS and not f.name.startswith("whitespace")
        )
        _CHILD_FIELDS[kind] = names
    return names


def _index(module: cst.Module) -> _Index:
    """One preorder walk: parents, preorder numbers and the nodes of each type.

    Walks the dataclass fields directly (skipping punctuation and whitespace), which is several
    times faster than a libcst visitor that calls hooks for every attribute of every node.
    """
    parents: dict[int, cst.CSTNode] = {}
    order: dict[int, int] = {}
    by_type: dict[type, list[cst.CSTNode]] = {}
    stack: list[tuple[cst.CSTNode, cst.CSTNode | None]] = [(module, None)]
    while stack:
        node, parent = stack.pop()
        if parent is not None:
            parents[id(node)] = parent
        order[id(node)] = len(order)
        by_type.setdefault(type(node), []).append(node)
        children: list[cst.CSTNode] = []
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                children.append(value)
            elif isinstance(value, (list, tuple)):
                children.extend(item for item in value if isinstance(item, cst.CSTNode))
        stack.extend((child, node) for child in reversed(children))
    return parents, order, by_type


class PythonDocument:
    """A module parsed once and walked once; scopes, qualified names and positions are
    resolved by libcst on first use, so a file without prompt sinks never pays for them."""

    def __init__(self, text: str, module: cst.Module, ctx: RuleContext) -> None:
        self.path = ctx.path
        self.ctx = ctx
        self.text = text
        self.wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
        self.module = self.wrapper.module
        self._parents, self._order, self._by_type = _index(self.module)
        self._line_starts = [0] + [m.end() for m in _LINE_BREAK.finditer(text)]
        # What the analyses found in this document, computed once by whichever rule asks
        # first (``Analysis.of``, ``history_edits``).
        self.derived: dict[str, Any] = {}

    @overload
    def nodes(self, kind: type[N], /) -> list[N]: ...
    @overload
    def nodes(self, kind: type[N], kind2: type[N2], /) -> list[N | N2]: ...
    @overload
    def nodes(self, kind: type[N], kind2: type[N2], kind3: type[N3], /) -> list[N | N2 | N3]: ...
    @overload
    def nodes(
        self, kind: type[N], kind2: type[N2], kind3: type[N3], kind4: type[N4], /
    ) -> list[N | N2 | N3 | N4]: ...
    def nodes(self, *types: type[cst.CSTNode]) -> Sequence[cst.CSTNode]:
        """The nodes of the given types, in source order."""
        found = [node for kind in types for node in self._by_type.get(kind, ())]
        if len(types) > 1:
            found.sort(key=self.order)
        return found

    def order(self, node: cst.CSTNode) -> int:
        """The node's number in a preorder walk (earlier in the file, smaller)."""
        return self._order.get(id(node), -1)

    @cached_property
    def positions(self) -> Mapping[cst.CSTNode, CodeRange]:
        return self.wrapper.resolve(PositionProvider)

    @cached_property
    def scopes(self) -> Mapping[cst.CSTNode, Scope | None]:
        return self.wrapper.resolve(ScopeProvider)

    @cached_property
    def _qualified(self) -> Mapping[cst.CSTNode, Collection[QualifiedName]]:
        return self.wrapper.resolve(QualifiedNameProvider)

    def option(self, code: str, key: str, default: object = None) -> Any:
        """A rule option, or ``default`` when the rule does not define it."""
        try:
            return self.ctx.option(code, key)
        except KeyError:
            return default

    @cached_property
    def extra_names(self) -> dict[str, list[str]]:
        """Names users declared volatile, by code (the rules' ``extra-volatile-names``)."""
        codes = (TIMESTAMP, UNIQUE_ID, PER_USER, ENVIRONMENT)
        return {code: list(self.option(code, "extra-volatile-names", ())) for code in codes}

    def qualified_names(self, node: cst.CSTNode) -> frozenset[str]:
        value = self._qualified.get(node)
        if isinstance(value, LazyValue):
            value = value()
        return frozenset(q.name for q in value or ())

    def offset(self, line: int, column: int) -> int:
        """Character offset of a libcst position (1-based line, 0-based code-point column)."""
        return self._line_starts[line - 1] + column

    def offsets(self, node: cst.CSTNode) -> tuple[int, int]:
        where = self.positions[node]
        return (
            self.offset(where.start.line, where.start.column),
            self.offset(where.end.line, where.end.column),
        )

    def source(self, node: cst.CSTNode) -> str:
        start, end = self.offsets(node)
        return self.text[start:end]

    def code(self, node: cst.CSTNode) -> str:
        """Source for ``node`` generated from the tree (no positions needed)."""
        if getattr(node, "lpar", None):
            node = node.with_changes(lpar=[], rpar=[])
        return self.module.code_for_node(node)

    def span(self, node: cst.CSTNode) -> Span:
        where = self.positions[node]
        return Span(
            self.path,
            where.start.line,
            where.start.column + 1,
            where.end.line,
            where.end.column + 1,
        )

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        above = self._parents.get(id(node))
        while above is not None:
            yield above
            above = self._parents.get(id(above))

    @cached_property
    def _returns(self) -> dict[int, list[cst.BaseExpression]]:
        found: dict[int, list[cst.BaseExpression]] = {}
        for statement in self.nodes(cst.Return):
            function = self.enclosing_function(statement)
            if function is not None and statement.value is not None:
                found.setdefault(id(function), []).append(statement.value)
        return found

    def returns_of(self, function: cst.FunctionDef) -> list[cst.BaseExpression]:
        """The values ``function`` returns (not those of functions nested in it)."""
        return list(self._returns.get(id(function), ()))

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.ClassDef):
                return ancestor
        return None

    def where(self, node: cst.CSTNode) -> str:
        """``in build_prompt()`` or ``at module level``, for messages."""
        function = self.enclosing_function(node)
        return f"in {function.name.value}()" if function else "at module level"
