"""Follow a value back to what makes it volatile or unordered.

:meth:`Flow.origins` explains an expression: through f-strings, ``.format``, ``%``, ``+``,
``join``, ``string.Template``, Jinja ``render``, containers, assignments (local, module-level,
class attributes) and the return values of functions defined in the same file, with their
parameters bound to the call's arguments. Names resolve through libcst's scope and qualified
name analysis, so ``from datetime import datetime as dt; dt.now()`` is ``datetime.now``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import cast

import libcst as cst
from libcst.metadata import Assignment, BaseAssignment

from prefixlint import codes, vocabulary
from prefixlint.codes import LAYOUT
from prefixlint.pyflow import tables as t
from prefixlint.pyflow.bindings import Bindings, Mutation
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.origins import (
    Origin,
    coarsened,
    consumed,
    format_granularity,
    keyed,
    merge,
    not_tail,
    opaque,
    read_at,
    read_out,
    stepped,
    substituted,
    without_order,
)
from prefixlint.pyflow.sinks import Sink
from prefixlint.pyflow.sql import is_unordered_query
from prefixlint.pyflow.templates import template_fields
from prefixlint.pyflow.whitespace import whitespace_drift

# Methods of a path that list what lies under it.
_PATH_LISTINGS = frozenset({"iterdir", "rglob"})
TAIL_SLACK = 40  # characters of static text that may follow a value that still ends its text
NAME_CODES = frozenset({codes.TIMESTAMP, codes.UNIQUE_ID, codes.PER_USER, codes.ENVIRONMENT})


@dataclass(eq=False)
class Env:
    """Where an expression is explained: as is, or inside ``function``'s summary.

    In a summary the function's parameters stand for whatever a call passes (``PARAMETER``
    origins), so each function is explained once and every call substitutes its arguments.
    """

    function: cst.FunctionDef | None = None


ROOT = Env()


def _string_value(node: cst.CSTNode) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


class Flow:
    """Explains expressions of one document; results are memoised per (expression, env)."""

    def __init__(self, document: PythonDocument, bindings: Bindings) -> None:
        self.document = document
        self.bindings = bindings
        self.visited: set[int] = set()
        self.roots: dict[int, Sink | None] = {}
        self.root: Sink | None = None
        self._memo: dict[tuple[int, int], tuple[Origin, ...]] = {}
        self._summaries: dict[int, Env] = {}
        self._active: set[tuple[int, int]] = set()

    @cached_property
    def _import_aliases(self) -> frozenset[str]:
        """Names bound by ``import ... as NAME`` or ``from ... import x as NAME``."""
        found = set()
        for statement in self.document.nodes(cst.Import, cst.ImportFrom):
            if isinstance(statement.names, cst.ImportStar):
                continue
            for alias in statement.names:
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    found.add(alias.asname.name.value)
        return frozenset(found)

    @cached_property
    def possible(self) -> bool:
        """Whether anything in the file can start a volatile, unordered or per-request value.

        A syntactic test over the document's nodes: a call or attribute spelled like a source,
        a set display, or a name the vocabulary reads as volatile or as request input. When it
        is false no flow can find an origin, so scopes and qualified names are never resolved.
        """
        document = self.document
        if document.nodes(cst.Set, cst.SetComp):
            return True
        for call in document.nodes(cst.Call):
            leaf, root = _spelling(call.func)
            if leaf in t.SOURCE_LEAVES or root in t.SOURCE_ROOTS:
                return True
            if leaf in self._import_aliases or root in self._import_aliases:
                return True
        if any(
            a.attr.value in ("environ", "argv", "linesep") for a in document.nodes(cst.Attribute)
        ):
            return True
        input_names = document.option(LAYOUT, "input-names", ())
        spellings = {n.value for n in document.nodes(cst.Name)}
        spellings |= {d for d in map(_dotted_name, document.nodes(cst.Attribute)) if d}
        for string in document.nodes(cst.SimpleString):
            value = string.evaluated_value
            if not isinstance(value, str):
                continue
            if len(string.value) < 40:
                spellings.add(value)
            if "{" in value:
                spellings.update(template_fields(value))
        if self._drift_possible:
            return True
        return any(
            vocabulary.classify_name(name, document.extra_names) in NAME_CODES
            or vocabulary.is_request_input(name, input_names)
            for name in spellings
        )

    @cached_property
    def _defined_methods(self) -> dict[str, cst.FunctionDef]:
        """Methods defined once in this file, by name (``def list_tools(self)`` of a wrapper
        class): a call of one is explained by its body, not taken for the library method."""
        found: dict[str, list[cst.FunctionDef]] = {}
        for function in self.document.nodes(cst.FunctionDef):
            if self.document.enclosing_class(function) is not None:
                found.setdefault(function.name.value, []).append(function)
        return {name: defs[0] for name, defs in found.items() if len(defs) == 1}

    @cached_property
    def _drift_possible(self) -> bool:
        """An if-expression, or assignments to one name, of literals differing in whitespace."""
        document = self.document
        if any(whitespace_drift([n.body, n.orelse]) for n in document.nodes(cst.IfExp)):
            return True
        by_name: dict[str, list[cst.BaseExpression]] = {}
        for statement in document.nodes(cst.Assign):
            for target in statement.targets:
                if isinstance(target.target, cst.Name):
                    by_name.setdefault(target.target.value, []).append(statement.value)
        return any(len(v) > 1 and whitespace_drift(v) for v in by_name.values())

    def _names(self, node: cst.CSTNode) -> frozenset[str]:
        """Qualified names of ``node``, looked up only when its spelling could be in a table."""
        root = node
        while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
            root = root.func if isinstance(root, cst.Call) else root.value
        leaf = node.attr.value if isinstance(node, cst.Attribute) else None
        if isinstance(node, cst.Name):
            leaf = node.value
        root_name = root.value if isinstance(root, cst.Name) else None
        if (
            leaf in t.KNOWN_LEAVES
            or root_name in t.KNOWN_ROOTS
            or leaf in self._import_aliases
            or root_name in self._import_aliases
        ):
            return self.document.qualified_names(node)
        return frozenset()

    @cached_property
    def _seeded(self) -> bool:
        """Whether the module seeds the shared random generator with a value."""
        return any(
            call.args and self._names(call.func) & t.SEEDING_CALLS and self._fixed_seed(call)
            for call in self.bindings.calls
            if _callee_name(call) == "seed"
        )

    def _fixed_seed(self, call: cst.Call) -> bool:
        """Seeded the same way in every process: not by ``hash(str)``, which Python salts per
        process, nor by the clock."""
        seed = call.args[0].value
        return not any(
            isinstance(node, cst.Call) and _callee_name(node) in _PER_PROCESS_SEEDS
            for node in [seed, *self._calls_in(seed)]
        )

    @staticmethod
    def _calls_in(node: cst.CSTNode) -> list[cst.Call]:
        found = []
        stack = list(node.children)
        while stack:
            child = stack.pop()
            if isinstance(child, cst.Call):
                found.append(child)
            stack.extend(child.children)
        return found

    def origins(self, node: cst.CSTNode, env: Env = ROOT) -> tuple[Origin, ...]:
        key = (id(node), id(env))
        if key in self._memo:
            return self._memo[key]
        self.roots.setdefault(id(node), self.root)
        if key in self._active:
            return ()
        self._active.add(key)
        try:
            result = self._explain(node, env)
        finally:
            self._active.discard(key)
        self._memo[key] = result
        return result

    # -- dispatch ---------------------------------------------------------------------------

    def _explain(self, node: cst.CSTNode, env: Env) -> tuple[Origin, ...]:
        handler = getattr(self, "_" + type(node).__name__, None)
        return handler(node, env) if handler else ()

    def _here(self, node: cst.CSTNode) -> str:
        return self.document.where(node)

    def _label(self, node: cst.CSTNode) -> str:
        text = " ".join(self.document.code(node).split())
        if len(text) <= 40:
            return text
        if isinstance(node, cst.Call):
            return " ".join(self.document.code(node.func).split()) + "(...)"
        return text[:37] + "..."

    def _all(self, nodes: Iterable[cst.CSTNode | None], env: Env) -> tuple[Origin, ...]:
        return merge(*(self.origins(n, env) for n in nodes if n is not None))

    # -- literals and containers ------------------------------------------------------------

    def _FormattedString(self, node: cst.FormattedString, env: Env) -> tuple[Origin, ...]:
        parts = node.parts
        found = []
        for index, part in enumerate(parts):
            if not isinstance(part, cst.FormattedStringExpression):
                continue
            origins = consumed(self.origins(part.expression, env), part.expression, exact=False)
            spec = self._static_spec(part)
            if spec is not None:
                origins = coarsened(origins, format_granularity(spec))
            if self._followed(parts[index + 1 :]):
                origins = not_tail(origins)
            found.append(stepped(origins, f"f-string {self._here(node)}"))
        return merge(*found)

    @staticmethod
    def _static_spec(part: cst.FormattedStringExpression) -> str | None:
        if not part.format_spec:
            return None
        texts = [p for p in part.format_spec if isinstance(p, cst.FormattedStringText)]
        if len(texts) == len(part.format_spec):
            return "".join(p.value for p in texts)
        return None

    @staticmethod
    def _followed(rest: Sequence[cst.BaseFormattedStringContent]) -> bool:
        static = 0
        for part in rest:
            if isinstance(part, cst.FormattedStringExpression):
                return True
            if isinstance(part, cst.FormattedStringText):
                static += len(part.value.strip())
        return static > TAIL_SLACK

    def _SimpleString(self, node: cst.SimpleString, env: Env) -> tuple[Origin, ...]:
        """A template's fields named like a volatile value (``{current_date}``, ``{user_name}``)."""
        text = _string_value(node)
        if not text or "{" not in text:
            return ()
        found = []
        for field in template_fields(text):
            code = vocabulary.classify_name(field, self.document.extra_names)
            if code in NAME_CODES:
                granularity = t.DAILY if _daily_name(field) else t.PROCESS
                if code == codes.TIMESTAMP and not _daily_name(field):
                    granularity = t.INSTANT
                found.append(Origin(code, node, f"`{{{field}}}`", granularity, within=f"{{{field}"))
        return tuple(found)

    def _ConcatenatedString(self, node: cst.ConcatenatedString, env: Env) -> tuple[Origin, ...]:
        right = self.origins(node.right, env)
        left = self.origins(node.left, env)
        if right or len(_string_value(node.right) or "") > TAIL_SLACK:
            left = not_tail(left)
        return merge(left, right)

    def _List(self, node: cst.List | cst.Tuple, env: Env) -> tuple[Origin, ...]:
        found = []
        for index, element in enumerate(node.elements):
            origins = self.origins(element.value, env)
            found.append(not_tail(origins) if index < len(node.elements) - 1 else origins)
        return merge(*found)

    _Tuple = _List

    def _Set(self, node: cst.Set, env: Env) -> tuple[Origin, ...]:
        inner = self._all((e.value for e in node.elements), env)
        if len(node.elements) < 2:
            return inner
        order = Origin(codes.UNORDERED, node, "set literal", sort_by=self._literal_sort(node))
        return merge((order,), inner)

    @staticmethod
    def _literal_sort(node: cst.Set) -> str:
        kinds = set()
        for element in node.elements:
            value = element.value
            if isinstance(value, cst.SimpleString):
                kinds.add("bytes" if "b" in value.prefix.lower() else "str")
            elif isinstance(value, (cst.Integer, cst.Float)):
                kinds.add("number")
            else:
                return ""
        return "plain" if len(kinds) == 1 else ""

    def _SetComp(self, node: cst.SetComp, env: Env) -> tuple[Origin, ...]:
        order = Origin(codes.UNORDERED, node, "set comprehension")
        return merge((order,), self._comprehension(node, env))

    def _comprehension(
        self, node: cst.ListComp | cst.SetComp | cst.GeneratorExp | cst.DictComp, env: Env
    ) -> tuple[Origin, ...]:
        elements = node.elt if not isinstance(node, cst.DictComp) else node.value
        found = [not_tail(self.origins(elements, env))]
        clause: cst.CompFor | None = node.for_in
        while clause is not None:
            found.append(consumed(self.origins(clause.iter, env), clause.iter, exact=True))
            clause = clause.inner_for_in
        return merge(*found)

    _ListComp = _comprehension
    _GeneratorExp = _comprehension
    _DictComp = _comprehension

    def _Dict(self, node: cst.Dict, env: Env) -> tuple[Origin, ...]:
        found = []
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                found.append(self.origins(element.key, env))
                key = _string_value(element.key)
                if key:
                    found.append(keyed(self.origins(element.value, env), key))
                    continue
            found.append(self.origins(element.value, env))
        return not_tail(merge(*found))

    def _IfExp(self, node: cst.IfExp, env: Env) -> tuple[Origin, ...]:
        found = self._all((node.body, node.orelse), env)
        if whitespace_drift([node.body, node.orelse]):
            label = f"{self._label(node.body)} or {self._label(node.orelse)}"
            return merge((Origin(codes.WHITESPACE_DRIFT, node, label),), found)
        return found

    def _BooleanOperation(self, node: cst.BooleanOperation, env: Env) -> tuple[Origin, ...]:
        return self._all((node.left, node.right), env)

    def _Await(self, node: cst.Await, env: Env) -> tuple[Origin, ...]:
        return self.origins(node.expression, env)

    def _NamedExpr(self, node: cst.NamedExpr, env: Env) -> tuple[Origin, ...]:
        return self.origins(node.value, env)

    def _StarredElement(self, node: cst.StarredElement, env: Env) -> tuple[Origin, ...]:
        return self.origins(node.value, env)

    def _BinaryOperation(self, node: cst.BinaryOperation, env: Env) -> tuple[Origin, ...]:
        operator = type(node.operator).__name__
        left = self.origins(node.left, env)
        right = self.origins(node.right, env)
        if operator == "Add":
            if right or len(_string_value(node.right) or "") > TAIL_SLACK:
                left = not_tail(left)
            return stepped(merge(left, right), f"concatenation {self._here(node)}")
        if operator == "Modulo" and _string_value(node.left) is not None:
            return stepped(merge(left, not_tail(right)), f"%-formatting {self._here(node)}")
        if operator in t.SET_OPERATORS and any(o.code == codes.UNORDERED for o in left + right):
            order = Origin(codes.UNORDERED, node, "set operation")
            return merge((order,), without_order(left + right))
        return without_order(merge(left, right))

    # -- names and attributes ---------------------------------------------------------------

    def _Name(self, node: cst.Name, env: Env) -> tuple[Origin, ...]:
        found: list[tuple[Origin, ...]] = []
        resolved = False
        for assignment in self.bindings.reaching(node):
            target = getattr(assignment, "node", None)
            if isinstance(target, cst.Param):
                found.append(self._parameter(node, assignment, env))
                resolved = True
            elif isinstance(assignment, Assignment) and isinstance(target, cst.Name):
                resolved = True
                self.visited.add(id(target))
                found.append(read_at(self._assigned(assignment, env), node))
            elif isinstance(target, (cst.FunctionDef, cst.ClassDef, cst.Import, cst.ImportFrom)):
                resolved = True
        if not resolved:
            return ()
        return merge(*found, self._drifting_assignments(node))

    def _drifting_assignments(self, node: cst.Name) -> tuple[Origin, ...]:
        """``sep = "\\n\\n"`` on one path and ``sep = "\\n"`` on another, read here."""
        values = [
            b.value
            for a in self.bindings.reaching(node)
            for b in self.bindings.values_of(a)
            if b.kind == "assign"
        ]
        if len(values) < 2 or not whitespace_drift(values):
            return ()
        last = max(values, key=self.document.order)
        label = f"`{node.value}` = {self._label(last)}"
        return (Origin(codes.WHITESPACE_DRIFT, last, label),)

    def _assigned(self, assignment: BaseAssignment, env: Env) -> tuple[Origin, ...]:
        found = []
        for binding in self.bindings.values_of(assignment):
            origins = self.origins(binding.value, env)
            if binding.kind == "element":
                origins = without_order(origins)
            found.append(origins)
        is_sorted = False
        for mutation in self.bindings.mutations_of(assignment):
            found.append(self._mutation(mutation, env))
            is_sorted |= mutation.method == "sort"
        origins = merge(*found)
        return without_order(origins) if is_sorted else origins

    def _mutation(self, mutation: Mutation, env: Env) -> tuple[Origin, ...]:
        call = mutation.call
        if isinstance(call, cst.Assign):  # "setitem", d[key] = value: the value, in loop order
            return merge(self.origins(call.value, env), self._loop_order(call, env))
        if mutation.method in ("append", "extend", "insert", "update"):
            values = call.args[1:] if mutation.method == "insert" else call.args
            return merge(self._all((a.value for a in values), env), self._loop_order(call, env))
        if mutation.method == "shuffle" and self._unseeded_selector(call):
            return (Origin(codes.RANDOM_SELECTION, call, self._label(call)),)
        query = self._query(call)
        if mutation.method == "execute" and query is not None:
            return (Origin(codes.UNORDERED, query, "query without an order"),)
        return ()

    def _loop_order(self, call: cst.CSTNode, env: Env) -> tuple[Origin, ...]:
        """Items appended inside ``for x in <unordered>`` come out in that order."""
        for ancestor in self.document.ancestors(call):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                break
            if isinstance(ancestor, cst.For):
                order = [o for o in self.origins(ancestor.iter, env) if o.code == codes.UNORDERED]
                if order:
                    return consumed(order, ancestor.iter, exact=True)
        return ()

    def _parameter(
        self, node: cst.Name, assignment: BaseAssignment, env: Env
    ) -> tuple[Origin, ...]:
        if env.function is not None:
            function_scope = self.document.scopes.get(env.function.body)
            if assignment.scope is function_scope:
                return (Origin(t.PARAMETER, node, node.value),)
        return self._named_value(node, node.value)

    def _named_value(self, node: cst.CSTNode, name: str) -> tuple[Origin, ...]:
        """A value known only by its name (a parameter, an attribute of one, a dict key)."""
        found = [Origin(t.REQUEST_INPUT, node, name)]
        code = vocabulary.classify_name(name, self.document.extra_names)
        if code in NAME_CODES:
            found.append(Origin(code, node, f"`{name}`", granularity=t.PROCESS))
        return tuple(found)

    def _Attribute(self, node: cst.Attribute, env: Env) -> tuple[Origin, ...]:
        for name in self._names(node):
            if name in t.VOLATILE_ATTRIBUTES:
                code, granularity = t.VOLATILE_ATTRIBUTES[name]
                return (Origin(code, node, self._label(node), granularity),)
        if isinstance(node.value, cst.Name) and node.value.value in ("self", "cls"):
            values = self.bindings.attribute_values(node)
            if values:
                self.visited.update(id(b.target) for b in values)
                return merge(*(self.origins(b.value, env) for b in values))
            return self._named_value(node, node.attr.value)
        receiver = self.origins(node.value, env)
        if node.attr.value in t.DAY_ATTRIBUTES:
            receiver = coarsened(receiver, t.DAILY)
        if all(o.code == t.REQUEST_INPUT for o in receiver):
            dotted = self._dotted(node)
            if dotted and receiver:
                return merge(receiver, self._named_value(node, dotted)[1:])
        return receiver

    def _dotted(self, node: cst.CSTNode) -> str | None:
        if isinstance(node, cst.Name):
            return node.value
        if isinstance(node, cst.Attribute):
            base = self._dotted(node.value)
            return f"{base}.{node.attr.value}" if base else None
        return None

    def _Subscript(self, node: cst.Subscript, env: Env) -> tuple[Origin, ...]:
        code: str | None
        for name in self._names(node.value):
            if name in t.VOLATILE_ATTRIBUTES:
                code, granularity = t.VOLATILE_ATTRIBUTES[name]
                return (Origin(code, node, self._label(node), granularity),)
        base = self.origins(node.value, env)
        key = None
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            key = _string_value(node.slice[0].slice.value)
        if key:
            base = read_out(base, key)
        if key and all(o.code == t.REQUEST_INPUT for o in base):
            code = vocabulary.classify_name(key, self.document.extra_names)
            if code in NAME_CODES:
                return merge(base, (Origin(code, node, self._label(node), t.PROCESS),))
        return base

    # -- calls ------------------------------------------------------------------------------

    def _Call(self, node: cst.Call, env: Env) -> tuple[Origin, ...]:
        names = self._names(node.func)
        for name in names:
            known = self._known_call(name, node, env)
            if known is not None:
                return known
        function = self.bindings.local_function(node.func)
        if function is not None:
            return self._local_call(function, node, env)
        if isinstance(node.func, cst.Attribute):
            return self._method(node, env)
        return opaque(without_order(self._arguments(node, env)))

    def _arguments(self, node: cst.Call, env: Env) -> tuple[Origin, ...]:
        return self._all((a.value for a in node.args), env)

    def _known_call(self, name: str, node: cst.Call, env: Env) -> tuple[Origin, ...] | None:
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if name in t.VOLATILE_CALLS:
            code, granularity = t.VOLATILE_CALLS[name]
            pure_from = t.PURE_WITH_ARGUMENTS.get(name)
            if pure_from is not None and len(positional) >= pure_from:
                return self._arguments(node, env)
            if code == codes.UNIQUE_ID and name.startswith(("random.", "numpy.")) and self._seeded:
                return ()
            if name == "time.strftime" and positional:
                spec = _string_value(positional[0].value)
                granularity = format_granularity(spec) if spec is not None else granularity
            return (Origin(code, node, self._label(node), granularity),)
        module, _, member = name.partition(".")
        if module in t.VOLATILE_MODULES and member and "." not in member:
            code, granularity = t.VOLATILE_MODULES[module]
            return (Origin(code, node, self._label(node), granularity),)
        if name in t.RANDOM_SELECTORS:
            inner = self._arguments(node, env)
            if self._seeded:
                return inner
            return merge((Origin(codes.RANDOM_SELECTION, node, self._label(node)),), inner)
        if name in t.FIELD_CALLS:
            return self._field_default(node, env)
        if name in t.SUBPROCESS_CALLS:
            if _runs_git(node):
                return (Origin(codes.ENVIRONMENT, node, self._label(node), t.PROCESS),)
            return ()
        if name in t.UNORDERED_CALLS:
            return self._unordered_call(name, node, env)
        if name == "json.dumps":
            return self._json_dumps(node, env)
        if name == "json.loads":  # parsed back into objects: the text's key order is gone
            return tuple(o for o in self._arguments(node, env) if o.code != codes.KEY_ORDER)
        loaded = positional and self._loaded_mapping(positional[0].value)
        if name in ("builtins.str", "builtins.repr") and loaded:
            order = Origin(codes.KEY_ORDER, node, self._label(node))
            return merge((order,), self._arguments(node, env))
        if name in t.ORDER_INSENSITIVE:
            return without_order(self._arguments(node, env))
        if name in t.ORDER_PRESERVING:
            if positional:
                # str() and repr() write a collection out in its order, with its brackets.
                exact = name not in ("builtins.str", "builtins.repr")
                first = positional[0].value
                rest = self._all((a.value for a in node.args[1:]), env)
                return merge(consumed(self.origins(first, env), first, exact=exact), rest)
            return self._arguments(node, env)
        if name in t.RANDOM_CONSTRUCTORS:
            return ()
        return None

    def _unordered_call(self, name: str, node: cst.Call, env: Env) -> tuple[Origin, ...]:
        inner = self._arguments(node, env)
        if name in ("builtins.set", "builtins.frozenset"):
            if not node.args:
                return inner
            sort_by = self._element_sort(node.args[0].value, env)
            order = Origin(codes.UNORDERED, node, self._label(node), sort_by=sort_by)
            return merge((order,), without_order(inner))
        order = Origin(codes.UNORDERED, node, self._label(node), sort_by=t.UNORDERED_CALLS[name])
        return merge((order,), inner)

    def _element_sort(self, source: cst.BaseExpression, env: Env) -> str:
        """How the elements of ``set(source)`` sort, when the source says."""
        if isinstance(source, (cst.List, cst.Tuple)):
            return self._literal_sort(cst.Set(elements=source.elements)) if source.elements else ""
        kinds = {o.sort_by for o in self.origins(source, env) if o.code == codes.UNORDERED}
        return kinds.pop() if len(kinds) == 1 else ""

    def _json_dumps(self, node: cst.Call, env: Env) -> tuple[Origin, ...]:
        payload = next(
            (a.value for a in node.args if a.keyword is None or a.keyword.value == "obj"), None
        )
        inner = self.origins(payload, env) if payload is not None else ()
        if any(
            a.keyword is not None
            and a.keyword.value == "sort_keys"
            and isinstance(a.value, cst.Name)
            and a.value.value == "True"
            for a in node.args
        ):
            return inner
        if payload is None or self._fixed_literal(payload):
            return inner
        return merge((Origin(codes.KEY_ORDER, node, self._label(node)),), inner)

    def _fixed_literal(self, node: cst.BaseExpression, depth: int = 0) -> bool:
        """A value built in the same key order every time, so it serialises the same way.

        Displays with literal keys, comprehensions (their order is their input's, which the
        unordered-collection rule judges) and JSON decoded again (``json.loads`` keeps the
        text's order), directly or through a name or ``self`` attribute bound only to those.
        """
        if depth > 3:
            return False
        if isinstance(node, cst.Name) and depth == 0:
            values = []
            for assignment in self.bindings.reaching(node):
                if self.bindings.mutations_of(assignment):
                    return False
                values += [b.value for b in self.bindings.values_of(assignment)]
            return bool(values) and all(self._fixed_literal(v, depth + 1) for v in values)
        if isinstance(node, cst.Attribute) and depth == 0:
            values = [b.value for b in self.bindings.attribute_values(node)]
            return bool(values) and all(self._fixed_literal(v, depth + 1) for v in values)
        if isinstance(node, cst.Dict):
            return all(
                isinstance(e, cst.DictElement)
                and _string_value(e.key) is not None
                and self._fixed_value(e.value, depth)
                for e in node.elements
            )
        if isinstance(node, (cst.List, cst.Tuple)):
            return all(self._fixed_value(e.value, depth) for e in node.elements)
        if isinstance(node, (cst.DictComp, cst.ListComp)):
            return True
        return isinstance(node, cst.Call) and "json.loads" in self._names(node.func)

    def _fixed_value(self, node: cst.BaseExpression, depth: int) -> bool:
        if isinstance(node, (cst.Dict, cst.List, cst.Tuple)):
            return self._fixed_literal(node, depth + 1)
        return not isinstance(node, (cst.Set, cst.SetComp))

    def _loaded_mapping(self, node: cst.BaseExpression) -> bool:
        """A dict decoded from JSON text, whose key order is whatever the producer sent."""
        candidates = [node]
        if isinstance(node, cst.Name):
            candidates = [
                b.value for a in self.bindings.reaching(node) for b in self.bindings.values_of(a)
            ]
        for value in candidates:
            if isinstance(value, cst.Await):
                value = value.expression
            if not isinstance(value, cst.Call):
                continue
            if "json.loads" in self._names(value.func):
                return True
            if isinstance(value.func, cst.Attribute) and value.func.attr.value == "json":
                return True
        return False

    def _local_call(
        self, function: cst.FunctionDef, node: cst.Call, env: Env
    ) -> tuple[Origin, ...]:
        self.visited.add(id(function))
        summary_env = self._summaries.setdefault(id(function), Env(function))
        summary = merge(
            *(self.origins(value, summary_env) for value in self.bindings.returns_of(function))
        )
        bound = self._bind_arguments(function, node, env)
        found: list[tuple[Origin, ...]] = []
        for origin in summary:
            if origin.code != t.PARAMETER:
                found.append((origin,))
            elif origin.label in bound:
                argument, argument_env = bound[origin.label]
                found.append(substituted(origin, self.origins(argument, argument_env)))
        return stepped(merge(*found), f"return value of {function.name.value}()", boundary=True)

    @staticmethod
    def _bind_arguments(
        function: cst.FunctionDef, node: cst.Call, env: Env
    ) -> dict[str, tuple[cst.BaseExpression, Env]]:
        params = list(function.params.posonly_params) + list(function.params.params)
        if (
            isinstance(node.func, cst.Attribute)
            and params
            and params[0].name.value
            in (
                "self",
                "cls",
            )
        ):
            params = params[1:]
        bound: dict[str, tuple[cst.BaseExpression, Env]] = {}
        positional = [a for a in node.args if a.keyword is None and not a.star]
        for param, argument in zip(params, positional, strict=False):
            bound[param.name.value] = (argument.value, env)
        for argument in node.args:
            if argument.keyword is not None:
                bound[argument.keyword.value] = (argument.value, env)
        every = params + list(function.params.kwonly_params)
        for param in every:
            if param.name.value not in bound and param.default is not None:
                bound[param.name.value] = (param.default, ROOT)
        return bound

    def _method(self, node: cst.Call, env: Env) -> tuple[Origin, ...]:
        func = cast(cst.Attribute, node.func)  # _Call dispatches only attribute calls here
        name = func.attr.value
        receiver = self.origins(func.value, env)
        arguments = self._arguments(node, env)
        if name in t.UNORDERED_METHODS:
            own = self._defined_methods.get(name)
            if own is not None and own is not self.document.enclosing_function(node):
                return self._local_call(own, node, env)
            order = Origin(
                codes.UNORDERED, node, self._label(node), sort_by=t.UNORDERED_METHODS[name]
            )
            # Paths found under a directory spell out the directory (``root.rglob(...)``).
            under = without_order(receiver) if name in _PATH_LISTINGS else ()
            return merge((order,), under)
        if name == "glob" and len(node.args) == 1:
            order = Origin(codes.UNORDERED, node, self._label(node), sort_by="plain")
            return merge((order,), without_order(receiver))
        if name in t.SELECTOR_METHODS and self._unseeded_selector(node):
            order = Origin(codes.RANDOM_SELECTION, node, self._label(node))
            return merge((order,), arguments)
        if name in t.SET_METHODS and any(o.code == codes.UNORDERED for o in receiver):
            order = Origin(codes.UNORDERED, node, self._label(node))
            return merge((order,), without_order(receiver + arguments))
        if name in t.DAY_METHODS:
            return coarsened(receiver, t.DAILY)
        if name == "strftime" and node.args:
            spec = _string_value(node.args[0].value)
            if spec is not None:
                return coarsened(receiver, format_granularity(spec))
            return receiver
        queries = ("execute", "fetch", "fetchrow", "fetchall")
        query = self._query(node) if name in queries else None
        if query is not None:
            return (Origin(codes.UNORDERED, query, "query without an order"),)
        if name == "join" and len(node.args) == 1:
            items = node.args[0].value
            arguments = consumed(self.origins(items, env), items, exact=True, strings=True)
        if name in t.FILLING_METHODS:
            receiver = tuple(o for o in receiver if not o.within)
            arguments = merge(arguments, self._named_arguments(node, env))
        if name in t.ORDER_PRESERVING_METHODS:
            step = {
                "format": "str.format",
                "join": "join",
                "render": "Template.render",
                "replace": "str.replace",
            }.get(name, name if name in ("substitute", "safe_substitute") else None)
            # A field or a replaced tag can sit anywhere in the text, not only at its end.
            placed = name in ("format", "replace")
            found = merge(receiver, not_tail(arguments) if placed else arguments)
            return stepped(found, f"{step} {self._here(node)}") if step else found
        if name == "sort":
            return ()
        return without_order(merge(receiver, opaque(arguments)))

    def _field_default(self, node: cst.Call, env: Env) -> tuple[Origin, ...]:
        """A declared field's value is its default, never its metadata or description (those
        describe the field to whoever fills it in): ``field(default=x, metadata=...)``,
        ``Field(x, description=...)``."""
        default = next(
            (a.value for a in node.args if a.keyword is not None and a.keyword.value == "default"),
            None,
        )
        positional = [a for a in node.args if a.keyword is None and not a.star]
        if default is None and positional:
            default = positional[0].value
        return self.origins(default, env) if default is not None else ()

    def _named_arguments(self, node: cst.Call, env: Env) -> tuple[Origin, ...]:
        """The first keyword that names a volatile value, for values of unknown provenance:
        ``PROMPT.format(user_name=ctx.name, user_email=ctx.email)`` fills in a per-user value."""
        named = []
        for argument in node.args:
            keyword = argument.keyword.value if argument.keyword is not None else None
            code = vocabulary.classify_name(keyword, self.document.extra_names) if keyword else None
            value = argument.value
            if code not in NAME_CODES or _string_value(value) is not None:
                continue
            unknown = (t.REQUEST_INPUT, t.PARAMETER)
            if all(o.code in unknown for o in self.origins(value, env)):
                named.append((keyword, code, value))
        if not named:
            return ()
        keyword, code, value = named[0]
        label = ", ".join(f"`{k}`" for k, _, _ in named)
        return (Origin(code, value, label, t.PROCESS),)

    def _query(self, call: cst.Call) -> cst.BaseExpression | None:
        """The text of an unordered query that ``call`` runs (a literal, or a name bound to one)."""
        if not call.args:
            return None
        query = call.args[0].value
        if isinstance(query, cst.Name):
            values = [
                b.value for a in self.bindings.reaching(query) for b in self.bindings.values_of(a)
            ]
            query = values[0] if len(values) == 1 else query
        return query if is_unordered_query(query) else None

    def _unseeded_selector(self, call: cst.Call) -> bool:
        """Whether ``call`` draws from the shared generator or from one built without a seed."""
        func = call.func
        names = self._names(func)
        if names & t.RANDOM_SELECTORS:
            return not self._seeded
        if not isinstance(func, cst.Attribute):
            return False
        receiver = func.value
        makers = [receiver]
        if isinstance(receiver, cst.Name):
            makers = [
                b.value
                for a in self.bindings.reaching(receiver)
                for b in self.bindings.values_of(a)
            ]
        constructed = [
            m
            for m in makers
            if isinstance(m, cst.Call) and self._names(m.func) & t.RANDOM_CONSTRUCTORS
        ]
        return bool(constructed) and any(not m.args or not self._fixed_seed(m) for m in constructed)


# Seeds that differ between processes: salted string hashes, the clock, the process id.
_PER_PROCESS_SEEDS = frozenset({"hash", "time", "time_ns", "getpid", "urandom", "now"})


def _daily_name(name: str) -> bool:
    words = vocabulary.split_words(name)
    return bool({"date", "day", "today"} & set(words)) and not {"time", "datetime"} & set(words)


def _runs_git(call: cst.Call) -> bool:
    if not call.args:
        return False
    command = call.args[0].value
    if isinstance(command, (cst.List, cst.Tuple)) and command.elements:
        first = _string_value(command.elements[0].value)
        return first is not None and first.rsplit("/", 1)[-1] == "git"
    text = _string_value(command)
    return text is not None and text.lstrip().split(" ", 1)[0] == "git"


def _callee_name(call: cst.Call) -> str | None:
    func = call.func
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else None


def _spelling(func: cst.BaseExpression) -> tuple[str | None, str | None]:
    """The last and the first name of a callee (``a.b.c`` -> ``("c", "a")``)."""
    leaf = func.attr.value if isinstance(func, cst.Attribute) else None
    if isinstance(func, cst.Name):
        leaf = func.value
    root = func
    while isinstance(root, (cst.Attribute, cst.Call, cst.Subscript)):
        root = root.func if isinstance(root, cst.Call) else root.value
    return leaf, root.value if isinstance(root, cst.Name) else None


def _dotted_name(node: cst.Attribute) -> str | None:
    parts = [node.attr.value]
    value = node.value
    while isinstance(value, cst.Attribute):
        parts.append(value.attr.value)
        value = value.value
    if not isinstance(value, cst.Name):
        return None
    parts.append(value.value)
    return ".".join(reversed(parts))
