"""One parsed Python file: the ``ast`` tree walked once into parents, preorder numbers, nodes
by type and scopes, with conversions to spans and offsets."""

from __future__ import annotations

import ast
import bisect
import io
import tokenize
from collections.abc import Iterator, Sequence
from functools import cached_property
from typing import Any, TypeAlias, TypeVar, overload

from prefixlint.codes import ENVIRONMENT, PER_USER, TIMESTAMP, UNIQUE_ID
from prefixlint.context import RuleContext
from prefixlint.lines import python_line_starts
from prefixlint.pyflow.scopes import (
    BUILTIN,
    CLASS,
    COMPREHENSION,
    FUNCTION,
    MODULE,
    Assignment,
    Scope,
    builtin_scope,
    dotted_parts,
    full_name,
)
from prefixlint.types import Span

N = TypeVar("N", bound=ast.AST)
N2 = TypeVar("N2", bound=ast.AST)
N3 = TypeVar("N3", bound=ast.AST)
N4 = TypeVar("N4", bound=ast.AST)

Function: TypeAlias = ast.FunctionDef | ast.AsyncFunctionDef
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
# A statement's block: the node that holds it and the field of that node it is listed in.
Block: TypeAlias = tuple[ast.AST, str]

# Nodes whose ``ast`` range takes in the parentheses around them.
_PARENTHESIZED = (ast.Tuple, ast.GeneratorExp)
_LAYOUT_TOKENS = frozenset(
    {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
    | {tokenize.ENDMARKER}
)
# Fields in the order their code is written, where ``_fields`` differs.
_SOURCE_ORDER: dict[type, tuple[str, ...]] = {
    ast.FunctionDef: ("decorator_list", "args", "returns", "body"),
    ast.AsyncFunctionDef: ("decorator_list", "args", "returns", "body"),
    ast.ClassDef: ("decorator_list", "bases", "keywords", "body"),
    ast.IfExp: ("body", "test", "orelse"),
}
_BLOCK_FIELDS = frozenset({"body", "orelse", "finalbody", "handlers", "cases"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(kind: type[ast.AST]) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = _SOURCE_ORDER.get(kind) or tuple(
            n for n in kind._fields if n not in ("ctx", "type_comment")
        )
        _CHILD_FIELDS[kind] = names
    return names


# Nodes that open a scope, and the fields of theirs that are evaluated inside it.
_INNER_FIELDS: dict[type, frozenset[str]] = {
    ast.FunctionDef: frozenset({"args", "body"}),
    ast.AsyncFunctionDef: frozenset({"args", "body"}),
    ast.Lambda: frozenset({"args", "body"}),
    ast.ClassDef: frozenset({"body"}),
    **dict.fromkeys(COMPREHENSIONS, frozenset({"elt", "key", "value", "generators"})),
}
# Fields evaluated in the scope around the one their node is in: a function's defaults and
# annotations, and the iterable of a comprehension's first ``for``.
_OUTER_FIELDS: dict[type, frozenset[str]] = {
    ast.arguments: frozenset({"defaults", "kw_defaults"}),
    ast.arg: frozenset({"annotation"}),
}
_BINDERS = (
    ast.Import,
    ast.ImportFrom,
    ast.Global,
    ast.Nonlocal,
    ast.ExceptHandler,
    ast.MatchAs,
    ast.MatchStar,
    ast.MatchMapping,
)


# Where a field of a node is evaluated, relative to the scope the node is in (``_plan``).
_SAME, _INNER, _OUTER, _FIRST_ITER = range(4)
_BINDER_KINDS = frozenset(_BINDERS)
# The node types that bind a name or open a scope (``_Walk._enter``).
_ENTERED = frozenset({*_INNER_FIELDS, ast.arg, *_BINDER_KINDS})
_PLANS: dict[type, tuple[tuple[str, int, bool], ...]] = {}


def _plan(kind: type[ast.AST]) -> tuple[tuple[str, int, bool], ...]:
    """The child fields of a node type, last first (the order they go on the walk's stack),
    each with where it is evaluated and whether it is a block of statements; found once."""
    plan = _PLANS.get(kind)
    if plan is None:
        fields = reversed(_fields(kind))
        plan = _PLANS[kind] = tuple((n, _evaluated(kind, n), n in _BLOCK_FIELDS) for n in fields)
    return plan


def _evaluated(kind: type[ast.AST], name: str) -> int:
    if kind is ast.comprehension and name == "iter":
        return _FIRST_ITER  # the first ``for``'s iterable is evaluated outside
    if name in _INNER_FIELDS.get(kind, ()):
        return _INNER
    return _OUTER if name in _OUTER_FIELDS.get(kind, ()) else _SAME


class _Walk:
    """One preorder walk: parents, numbers, nodes by type, the scope of every node, and the
    assignments of every scope."""

    def __init__(self, module: ast.Module) -> None:
        self.parents: dict[int, ast.AST] = {}
        self.order: dict[int, int] = {}
        self.by_type: dict[type, list[ast.AST]] = {}
        self.scopes: dict[int, Scope] = {}
        self.blocks: dict[int, Block] = {}
        self.module_scope = Scope(MODULE, module, builtin_scope())
        parents, order, scopes, by_type = self.parents, self.order, self.scopes, self.by_type
        blocks = self.blocks
        names: list[ast.AST] = []
        constants: list[ast.AST] = []
        by_type[ast.Name], by_type[ast.Constant] = names, constants
        stack: list[tuple[ast.AST, ast.AST | None, Scope]] = [(module, None, self.module_scope)]
        pop, push, plans = stack.pop, stack.append, _PLANS
        while stack:
            node, parent, scope = pop()
            key = id(node)
            if parent is not None:
                parents[key] = parent
            order[key] = len(order)
            scopes[key] = scope
            kind = type(node)
            if kind is ast.Name:
                names.append(node)
                if type(node.ctx) is ast.Store:  # type: ignore[attr-defined]
                    self._record(node, parent, scope)  # type: ignore[arg-type]
                continue
            if kind is ast.Constant:
                if type(parent) is not ast.JoinedStr:  # not a literal piece of an f-string
                    constants.append(node)
                continue
            if kind is not ast.JoinedStr or type(parent) is not ast.FormattedValue:
                by_type.setdefault(kind, []).append(node)  # (a format spec is not a string)
            inner = self._enter(node, kind, parent, scope) if kind in _ENTERED else None
            if kind is ast.Dict:  # keys and values interleaved, as written
                dict_node: ast.Dict = node  # type: ignore[assignment]
                for pair in reversed(list(zip(dict_node.keys, dict_node.values, strict=True))):
                    for child in reversed(pair):
                        if child is not None:
                            push((child, node, scope))
                continue
            # Children go on the stack last first, so that they come off it in field order.
            plan = plans.get(kind)
            for name, evaluated, block in _plan(kind) if plan is None else plan:
                value = getattr(node, name, None)
                if value is None:
                    continue
                where = scope
                if evaluated == _INNER:
                    where = inner if inner is not None else scope
                elif evaluated != _SAME and scope.parent is not None:
                    first = evaluated == _OUTER or parent.generators[0] is node  # type: ignore[union-attr]
                    where = scope.parent if first else scope
                if type(value) is list:
                    if block:
                        for item in value:
                            blocks[id(item)] = (node, name)
                    for item in reversed(value):
                        if isinstance(item, ast.AST):
                            push((item, node, where))
                elif isinstance(value, ast.AST):
                    push((value, node, where))

    def _enter(
        self, node: ast.AST, kind: type, parent: ast.AST | None, scope: Scope
    ) -> Scope | None:
        """Record what ``node`` binds; the scope it opens, if it opens one."""
        if kind in _INNER_FIELDS:
            if kind is ast.Lambda:
                return scope.child(FUNCTION, node, None)
            if kind in COMPREHENSIONS:
                return scope.child(COMPREHENSION, node, None)
            name: str = node.name  # type: ignore[attr-defined]
            scope.record(name, node)
            return scope.child(CLASS if kind is ast.ClassDef else FUNCTION, node, name)
        if kind is ast.arg:
            scope.record(node.arg, node)  # type: ignore[attr-defined]
        elif kind in _BINDER_KINDS:
            self._bind(node, scope)
        return None

    def _bind(self, node: ast.AST, scope: Scope) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                names = [alias.asname] if alias.asname else dotted_parts(alias.name)
                for name in names:
                    scope.record(name, node)
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.name != "*":
                    scope.record(alias.asname or alias.name, node)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared = self._declared_scope(node, scope)
            if declared is not scope:  # ``global x`` at module level changes nothing
                for name in node.names:
                    scope.overwrites[name] = declared
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)):
            if node.name:
                scope.record(node.name, node)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            scope.record(node.rest, node)

    @staticmethod
    def _record(name: ast.Name, parent: ast.AST | None, scope: Scope) -> None:
        if isinstance(parent, ast.NamedExpr) and parent.target is name:
            while scope.kind == COMPREHENSION and scope.parent is not None:
                scope = scope.parent  # a walrus in a comprehension binds outside it
        scope.record(name.id, name)

    def _declared_scope(self, node: ast.Global | ast.Nonlocal, scope: Scope) -> Scope:
        if isinstance(node, ast.Global):
            return self.module_scope
        outer = scope.parent
        while outer is not None and outer.kind == CLASS:
            outer = outer.parent
        return outer if outer is not None and outer.kind != BUILTIN else self.module_scope


def _inside_parentheses(source: str) -> tuple[int, int] | None:
    """Offsets of what a pair of parentheses around all of ``source`` holds (without the
    spaces next to them), or ``None`` when ``source`` is not wrapped in one pair."""
    if not (source.startswith("(") and source.endswith(")")):
        return None
    depth = 0
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    lines = python_line_starts(source)
    brackets = [t for t in tokens if t.type == tokenize.OP and t.string in "()[]{}"]
    for index, token in enumerate(brackets):
        depth += 1 if token.string in "([{" else -1
        if depth == 0 and index < len(brackets) - 1:
            return None  # the first parenthesis closes before the end: ``(a), (b)``
    inside = [t for t in tokens if t.type not in _LAYOUT_TOKENS][1:-1]
    if not inside:
        return None
    first, last = inside[0].start, inside[-1].end
    return lines[first[0] - 1] + first[1], lines[last[0] - 1] + last[1]


class PythonDocument:
    """A module parsed once by ``ast`` and walked once; positions and qualified names are
    computed on first use, only for the nodes asked about."""

    def __init__(self, text: str, module: ast.Module, ctx: RuleContext) -> None:
        self.path = ctx.path
        self.ctx = ctx
        self.text = text
        self.module = module
        walk = _Walk(module)
        self._parents, self._order, self._by_type = walk.parents, walk.order, walk.by_type
        self._scopes, self._blocks = walk.scopes, walk.blocks
        self._line_starts = python_line_starts(text)
        self._columns: dict[int, list[int] | None] = {}
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
    def nodes(self, *types: type[ast.AST]) -> Sequence[ast.AST]:
        """The nodes of the given types, in source order (the literal pieces of f-strings
        and their format specs are not listed)."""
        found = [node for kind in types for node in self._by_type.get(kind, ())]
        if len(types) > 1:
            found.sort(key=self.order)
        return found

    def order(self, node: ast.AST) -> int:
        """The node's number in a preorder walk (earlier in the file, smaller)."""
        return self._order.get(id(node), -1)

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

    # -- scopes -----------------------------------------------------------------------------

    def scope(self, node: ast.AST) -> Scope | None:
        """The scope ``node`` is evaluated in."""
        return self._scopes.get(id(node))

    def assignments(self, name: ast.Name) -> list[Assignment]:
        """Every assignment the name can refer to, in source order (none for a builtin)."""
        scope = self._scopes.get(id(name))
        return list(scope[name.id]) if scope is not None else []

    def qualified_names(self, node: ast.AST) -> frozenset[str]:
        scope = self._scopes.get(id(node))
        if scope is None:
            return frozenset()
        return frozenset(scope.qualified_names(full_name(node), node))

    @cached_property
    def _references(self) -> dict[int, int]:
        """How many times each assignment is read, by its id."""
        counts: dict[int, int] = {}
        for name in self.nodes(ast.Name):
            if isinstance(name.ctx, ast.Store):
                continue
            for assignment in self.assignments(name):
                counts[id(assignment)] = counts.get(id(assignment), 0) + 1
        return counts

    def references(self, assignment: Assignment) -> int:
        return self._references.get(id(assignment), 0)

    @cached_property
    def _reads(self) -> dict[str, list[ast.Name]]:
        """The names read, by name, in source order."""
        found: dict[str, list[ast.Name]] = {}
        for name in self.nodes(ast.Name):
            if isinstance(name.ctx, ast.Load):
                found.setdefault(name.id, []).append(name)
        return found

    def reads_in(self, node: ast.AST, name: str) -> list[ast.Name]:
        """The reads of ``name`` inside ``node`` (nested functions too), in source order,
        found without walking ``node``: its nodes are one run of the preorder."""
        reads = self._reads.get(name, [])
        found = []
        for read in reads[bisect.bisect_right(reads, self.order(node), key=self.order) :]:
            if not any(above is node for above in self.ancestors(read)):
                break  # past the end of the run
            found.append(read)
        return found

    def block(self, statement: ast.AST) -> Block | None:
        """Where ``statement`` is listed: its parent and the field (``body``, ``orelse``)."""
        return self._blocks.get(id(statement))

    # -- positions --------------------------------------------------------------------------

    def _column(self, line: int, byte_column: int) -> int:
        """The code-point column of a UTF-8 byte column on ``line`` (1-based)."""
        columns = self._columns.get(line, [])
        if columns == []:
            start = self._line_starts[line - 1]
            end = self._line_starts[line] if line < len(self._line_starts) else len(self.text)
            source = self.text[start:end]
            columns = None
            if not source.isascii():
                columns = []
                for index, char in enumerate(source):
                    columns.extend([index] * len(char.encode("utf-8", "surrogatepass")))
                columns.append(len(source))
            self._columns[line] = columns
        if columns is None:
            return byte_column
        return columns[min(byte_column, len(columns) - 1)]

    @property
    def lines(self) -> int:
        return len(self._line_starts)

    def offset(self, line: int, column: int) -> int:
        """Character offset of a position (1-based line, 0-based code-point column)."""
        return self._line_starts[line - 1] + column

    def _range(self, node: ast.AST) -> tuple[int, int, int, int]:
        """(line, column, end line, end column), columns in code points from 0."""
        line = getattr(node, "lineno", None)
        end_line = getattr(node, "end_lineno", None)
        if line is None or end_line is None:
            raise ValueError(f"{type(node).__name__} has no position")
        column = self._column(line, node.col_offset)  # type: ignore[attr-defined]
        end_column = self._column(end_line, node.end_col_offset)  # type: ignore[attr-defined]
        if isinstance(node, _PARENTHESIZED):
            return self._unwrapped(line, column, end_line, end_column)
        return line, column, end_line, end_column

    def _unwrapped(
        self, line: int, column: int, end_line: int, end_column: int
    ) -> tuple[int, int, int, int]:
        """The range inside the parentheses that ``ast`` counts as a tuple's or generator's own
        (also a call's, around its only argument), as every other node's range excludes them."""
        start, end = self.offset(line, column), self.offset(end_line, end_column)
        inner = _inside_parentheses(self.text[start:end])
        if inner is None:
            return line, column, end_line, end_column
        return (*self._position(start + inner[0]), *self._position(start + inner[1]))

    def _position(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1]

    def offsets(self, node: ast.AST) -> tuple[int, int]:
        line, column, end_line, end_column = self._range(node)
        return self.offset(line, column), self.offset(end_line, end_column)

    def source(self, node: ast.AST) -> str:
        start, end = self.offsets(node)
        return self.text[start:end]

    def code(self, node: ast.AST) -> str:
        """The node's source text (without the parentheses around it)."""
        return self.source(node)

    def span(self, node: ast.AST) -> Span:
        line, column, end_line, end_column = self._range(node)
        return Span(self.path, line, column + 1, end_line, end_column + 1)

    # -- structure --------------------------------------------------------------------------

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self._parents.get(id(node))

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        above = self._parents.get(id(node))
        while above is not None:
            yield above
            above = self._parents.get(id(above))

    @cached_property
    def _returns(self) -> dict[int, list[ast.expr]]:
        found: dict[int, list[ast.expr]] = {}
        for statement in self.nodes(ast.Return):
            function = self.enclosing_function(statement)
            if function is not None and statement.value is not None:
                found.setdefault(id(function), []).append(statement.value)
        return found

    def returns_of(self, function: Function) -> list[ast.expr]:
        """The values ``function`` returns (not those of functions nested in it)."""
        return list(self._returns.get(id(function), ()))

    def enclosing_function(self, node: ast.AST) -> Function | None:
        return next((a for a in self.ancestors(node) if isinstance(a, FUNCTIONS)), None)

    def enclosing_class(self, node: ast.AST) -> ast.ClassDef | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, ast.ClassDef):
                return ancestor
        return None

    def local_function(self, func: ast.expr) -> Function | None:
        """The function defined in this file that ``func(...)`` calls, if any."""
        if isinstance(func, ast.Name):
            for assignment in self.assignments(func):
                if isinstance(assignment.node, FUNCTIONS):
                    return assignment.node
            return None
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
        ):
            owner = self.enclosing_class(func)
            if owner is not None:
                for statement in owner.body:
                    if isinstance(statement, FUNCTIONS) and statement.name == func.attr:
                        return statement
        return None

    def where(self, node: ast.AST) -> str:
        """``in build_prompt()`` or ``at module level``, for messages."""
        function = self.enclosing_function(node)
        return f"in {function.name}()" if function else "at module level"
