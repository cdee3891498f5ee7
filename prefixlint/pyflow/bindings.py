"""Where names get their values: assignments, attributes, returns and in-place mutations.

One pass over the module builds the index; :class:`Bindings` then answers "which expressions
can this name or ``self.attribute`` hold here?" using the document's scopes, keeping only the
assignments that can reach the use (a later plain assignment in an enclosing block hides the
earlier ones).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property

from prefixlint.pyflow.document import Function, PythonDocument
from prefixlint.pyflow.scopes import CLASS, Assignment

MUTATING_METHODS = frozenset({"append", "extend", "insert", "sort", "update", "execute", "add"})


@dataclass(frozen=True)
class Binding:
    """``target`` gets ``value``; ``kind`` is how (assign, augment, element, context).
    ``position``: the target's index in a tuple target unpacking ``value`` as a whole
    (``a, b = f()``), so that only ``value``'s element there is read."""

    value: ast.expr
    kind: str
    statement: ast.AST
    target: ast.AST | None = None
    position: int | None = None


@dataclass(frozen=True)
class Mutation:
    """``receiver.method(args)`` or ``function(receiver)`` changing a named object in place;
    ``method`` is ``"setitem"`` for ``receiver[key] = value`` (``call`` is then the statement)."""

    call: ast.Call | ast.Assign
    method: str
    receiver: ast.Name | ast.Attribute


class _Index:
    """Bindings of names and ``self`` attributes, from the document's nodes by type."""

    def __init__(self, document: PythonDocument) -> None:
        self.document = document
        self.targets: dict[int, list[Binding]] = {}
        self.attributes: dict[tuple[int, str], list[Binding]] = {}
        for node in document.nodes(ast.Assign):
            for target in node.targets:
                self._bind(target, node.value, "assign", node)
                self._bind_class_attribute(target, node.value, "assign", node)
        for annotated in document.nodes(ast.AnnAssign):
            if annotated.value is not None:
                self._bind(annotated.target, annotated.value, "assign", annotated)
                self._bind_class_attribute(annotated.target, annotated.value, "assign", annotated)
        for augmented in document.nodes(ast.AugAssign):
            self._bind(augmented.target, augmented.value, "augment", augmented)
        for named in document.nodes(ast.NamedExpr):
            self._bind(named.target, named.value, "assign", named)
        for loop in document.nodes(ast.For, ast.AsyncFor, ast.comprehension):
            self._bind(loop.target, loop.iter, "element", loop)
        for item in document.nodes(ast.withitem):
            if item.optional_vars is not None:
                self._bind(item.optional_vars, item.context_expr, "context", item)

    def _bind(
        self,
        target: ast.expr,
        value: ast.expr,
        kind: str,
        statement: ast.AST,
        position: int | None = None,
    ) -> None:
        if isinstance(target, ast.Name):
            binding = Binding(value, kind, statement, position=position)
            self.targets.setdefault(id(target), []).append(binding)
        elif isinstance(target, ast.Attribute):
            owner = self.document.enclosing_class(statement)
            if (
                owner is not None
                and isinstance(target.value, ast.Name)
                and target.value.id in ("self", "cls")
            ):
                key = (id(owner), target.attr)
                binding = Binding(value, kind, statement, target)
                self.attributes.setdefault(key, []).append(binding)
        elif isinstance(target, (ast.Tuple, ast.List)):
            items = value.elts if isinstance(value, (ast.Tuple, ast.List)) else None
            starred = any(isinstance(e, ast.Starred) for e in target.elts)
            for index, element in enumerate(target.elts):
                inner = element.value if isinstance(element, ast.Starred) else element
                if items is not None and len(items) == len(target.elts):
                    item = items[index]
                    item = item.value if isinstance(item, ast.Starred) else item
                    self._bind(inner, item, kind, statement)
                else:
                    self._bind(inner, value, "element", statement, None if starred else index)

    def _bind_class_attribute(
        self, target: ast.expr, value: ast.expr, kind: str, statement: ast.AST
    ) -> None:
        """``X = ...`` directly in a class body is also readable as ``self.X``."""
        if not isinstance(target, ast.Name):
            return
        # A statement is evaluated in the scope of the innermost function or class around it
        # (never in a lambda's or a comprehension's): that of a class body is the class's.
        scope = self.document.scope(statement)
        if scope is not None and scope.kind == CLASS and isinstance(scope.node, ast.ClassDef):
            binding = Binding(value, kind, statement, target)
            self.attributes.setdefault((id(scope.node), target.id), []).append(binding)


class Bindings:
    """Answers what a name, attribute or local function call can evaluate to."""

    def __init__(self, document: PythonDocument) -> None:
        self.document = document
        index = _Index(document)
        self._targets = index.targets
        self._attributes = index.attributes
        self.calls = document.nodes(ast.Call)

    @cached_property
    def _mutations(self) -> dict[int, list[Mutation]]:
        """In-place changes by the assignment (id) of the name they change."""
        found: dict[int, list[Mutation]] = {}
        stores = [
            Mutation(statement, "setitem", target.value)
            for statement in self.document.nodes(ast.Assign)
            for target in statement.targets
            if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
        ]
        for call in self.calls:
            stores += self._mutations_in(call)
        for mutation in stores:
            if isinstance(mutation.receiver, ast.Name):
                for assignment in self.assignments(mutation.receiver):
                    found.setdefault(id(assignment), []).append(mutation)
        return found

    @cached_property
    def _attribute_mutations(self) -> dict[tuple[int, str], list[Mutation]]:
        """In-place changes of ``self.X`` by (class id, attribute name): ``self.tools.append``."""
        found: dict[tuple[int, str], list[Mutation]] = {}
        for call in self.calls:
            func = call.func
            if not (isinstance(func, ast.Attribute) and func.attr in MUTATING_METHODS):
                continue
            receiver = func.value
            if not (_self_attribute(receiver) and isinstance(receiver, ast.Attribute)):
                continue
            owner = self.document.enclosing_class(call)
            if owner is not None:
                key = (id(owner), receiver.attr)
                found.setdefault(key, []).append(Mutation(call, func.attr, receiver))
        return found

    def attribute_mutations(self, node: ast.Attribute) -> list[Mutation]:
        """In-place changes, in any method, of the ``self`` attribute ``node`` reads."""
        owner = self.document.enclosing_class(node)
        if owner is None:
            return []
        return list(self._attribute_mutations.get((id(owner), node.attr), ()))

    @staticmethod
    def _mutations_in(call: ast.Call) -> list[Mutation]:
        func = call.func
        found = []
        if isinstance(func, ast.Attribute) and func.attr in MUTATING_METHODS:
            # Sorting an inner list (``groups[key].sort()``) leaves the outer order as it is.
            changed = func.value if func.attr == "sort" else _container(func.value)
            if isinstance(changed, ast.Name):
                found.append(Mutation(call, func.attr, changed))
        first = call.args[0] if call.args else None
        if isinstance(first, ast.Name):
            name = func.attr if isinstance(func, ast.Attribute) else None
            if isinstance(func, ast.Name):
                name = func.id
            if name in ("shuffle", "permutation"):
                found.append(Mutation(call, "shuffle", first))
        return found

    def assignments(self, name: ast.Name) -> list[Assignment]:
        """Every assignment (by the document's scopes) that ``name`` can refer to."""
        return self.document.assignments(name)

    def reaching(self, name: ast.Name) -> list[Assignment]:
        """The assignments of ``name`` that can reach this use of it."""
        found = self.assignments(name)
        scope = self.document.scope(name)
        local = [a for a in found if a.node is not None and a.scope is scope]
        if not local:
            return found
        position = self._position(name)
        ancestors = {id(a) for a in self.document.ancestors(name)}
        # ``x = x.strip()``: the target comes first in the tree, but the value is read before it
        # (a loop's body, unlike its iterable, reads what the loop bound).
        earlier = [
            a
            for a in local
            if self._position(a.node) < position
            and not any(
                b.value is name or id(b.value) in ancestors
                for b in self._targets.get(id(a.node), ())
            )
        ]
        if not earlier:
            return found
        earlier.sort(key=lambda a: self._position(a.node))
        chosen = [a for a in found if a not in local]
        for assignment in reversed(earlier):
            chosen.append(assignment)
            if self._dominates(assignment, ancestors):
                break
        return chosen

    def _dominates(self, assignment: Assignment, ancestors: set[int]) -> bool:
        """A plain assignment in a block that holds the use (so it hides earlier ones)."""
        for binding in self._targets.get(id(assignment.node), ()):
            if binding.kind != "assign":
                continue
            block = self.document.block(binding.statement)
            if block is not None and self._within(block, ancestors):
                return True
        return False

    @staticmethod
    def _within(block: tuple[ast.AST, str], ancestors: set[int]) -> bool:
        """Whether the use lies in the block (an ``if`` body, not its ``else``)."""
        owner, field = block
        if id(owner) not in ancestors:
            return False
        return any(id(statement) in ancestors for statement in getattr(owner, field, ()))

    def _position(self, node: ast.AST | None) -> int:
        return self.document.order(node) if node is not None else -1

    def values_of(self, assignment: Assignment) -> list[Binding]:
        return list(self._targets.get(id(assignment.node), ()))

    def mutations_of(self, assignment: Assignment) -> list[Mutation]:
        return list(self._mutations.get(id(assignment), ()))

    def attribute_values(self, node: ast.Attribute) -> list[Binding]:
        """Values assigned to ``self.X`` (in any method) or ``X`` (in the class body)."""
        owner = self.document.enclosing_class(node)
        if owner is None:
            return []
        return list(self._attributes.get((id(owner), node.attr), ()))

    def returns_of(self, function: Function) -> list[ast.expr]:
        return self.document.returns_of(function)


def _self_attribute(node: ast.expr) -> bool:
    """``self.X`` or ``cls.X``."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in ("self", "cls")
    )


def _container(node: ast.expr) -> ast.Name | None:
    """The named object a change of ``node`` changes: ``groups`` of ``groups.append(...)``,
    ``groups[key].append(...)`` and ``groups.setdefault(key, []).append(...)``."""
    if isinstance(node, ast.Name):
        return node
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return node.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "setdefault"
        and isinstance(node.func.value, ast.Name)
    ):
        return node.func.value
    return None
