"""Where names get their values: assignments, attributes, returns and in-place mutations.

One pass over the module builds the index; :class:`Bindings` then answers "which expressions
can this name or ``self.attribute`` hold here?" using libcst's scopes, keeping only the
assignments that can reach the use (a later plain assignment in an enclosing block hides the
earlier ones).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import libcst as cst
from libcst.metadata import Assignment, BaseAssignment

from prefixlint.pyflow.document import PythonDocument

MUTATING_METHODS = frozenset({"append", "extend", "insert", "sort", "update", "execute"})


@dataclass(frozen=True)
class Binding:
    """``target`` gets ``value``; ``kind`` is how (assign, augment, element, context)."""

    value: cst.BaseExpression
    kind: str
    statement: cst.CSTNode
    target: cst.CSTNode | None = None


@dataclass(frozen=True)
class Mutation:
    """``receiver.method(args)`` or ``function(receiver)`` changing a named object in place;
    ``method`` is ``"setitem"`` for ``receiver[key] = value`` (``call`` is then the statement)."""

    call: cst.Call | cst.Assign
    method: str
    receiver: cst.Name


class _Index:
    """Bindings of names and ``self`` attributes, from the document's nodes by type."""

    def __init__(self, document: PythonDocument) -> None:
        self.document = document
        self.targets: dict[int, list[Binding]] = {}
        self.attributes: dict[tuple[int, str], list[Binding]] = {}
        for node in document.nodes(cst.Assign):
            for target in node.targets:
                self._bind(target.target, node.value, "assign", node)
                self._bind_class_attribute(target.target, node.value, "assign", node)
        for annotated in document.nodes(cst.AnnAssign):
            if annotated.value is not None:
                self._bind(annotated.target, annotated.value, "assign", annotated)
                self._bind_class_attribute(annotated.target, annotated.value, "assign", annotated)
        for augmented in document.nodes(cst.AugAssign):
            self._bind(augmented.target, augmented.value, "augment", augmented)
        for named in document.nodes(cst.NamedExpr):
            self._bind(named.target, named.value, "assign", named)
        for loop in document.nodes(cst.For, cst.CompFor):
            self._bind(loop.target, loop.iter, "element", loop)
        for item in document.nodes(cst.WithItem):
            if item.asname is not None:
                self._bind(item.asname.name, item.item, "context", item)

    def _frame(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The innermost function or class around ``node``."""
        return next(
            (
                a
                for a in self.document.ancestors(node)
                if isinstance(a, (cst.FunctionDef, cst.ClassDef))
            ),
            None,
        )

    def _bind(
        self,
        target: cst.BaseExpression,
        value: cst.BaseExpression,
        kind: str,
        statement: cst.CSTNode,
    ) -> None:
        if isinstance(target, cst.Name):
            self.targets.setdefault(id(target), []).append(Binding(value, kind, statement))
        elif isinstance(target, cst.Attribute):
            owner = self.document.enclosing_class(statement)
            if (
                owner is not None
                and isinstance(target.value, cst.Name)
                and target.value.value in ("self", "cls")
            ):
                key = (id(owner), target.attr.value)
                binding = Binding(value, kind, statement, target)
                self.attributes.setdefault(key, []).append(binding)
        elif isinstance(target, (cst.Tuple, cst.List)):
            items = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            for index, element in enumerate(target.elements):
                if items is not None and len(items) == len(target.elements):
                    self._bind(element.value, items[index].value, kind, statement)
                else:
                    self._bind(element.value, value, "element", statement)

    def _bind_class_attribute(
        self,
        target: cst.BaseExpression,
        value: cst.BaseExpression,
        kind: str,
        statement: cst.CSTNode,
    ) -> None:
        """``X = ...`` directly in a class body is also readable as ``self.X``."""
        frame = self._frame(statement)
        if isinstance(frame, cst.ClassDef) and isinstance(target, cst.Name):
            binding = Binding(value, kind, statement, target)
            self.attributes.setdefault((id(frame), target.value), []).append(binding)


class Bindings:
    """Answers what a name, attribute or local function call can evaluate to."""

    def __init__(self, document: PythonDocument) -> None:
        self.document = document
        index = _Index(document)
        self._targets = index.targets
        self._attributes = index.attributes
        self.calls = document.nodes(cst.Call)

    @cached_property
    def _mutations(self) -> dict[int, list[Mutation]]:
        """In-place changes by the assignment (id) of the name they change."""
        found: dict[int, list[Mutation]] = {}
        stores = [
            Mutation(statement, "setitem", target.target.value)
            for statement in self.document.nodes(cst.Assign)
            for target in statement.targets
            if isinstance(target.target, cst.Subscript)
            and isinstance(target.target.value, cst.Name)
        ]
        for call in self.calls:
            stores += self._mutations_in(call)
        for mutation in stores:
            for assignment in self.assignments(mutation.receiver):
                found.setdefault(id(assignment), []).append(mutation)
        return found

    @staticmethod
    def _mutations_in(call: cst.Call) -> list[Mutation]:
        func = call.func
        found = []
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.attr.value in MUTATING_METHODS
        ):
            found.append(Mutation(call, func.attr.value, func.value))
        if call.args and isinstance(call.args[0].value, cst.Name):
            name = func.attr.value if isinstance(func, cst.Attribute) else None
            if isinstance(func, cst.Name):
                name = func.value
            if name in ("shuffle", "permutation"):
                found.append(Mutation(call, "shuffle", call.args[0].value))
        return found

    def assignments(self, name: cst.Name) -> list[BaseAssignment]:
        """Every assignment (libcst scope analysis) that ``name`` can refer to."""
        scope = self.document.scopes.get(name)
        if scope is None:
            return []
        try:
            return list(scope[name.value])
        except (KeyError, TypeError):
            return []

    def reaching(self, name: cst.Name) -> list[BaseAssignment]:
        """The assignments of ``name`` that can reach this use of it."""
        found = self.assignments(name)
        scope = self.document.scopes.get(name)
        local = [a for a in found if isinstance(a, Assignment) and a.scope is scope]
        if not local:
            return found
        position = self._position(name)
        ancestors = {id(a) for a in self.document.ancestors(name)}
        # ``x = x.strip()``: the target comes first in the tree, but the value is read before it.
        earlier = [
            a
            for a in local
            if self._position(a.node) < position
            and not any(id(b.statement) in ancestors for b in self._targets.get(id(a.node), ()))
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
        for binding in self._targets.get(id(assignment.node), ()):
            if binding.kind != "assign":
                continue
            line = self.document.parent(binding.statement)
            suite = self.document.parent(line) if line is not None else None
            if suite is not None and id(suite) in ancestors:
                return True
        return False

    def _position(self, node: cst.CSTNode) -> int:
        return self.document.order(node)

    def values_of(self, assignment: BaseAssignment) -> list[Binding]:
        return list(self._targets.get(id(getattr(assignment, "node", None)), ()))

    def mutations_of(self, assignment: BaseAssignment) -> list[Mutation]:
        return list(self._mutations.get(id(assignment), ()))

    def attribute_values(self, node: cst.Attribute) -> list[Binding]:
        """Values assigned to ``self.X`` (in any method) or ``X`` (in the class body)."""
        owner = self.document.enclosing_class(node)
        if owner is None:
            return []
        return list(self._attributes.get((id(owner), node.attr.value), ()))

    def returns_of(self, function: cst.FunctionDef) -> list[cst.BaseExpression]:
        return self.document.returns_of(function)

    def local_function(self, func: cst.BaseExpression) -> cst.FunctionDef | None:
        """The function defined in this file that ``func(...)`` calls, if any."""
        if isinstance(func, cst.Name):
            for assignment in self.assignments(func):
                node = getattr(assignment, "node", None)
                if isinstance(node, cst.FunctionDef):
                    return node
            return None
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and func.value.value in ("self", "cls")
        ):
            owner = self.document.enclosing_class(func)
            if owner is not None:
                for statement in owner.body.body:
                    if (
                        isinstance(statement, cst.FunctionDef)
                        and statement.name.value == func.attr.value
                    ):
                        return statement
        return None
