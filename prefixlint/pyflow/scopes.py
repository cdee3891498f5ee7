"""Python's name scopes over an ``ast`` tree: which assignments a name can refer to.

Module, class, function, lambda and comprehension scopes follow the language's rules: a class
body is not visible from the functions nested in it, ``global`` and ``nonlocal`` send a name's
assignments to the module or the enclosing function, a comprehension's targets are its own,
and its first iterable is evaluated outside it. Qualified names resolve through imports
(absolute, relative, ``as`` aliases, ``import a.b``) and builtins, spelled as libcst's
``QualifiedNameProvider`` spells them (``datetime.datetime.now``, ``builtins.set``,
``f.<locals>.x``), which is how the tables in :mod:`prefixlint.pyflow.tables` are keyed.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, field

MODULE, CLASS, FUNCTION, COMPREHENSION, BUILTIN = (
    "module",
    "class",
    "function",
    "comprehension",
    "builtin",
)
_BUILTIN_NAMES = frozenset(dir(builtins))


@dataclass(eq=False)
class Assignment:
    """``name`` is bound in ``scope`` by ``node``: an ``ast.Name`` target, an ``ast.arg``, a
    function or class definition, an import statement, an ``except ... as`` handler or a match
    pattern (``None`` for a builtin)."""

    name: str
    scope: Scope
    node: ast.AST | None

    def qualified_names(self, full_name: str) -> set[str]:
        """``full_name`` (which starts with this assignment's name) spelled from its origin."""
        if self.scope.kind == BUILTIN:
            return {f"builtins.{self.name}"}
        if isinstance(self.node, (ast.Import, ast.ImportFrom)):
            return _imported_names(self.node, full_name)
        prefix = self.scope.name_prefix
        return {f"{prefix}.{full_name}" if prefix else full_name}


def _imported_names(node: ast.Import | ast.ImportFrom, full_name: str) -> set[str]:
    module = ""
    if isinstance(node, ast.ImportFrom):
        module = "." * node.level + (node.module or "")
    found = set()
    for alias in node.names:
        parts = alias.name.split(".")
        for size in range(len(parts), 0, -1):
            real = as_name = ".".join(parts[:size])
            if module.endswith("."):
                real = f"{module}{real}"
            elif module:
                real = f"{module}.{real}"
            if alias.asname is not None:
                as_name = alias.asname
            if not full_name.startswith(as_name):
                continue
            rest = full_name.split(as_name, 1)[1]
            if rest and not rest.startswith("."):
                continue
            rest = rest.lstrip(".")
            found.add(f"{real}.{rest}" if rest else real)
            break  # the longest name of the alias that matches
    return found


@dataclass(eq=False)
class Scope:
    """One namespace; ``node`` is the module, class, function, lambda or comprehension."""

    kind: str
    node: ast.AST | None
    parent: Scope | None
    name_prefix: str = ""
    assignments: dict[str, list[Assignment]] = field(default_factory=dict)
    # Names declared ``global`` or ``nonlocal`` here, and the scope that holds them.
    overwrites: dict[str, Scope] = field(default_factory=dict)

    def child(self, kind: str, node: ast.AST, name: str | None) -> Scope:
        if kind == COMPREHENSION:
            parts = [self.name_prefix, "<comprehension>"]
        elif kind == CLASS:
            parts = [self.name_prefix, name or ""]
        else:
            parts = [self.name_prefix, name or "", "<locals>"]
        return Scope(kind, node, self, ".".join(p for p in parts if p))

    def record(self, name: str, node: ast.AST) -> None:
        target = self._target(name)
        target.assignments.setdefault(name, []).append(Assignment(name, target, node))

    def _target(self, name: str) -> Scope:
        scope: Scope = self
        while name in scope.overwrites:
            scope = scope.overwrites[name]
        return scope

    def __getitem__(self, name: str) -> list[Assignment]:
        """The assignments ``name`` refers to when read in this scope."""
        if self.kind == BUILTIN:
            return self._builtin(name)
        if name in self.overwrites:
            return self.overwrites[name][name]
        own = self.assignments.get(name)
        if own:
            return own
        return self.parent._from_child(name) if self.parent is not None else []

    def _builtin(self, name: str) -> list[Assignment]:
        """A builtin's one assignment, made on first lookup."""
        if name not in _BUILTIN_NAMES:
            return []
        found = self.assignments.get(name)
        if found is None:
            found = self.assignments[name] = [Assignment(name, self, None)]
        return found

    def _from_child(self, name: str) -> list[Assignment]:
        if self.kind == CLASS:  # a class body is not a scope for what is nested in it
            return self.parent._from_child(name) if self.parent is not None else []
        return self[name]

    def qualified_names(self, full_name: str | None, node: ast.AST | None = None) -> set[str]:
        """Qualified names of the dotted ``full_name`` read here (``node`` when it is the
        target that binds it)."""
        if full_name is None:
            return set()
        prefix: str | None = full_name
        assignments: list[Assignment] = []
        while prefix:
            assignments = self[prefix]
            if assignments:
                break
            cut = prefix.rfind(".")
            prefix = prefix[:cut] if cut >= 0 else None
        if node is not None:
            for assignment in assignments:
                if assignment.node is node:
                    return assignment.qualified_names(full_name)
        found: set[str] = set()
        for assignment in assignments:
            found |= assignment.qualified_names(full_name)
        return found


def builtin_scope() -> Scope:
    """The scope around a module: Python's builtins."""
    return Scope(BUILTIN, None, None)


def full_name(node: ast.AST) -> str | None:
    """The dotted name libcst reads for a node: ``a.b`` for an attribute, a call's callee, a
    subscript's value (an attribute of anything else is ``None.attr``, as libcst spells it)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{full_name(node.value)}.{node.attr}"
    if isinstance(node, ast.Call):
        return full_name(node.func)
    if isinstance(node, ast.Subscript):
        return full_name(node.value)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name
    return None


def dotted_parts(name: str) -> list[str]:
    """``a.b.c`` -> ``["a.b.c", "a.b", "a"]``: the names ``import a.b.c`` binds."""
    parts = name.split(".")
    return [".".join(parts[:size]) for size in range(len(parts), 0, -1)]
