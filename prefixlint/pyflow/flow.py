"""Follow a value back to what makes it volatile or unordered.

:meth:`Flow.origins` explains an expression: through f-strings, ``.format``, ``%``, ``+``,
``join``, ``string.Template``, Jinja ``render``, containers, assignments (local, module-level,
class attributes) and the return values of functions defined in the same file, with their
parameters bound to the call's arguments. Names resolve through the document's scopes and
qualified names, so ``from datetime import datetime as dt; dt.now()`` is ``datetime.now``.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import cast

from prefixlint import codes, vocabulary
from prefixlint.codes import LAYOUT
from prefixlint.pyflow import tables as t
from prefixlint.pyflow.bindings import Binding, Bindings, Mutation
from prefixlint.pyflow.document import FUNCTIONS, Function, PythonDocument
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
from prefixlint.pyflow.prompt_words import SYSTEM_DECORATORS
from prefixlint.pyflow.scopes import Assignment
from prefixlint.pyflow.sinks import Sink
from prefixlint.pyflow.sql import is_unordered_query
from prefixlint.pyflow.syntax import Arg, arguments, index_of, leaf, positional, string_value
from prefixlint.pyflow.templates import template_fields, template_maker, written_as_sent
from prefixlint.pyflow.whitespace import whitespace_drift

# Methods of a path that list what lies under it.
_PATH_LISTINGS = frozenset({"iterdir", "rglob"})
TAIL_SLACK = 40  # characters of static text that may follow a value that still ends its text
NAME_CODES = frozenset({codes.TIMESTAMP, codes.UNIQUE_ID, codes.PER_USER, codes.ENVIRONMENT})
_PROPERTIES = frozenset({"property", "cached_property"})  # a decorated method read as a value


@dataclass(eq=False)
class Env:
    """Where an expression is explained: as is, or inside ``function``'s summary.

    In a summary the function's parameters stand for whatever a call passes (``PARAMETER``
    origins), so each function is explained once and every call substitutes its arguments.
    """

    function: Function | None = None


ROOT = Env()


class Flow:
    """Explains expressions of one document; results are memoised per (expression, env)."""

    def __init__(self, document: PythonDocument, bindings: Bindings, imports: bool = False) -> None:
        self.document = document
        self.bindings = bindings
        # Whether a call of a function imported from the same package is an ``IMPORTED``
        # origin (asked by the module that defines it: where does its result go?).
        self.imports = imports
        self.visited: set[int] = set()
        self.roots: dict[int, Sink | None] = {}
        self.root: Sink | None = None
        self._memo: dict[tuple[int, int], tuple[Origin, ...]] = {}
        self._summaries: dict[int, Env] = {}
        self._active: set[tuple[int, int]] = set()
        self._passed: dict[tuple[int, str], tuple[Origin, ...]] = {}
        self._substitutions: dict[tuple[object, ...], tuple[Origin, ...]] = {}

    @cached_property
    def _import_aliases(self) -> frozenset[str]:
        """Names bound by ``import ... as NAME`` or ``from ... import x as NAME``."""
        found = set()
        for statement in self.document.nodes(ast.Import, ast.ImportFrom):
            for alias in statement.names:
                if alias.asname is not None:
                    found.add(alias.asname)
        return frozenset(found)

    @cached_property
    def possible(self) -> bool:
        """Whether anything in the file can start a volatile, unordered or per-request value.

        A syntactic test over the document's nodes: a call or attribute spelled like a source,
        a set display, or a name the vocabulary reads as volatile or as request input. When it
        is false no flow can find an origin, so scopes and qualified names are never resolved.
        """
        document = self.document
        if document.nodes(ast.Set, ast.SetComp):
            return True
        if self.imports and any(n.level == 1 for n in document.nodes(ast.ImportFrom)):
            return True
        for call in document.nodes(ast.Call):
            leaf, root = _spelling(call.func)
            if leaf in t.SOURCE_LEAVES or root in t.SOURCE_ROOTS:
                return True
            if leaf in self._import_aliases or root in self._import_aliases:
                return True
        if any(a.attr in t.SOURCE_ATTRIBUTES for a in document.nodes(ast.Attribute)):
            return True
        input_names = document.option(LAYOUT, "input-names", ())
        spellings = {n.id for n in document.nodes(ast.Name)}
        spellings |= {d for d in map(_dotted_name, document.nodes(ast.Attribute)) if d}
        for string in document.nodes(ast.Constant):
            value = string.value
            if not isinstance(value, str):
                continue
            if _short_literal(document, string):
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
    def _defined_methods(self) -> dict[str, Function]:
        """Methods defined once in this file, by name (``def list_tools(self)`` of a wrapper
        class): a call of one is explained by its body, not taken for the library method."""
        found: dict[str, list[Function]] = {}
        for function in self.document.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            if self.document.enclosing_class(function) is not None:
                found.setdefault(function.name, []).append(function)
        return {name: defs[0] for name, defs in found.items() if len(defs) == 1}

    @cached_property
    def _drift_possible(self) -> bool:
        """An if-expression, assignments to one name or the returns of a function, of texts
        differing in whitespace."""
        document = self.document
        if any(whitespace_drift([n.body, n.orelse]) for n in document.nodes(ast.IfExp)):
            return True
        by_name: dict[str, list[ast.expr]] = {}
        for statement in document.nodes(ast.Assign):
            for target in statement.targets:
                if isinstance(target, ast.Name):
                    by_name.setdefault(target.id, []).append(statement.value)
        if any(len(v) > 1 and whitespace_drift(v) for v in by_name.values()):
            return True
        functions = document.nodes(ast.FunctionDef, ast.AsyncFunctionDef)
        return any(whitespace_drift(document.returns_of(f)) for f in functions)

    def _names(self, node: ast.AST) -> frozenset[str]:
        """Qualified names of ``node``, looked up only when its spelling could be in a table."""
        root = node
        while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
            root = root.func if isinstance(root, ast.Call) else root.value
        leaf = node.attr if isinstance(node, ast.Attribute) else None
        if isinstance(node, ast.Name):
            leaf = node.id
        root_name = root.id if isinstance(root, ast.Name) else None
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
            _has_arguments(call)
            and self._names(call.func) & t.SEEDING_CALLS
            and self._fixed_seed(call)
            for call in self.bindings.calls
            if _callee_name(call) == "seed"
        )

    def _fixed_seed(self, call: ast.Call) -> bool:
        """Seeded the same way in every process: not by ``hash(str)``, which Python salts per
        process, nor by the clock."""
        seed = arguments(call)[0].value
        return not any(
            isinstance(node, ast.Call) and _callee_name(node) in _PER_PROCESS_SEEDS
            for node in ast.walk(seed)
        )

    def summary(self, function: Function) -> Env:
        """Where ``function``'s body is explained with its parameters left open."""
        return self._summaries.setdefault(id(function), Env(function))

    def origins(self, node: ast.AST, env: Env = ROOT) -> tuple[Origin, ...]:
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

    def _explain(self, node: ast.AST, env: Env) -> tuple[Origin, ...]:
        handler = getattr(self, "_" + type(node).__name__, None)
        return handler(node, env) if handler else ()

    def _here(self, node: ast.AST) -> str:
        return self.document.where(node)

    def _label(self, node: ast.AST) -> str:
        text = " ".join(self.document.code(node).split())
        if len(text) <= 40:
            return text
        if isinstance(node, ast.Call):
            return " ".join(self.document.code(node.func).split()) + "(...)"
        return text[:37] + "..."

    def _all(self, nodes: Iterable[ast.AST | None], env: Env) -> tuple[Origin, ...]:
        return merge(*(self.origins(n, env) for n in nodes if n is not None))

    # -- literals and containers ------------------------------------------------------------

    def _JoinedStr(self, node: ast.JoinedStr, env: Env) -> tuple[Origin, ...]:
        parts = node.values
        found = []
        for index, part in enumerate(parts):
            if not isinstance(part, ast.FormattedValue):
                continue
            origins = consumed(self.origins(part.value, env), part.value, exact=False)
            spec = self._static_spec(part)
            if spec is not None:
                origins = coarsened(origins, format_granularity(spec))
            if self._followed(parts[index + 1 :]):
                origins = not_tail(origins)
            found.append(stepped(origins, f"f-string {self._here(node)}"))
        return merge(*found)

    @staticmethod
    def _static_spec(part: ast.FormattedValue) -> str | None:
        spec = part.format_spec
        if not isinstance(spec, ast.JoinedStr) or not spec.values:
            return None
        texts = [string_value(p) for p in spec.values]
        if all(text is not None for text in texts):
            return "".join(text for text in texts if text is not None)
        return None

    @staticmethod
    def _followed(rest: Sequence[ast.expr]) -> bool:
        static = 0
        for part in rest:
            if isinstance(part, ast.FormattedValue):
                return True
            static += len((string_value(part) or "").strip())
        return static > TAIL_SLACK

    def _Constant(self, node: ast.Constant, env: Env) -> tuple[Origin, ...]:
        """A template's fields named like a volatile value (``{current_date}``, ``{user_name}``)."""
        text = string_value(node)
        if not text or "{" not in text or written_as_sent(node, self.document.parent):
            return ()
        if _replaced_text(node, self.document.parent(node)):
            return ()  # ``.replace("{date}", today)``: what is replaced is not in the result
        found: list[tuple[Origin, ...]] = []
        filled = self.filled(node)
        for field in template_fields(text):
            if field in filled:
                step = f"{field}= {self._here(filled[field][0])}"
                found += [stepped(self.origins(v, ROOT), step) for v in filled[field]]
                continue
            code = vocabulary.classify_name(field, self.document.extra_names)
            if code in NAME_CODES:
                granularity = t.DAILY if _daily_name(field) else t.PROCESS
                if code == codes.TIMESTAMP and not _daily_name(field):
                    granularity = t.INSTANT
                label = f"`{{{field}}}`"
                found.append(
                    (Origin(code, node, label, granularity, within=f"{{{field}", guessed=True),)
                )
        return merge(*found)

    def filled(self, node: ast.Constant, formats: bool = False) -> dict[str, list[ast.expr]]:
        """The values given by name to the fields of the template ``node`` wherever it is
        filled: ``PROMPT.partial(today=...)`` or ``chain.invoke({"today": ...})`` where
        ``PROMPT`` is bound to a template made from ``node``, and ``chain`` to a pipeline
        that starts from such a name (a LangChain prompt filled in another function), and with
        ``formats`` ``TEMPLATE.format(today=...)`` too."""
        found: dict[str, list[ast.expr]] = {}
        for call, given in self._fill_calls:
            receiver = cast(ast.Attribute, call.func).value
            if not formats and cast(ast.Attribute, call.func).attr in _FORMATS:
                continue
            if isinstance(receiver, ast.Name) and self._made_from(receiver, node, depth=1):
                for field, value in given:
                    found.setdefault(field, []).append(value)
        return found

    def formatted(self, node: ast.expr) -> bool:
        """Whether the template ``node`` is filled anywhere here: ``node.format(...)``, or
        ``format``, ``format_map`` or a fill called on a name bound to a value holding it
        (``TEMPLATES[key].format(...)``), so that its braces are fields, not text."""
        for call in self.bindings.calls:
            func = call.func
            if not isinstance(func, ast.Attribute) or func.attr not in _FILLING:
                continue
            receiver = func.value
            while isinstance(receiver, ast.Subscript):
                receiver = receiver.value
            if receiver is node:
                return True
            if isinstance(receiver, ast.Name) and self._made_from(receiver, node, depth=2):
                return True
        return False

    def _made_from(self, name: ast.Name, node: ast.AST, depth: int) -> bool:
        """Whether a value ``name`` is bound to holds ``node``, or (``depth`` more times) a
        name bound to one that does."""
        for assignment in self.bindings.reaching(name):
            for binding in self.bindings.values_of(assignment):
                for inner in ast.walk(binding.value):
                    if inner is node:
                        return True
                    named = depth and isinstance(inner, ast.Name) and inner is not name
                    if named and self._made_from(cast(ast.Name, inner), node, depth - 1):
                        return True
        return False

    @cached_property
    def _fill_calls(self) -> list[tuple[ast.Call, list[tuple[str, ast.expr]]]]:
        """Calls on a name that fill a template's fields by name, with the (field, value)
        pairs they give: keywords of ``partial``, the string keys of the dict a runnable's
        ``invoke`` is given."""
        found = []
        for call in self.bindings.calls:
            func = call.func
            if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
                continue
            given: list[tuple[str, ast.expr]] = []
            if func.attr in _FILLS:
                given = [(k.arg, k.value) for k in call.keywords if k.arg is not None]
            elif func.attr in _RUNNABLE_CALLS and call.args and isinstance(call.args[0], ast.Dict):
                for key, value in zip(call.args[0].keys, call.args[0].values, strict=True):
                    field = string_value(key) if key is not None else None
                    if field:
                        given.append((field, value))
            if given:
                found.append((call, given))
        return found

    def _List(self, node: ast.List | ast.Tuple, env: Env) -> tuple[Origin, ...]:
        found = []
        for index, element in enumerate(node.elts):
            origins = self.origins(_unstarred(element), env)
            found.append(not_tail(origins) if index < len(node.elts) - 1 else origins)
        return merge(*found)

    _Tuple = _List

    def _Set(self, node: ast.Set, env: Env) -> tuple[Origin, ...]:
        inner = self._all((_unstarred(e) for e in node.elts), env)
        if len(node.elts) < 2:
            return inner
        order = Origin(codes.UNORDERED, node, "set literal", sort_by=_literal_sort(node.elts))
        return merge((order,), inner)

    def _SetComp(self, node: ast.SetComp, env: Env) -> tuple[Origin, ...]:
        order = Origin(codes.UNORDERED, node, "set comprehension")
        return merge((order,), self._comprehension(node, env))

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp, env: Env
    ) -> tuple[Origin, ...]:
        elements = node.elt if not isinstance(node, ast.DictComp) else node.value
        found = [not_tail(self.origins(elements, env))]
        for clause in node.generators:
            found.append(consumed(self.origins(clause.iter, env), clause.iter, exact=True))
        return merge(*found)

    _ListComp = _comprehension
    _GeneratorExp = _comprehension
    _DictComp = _comprehension

    def _Dict(self, node: ast.Dict, env: Env) -> tuple[Origin, ...]:
        found = []
        for key_node, value in zip(node.keys, node.values, strict=True):
            if key_node is not None:
                found.append(self.origins(key_node, env))
                key = string_value(key_node)
                if key:
                    found.append(keyed(self.origins(value, env), key))
                    continue
            found.append(self.origins(value, env))
        return not_tail(merge(*found))

    def _IfExp(self, node: ast.IfExp, env: Env) -> tuple[Origin, ...]:
        found = self._all((node.body, node.orelse), env)
        if whitespace_drift([node.body, node.orelse]):
            label = f"{self._label(node.body)} or {self._label(node.orelse)}"
            return merge((Origin(codes.WHITESPACE_DRIFT, node, label),), found)
        return found

    def _BoolOp(self, node: ast.BoolOp, env: Env) -> tuple[Origin, ...]:
        return self._all(node.values, env)

    def _Await(self, node: ast.Await, env: Env) -> tuple[Origin, ...]:
        return self.origins(node.value, env)

    def _NamedExpr(self, node: ast.NamedExpr, env: Env) -> tuple[Origin, ...]:
        return self.origins(node.value, env)

    def _Starred(self, node: ast.Starred, env: Env) -> tuple[Origin, ...]:
        return self.origins(node.value, env)

    def _BinOp(self, node: ast.BinOp, env: Env) -> tuple[Origin, ...]:
        operator = type(node.op).__name__
        left = self.origins(node.left, env)
        right = self.origins(node.right, env)
        if operator == "Add":
            if right or len(string_value(node.right) or "") > TAIL_SLACK:
                left = not_tail(left)
            return stepped(merge(left, right), f"concatenation {self._here(node)}")
        if operator == "Mod" and string_value(node.left) is not None:
            return stepped(merge(left, not_tail(right)), f"%-formatting {self._here(node)}")
        if operator in t.SET_OPERATORS and any(o.code == codes.UNORDERED for o in left + right):
            order = Origin(codes.UNORDERED, node, "set operation")
            return merge((order,), without_order(left + right))
        return without_order(merge(left, right))

    # -- names and attributes ---------------------------------------------------------------

    def _Name(self, node: ast.Name, env: Env) -> tuple[Origin, ...]:
        found: list[tuple[Origin, ...]] = []
        resolved = False
        for assignment in self.bindings.reaching(node):
            target = assignment.node
            if isinstance(target, ast.arg):
                found.append(self._parameter(node, assignment, env))
                resolved = True
            elif isinstance(target, ast.Name):
                resolved = True
                self.visited.add(id(target))
                found.append(read_at(self._assigned(assignment, env), node))
            elif isinstance(target, (*FUNCTIONS, ast.ClassDef, ast.Import, ast.ImportFrom)):
                resolved = True
        if not resolved:
            return ()
        volatile = any(o.code in _CHOOSING_CODES for group in found for o in group)
        chosen = () if volatile else self._chosen_by(node, env)
        return merge(*found, self._drifting_assignments(node), chosen)

    def _chosen_by(self, node: ast.Name, env: Env) -> tuple[Origin, ...]:
        """``os = "Windows"`` under ``if sys.platform == "win32":`` and another value on another
        branch: which value the name holds says what the tests read (the machine, the date,
        the user), though each value is fixed text (values that are volatile themselves are
        their own findings). Only values made by what the tests call
        or read count, not ones guessed from a name; one finding per choice."""
        targets = [a.node for a in self.bindings.reaching(node) if isinstance(a.node, ast.Name)]
        if len(targets) < 2:
            return ()
        tests: dict[int, ast.expr] = {}
        for target in targets:
            for ancestor in self.document.ancestors(target):
                if isinstance(ancestor, (*FUNCTIONS, ast.ClassDef)):
                    break
                if isinstance(ancestor, ast.If):
                    tests.setdefault(id(ancestor.test), ancestor.test)
        found = [
            origin
            for test in sorted(tests.values(), key=self.document.order)
            for operand in _tested(test)
            for origin in self.origins(operand, env)
            if origin.code in _CHOOSING_CODES and not origin.guessed
        ]
        return tuple(found[:1])  # the first test that chooses stands for the others

    def _drifting_assignments(self, node: ast.Name) -> tuple[Origin, ...]:
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
        label = f"`{node.id}` = {self._label(last)}"
        return (Origin(codes.WHITESPACE_DRIFT, last, label),)

    def _drifting_returns(self, function: Function, returned: list[ast.expr]) -> tuple[Origin, ...]:
        """``return "a\\n" + x`` on one path and ``return "a\\n\\n" + x`` on another."""
        if not whitespace_drift(returned):
            return ()
        last = max(returned, key=self.document.order)
        return (
            Origin(
                codes.WHITESPACE_DRIFT, last, f"{function.name}() returning {self._label(last)}"
            ),
        )

    def _assigned(self, assignment: Assignment, env: Env) -> tuple[Origin, ...]:
        found = []
        for binding in self.bindings.values_of(assignment):
            unpacked = self._unpacked(binding, env)
            if unpacked is not None:
                found.append(unpacked)
                continue
            origins = self.origins(binding.value, env)
            if binding.kind == "element":
                origins = without_order(origins)
            elif binding.kind == "augment":  # ``text += line`` in a loop: in the loop's order
                origins = merge(origins, self._loop_order(binding.statement, env))
            found.append(origins)
        is_sorted = False
        mutations = self.bindings.mutations_of(assignment)
        for mutation in mutations:
            found.append(self._mutation(mutation, env))
            is_sorted |= mutation.method == "sort"
        values = [b.value for b in self.bindings.values_of(assignment)]
        found.append(_filled_sets(values, mutations))
        origins = merge(*found)
        return without_order(origins) if is_sorted else origins

    def _mutation(self, mutation: Mutation, env: Env) -> tuple[Origin, ...]:
        call = mutation.call
        if isinstance(call, ast.Assign):  # "setitem", d[key] = value: the value, in loop order
            return merge(self.origins(call.value, env), self._loop_order(call, env))
        if mutation.method in ("append", "extend", "insert", "update", "add"):
            values = arguments(call)
            values = values[1:] if mutation.method == "insert" else values
            return merge(self._all((a.value for a in values), env), self._loop_order(call, env))
        if mutation.method == "shuffle" and self._unseeded_selector(call):
            return (Origin(codes.RANDOM_SELECTION, call, self._label(call)),)
        query = self._query(call)
        if mutation.method == "execute" and query is not None:
            return (Origin(codes.UNORDERED, query, "query without an order"),)
        return ()

    def _loop_order(self, call: ast.AST, env: Env) -> tuple[Origin, ...]:
        """Items appended inside ``for x in <unordered>`` come out in that order."""
        for ancestor in self.document.ancestors(call):
            if isinstance(ancestor, (*FUNCTIONS, ast.ClassDef)):
                break
            if isinstance(ancestor, (ast.For, ast.AsyncFor)):
                order = [o for o in self.origins(ancestor.iter, env) if o.code == codes.UNORDERED]
                if order:
                    return consumed(order, ancestor.iter, exact=True)
        return ()

    def _parameter(self, node: ast.Name, assignment: Assignment, env: Env) -> tuple[Origin, ...]:
        typed = self._typed_as_set(node, assignment)
        if env.function is not None and assignment.scope.node is env.function:
            # Typed as a set, the parameter is unordered here whatever order a caller had.
            return (Origin(t.PARAMETER, node, node.id, drops_order=bool(typed)), *typed)
        passed = self._passed_in(node, assignment)
        # Named like a volatile value and passed one of that kind: the value is the finding.
        known = {o.code for o in passed} & NAME_CODES
        named = tuple(o for o in self._named_value(node, node.id) if o.code not in known)
        return merge(named, typed, passed)

    def _declared_field(self, node: ast.Attribute) -> tuple[Origin, ...]:
        """``record.tags`` of a parameter annotated with a class defined here that declares
        the field: unordered when declared as a set (``tags: set[str]``), and what its default
        makes (``run_id: str = field(default_factory=new_id)``)."""
        if not isinstance(node.value, ast.Name):
            return ()
        for assignment in self.bindings.reaching(node.value):
            parameter = assignment.node
            annotation = parameter.annotation if isinstance(parameter, ast.arg) else None
            if not isinstance(annotation, ast.Name):
                continue
            for declared in self.bindings.assignments(annotation):
                if not isinstance(declared.node, ast.ClassDef):
                    continue
                for statement in declared.node.body:
                    if not isinstance(statement, ast.AnnAssign):
                        continue
                    target = statement.target
                    if isinstance(target, ast.Name) and target.id == node.attr:
                        default = self.origins(statement.value) if statement.value else ()
                        typed = _set_typed(node, self._label(node), statement.annotation)
                        return merge(typed, default)
        return ()

    @staticmethod
    def _typed_as_set(node: ast.Name, assignment: Assignment) -> tuple[Origin, ...]:
        """A parameter annotated as a set (``flags: set[str]``) iterates in no fixed order,
        whatever the caller passes."""
        parameter = assignment.node
        annotation = parameter.annotation if isinstance(parameter, ast.arg) else None
        return _set_typed(node, node.id, annotation)

    def _passed_in(self, node: ast.Name, assignment: Assignment) -> tuple[Origin, ...]:
        """What the calls of a function defined here pass for its parameter ``node`` (a text
        built by the caller and handed to the function that sends it)."""
        function = assignment.scope.node
        if not isinstance(function, FUNCTIONS):
            return ()
        key = (id(function), node.id)
        if key not in self._passed:
            self._passed[key] = self._arguments_passed(function, node.id)
        return self._passed[key]

    def _arguments_passed(self, function: Function, name: str) -> tuple[Origin, ...]:
        """:meth:`_passed_in`, computed once per parameter of a function."""
        found = []
        for call in self._calls_of.get(id(function), ()):
            bound = self._bind_arguments(function, call, ROOT)
            if name in bound:
                argument, argument_env = bound[name]
                # Only what surely arrives: not values that went through an unknown call.
                found.append(tuple(o for o in self.origins(argument, argument_env) if not o.opaque))
        return merge(*found)

    @cached_property
    def _calls_of(self) -> dict[int, list[ast.Call]]:
        """The calls of each function defined here, by the function's id."""
        found: dict[int, list[ast.Call]] = {}
        for call in self.bindings.calls:
            function = self.document.local_function(call.func)
            if function is not None:
                found.setdefault(id(function), []).append(call)
        return found

    def _named_value(self, node: ast.AST, name: str, classified: str = "") -> tuple[Origin, ...]:
        """A value known only by its name (a parameter, an attribute of one, a dict key), read
        as ``classified`` where that is given."""
        found = [Origin(t.REQUEST_INPUT, node, name)]
        code = vocabulary.classify_name(classified or name, self.document.extra_names)
        if code in NAME_CODES:
            found.append(Origin(code, node, f"`{name}`", granularity=t.PROCESS, guessed=True))
        return tuple(found)

    def _Attribute(self, node: ast.Attribute, env: Env) -> tuple[Origin, ...]:
        for name in self._names(node):
            if name in t.VOLATILE_ATTRIBUTES:
                code, granularity = t.VOLATILE_ATTRIBUTES[name]
                return (Origin(code, node, self._label(node), granularity),)
        read = self._run_dependency(node) if node.attr == "deps" else None
        if read is not None:
            return (Origin(codes.PER_USER, node, f"`{read}`", t.PROCESS),)
        if isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            values = self.bindings.attribute_values(node)
            if values:
                self.visited.update(id(b.target) for b in values)
                changes = self.bindings.attribute_mutations(node)
                found = merge(
                    *(self.origins(b.value, env) for b in values),
                    *(self._mutation(m, env) for m in changes),
                    _filled_sets([b.value for b in values], changes),
                )
                return without_order(found) if any(m.method == "sort" for m in changes) else found
            method = self.document.local_function(node)
            if method is not None and _is_property(method):
                return self._property_value(method)
            if method is not None:
                return ()  # a bound method read without a call (a tool callable)
            return self._named_value(node, node.attr, self._own_field(node))
        given = self._given_field(node)
        if given is not None:
            return self.origins(given, env)
        receiver = merge(self.origins(node.value, env), self._declared_field(node))
        if vocabulary.owned_by_other(node.attr):
            # ``user_info.organization_profile``: the organisation's, not the user's.
            named = {id(n) for n in ast.walk(node.value)}
            receiver = tuple(
                o for o in receiver if o.code != codes.PER_USER or id(o.node) not in named
            )
        if node.attr in t.DAY_ATTRIBUTES:
            receiver = coarsened(receiver, t.DAILY)
        dotted = self._dotted(node) if receiver else None
        if dotted and all(o.code == t.REQUEST_INPUT for o in receiver):
            return merge(receiver, self._named_value(node, dotted)[1:])
        if dotted and all(o.code in (t.REQUEST_INPUT, t.PARAMETER) for o in receiver):
            # In a helper's summary a record's fields are its caller's data (``item.updated_at``
            # is when the item changed), except a person's details (``guest.home_airport``).
            fields = self._named_value(node, dotted)[1:]
            return merge(receiver, tuple(o for o in fields if o.code == codes.PER_USER))
        return receiver

    def _own_field(self, node: ast.Attribute) -> str:
        """``self.profile`` read as a field of what its class is (``model.profile`` in a
        ``RealtimeModel``, ``customer.email`` in a ``Customer``): a one-word field is the
        object's own, a person's only in a class for one."""
        owner = self.document.enclosing_class(node)
        words = vocabulary.split_words(owner.name) if owner is not None else ()
        if not words or len(vocabulary.split_words(node.attr)) != 1:
            return ""
        return f"{words[-1]}.{node.attr}"

    def _given_field(self, node: ast.Attribute) -> ast.expr | None:
        """``x.instructions`` where ``x`` is bound only to an unknown call given
        ``instructions=...`` (``with resolve(instructions=i, run_id=r) as x``): the field is
        what the call was given for it, not everything else it was given."""
        if not isinstance(node.value, ast.Name):
            return None
        values = [
            b.value for a in self.bindings.reaching(node.value) for b in self.bindings.values_of(a)
        ]
        if len(values) != 1 or not isinstance(values[0], ast.Call):
            return None
        call = values[0]
        if self.document.local_function(call.func) is not None:
            return None  # a function of this file: its summary says what it returns
        return next((k.value for k in call.keywords if k.arg == node.attr), None)

    def _run_dependency(self, node: ast.Attribute) -> str | None:
        """What is read of ``ctx.deps`` as text in a dynamic system prompt (pydantic-ai's
        ``@agent.system_prompt``): the run's dependencies, such as whom it serves. Not a field
        whose name says what it is, nor a client whose method is called (``ctx.deps.db.get()``).
        """
        function = self.document.enclosing_function(node)
        if function is None or not isinstance(node.value, ast.Name):
            return None
        if not any(
            isinstance(d, ast.Attribute) and d.attr in SYSTEM_DECORATORS
            for d in function.decorator_list
        ):
            return None
        params = [*function.args.posonlyargs, *function.args.args]
        if not params or node.value.id != params[0].arg:
            return None
        top: ast.AST = node
        parent = self.document.parent(top)
        while isinstance(parent, ast.Attribute):
            top, parent = parent, self.document.parent(parent)
        if isinstance(parent, ast.Call) and parent.func is top:
            return None
        dotted = self._dotted(cast(ast.expr, top)) or ""
        named = vocabulary.classify_name(dotted, self.document.extra_names) in NAME_CODES
        return None if named or not dotted else dotted

    def _property_value(self, method: Function) -> tuple[Origin, ...]:
        """What a property of the class (``self.full_system``) returns."""
        self.visited.add(id(method))
        returned = self.bindings.returns_of(method)
        found = merge(
            *(self.origins(value, self.summary(method)) for value in returned),
            self._drifting_returns(method, returned),
        )
        return stepped(
            tuple(o for o in found if o.code != t.PARAMETER),
            f"value of property self.{method.name}",
            boundary=True,
        )

    def _dotted(self, node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute):
            base = self._dotted(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def _Subscript(self, node: ast.Subscript, env: Env) -> tuple[Origin, ...]:
        code: str | None
        key = string_value(index_of(node))
        for name in self._names(node.value):
            if name == "os.environ" and _configures_requests(key):
                return ()
            if name in t.VOLATILE_ATTRIBUTES:
                code, granularity = t.VOLATILE_ATTRIBUTES[name]
                return (Origin(code, node, self._label(node), granularity),)
        base = self.origins(node.value, env)
        if key:
            base = read_out(base, key)
        if key and all(o.code == t.REQUEST_INPUT for o in base):
            code = vocabulary.classify_name(key, self.document.extra_names)
            if code in NAME_CODES:
                guess = Origin(code, node, self._label(node), t.PROCESS, guessed=True)
                return merge(base, (guess,))
        return base

    # -- calls ------------------------------------------------------------------------------

    def _Call(self, node: ast.Call, env: Env) -> tuple[Origin, ...]:
        names = self._names(node.func)
        for name in names:
            known = self._known_call(name, node, env)
            if known is not None:
                return known
        function = self.document.local_function(node.func)
        if function is not None:
            return self._local_call(function, node, env)
        if isinstance(node.func, ast.Attribute):
            return self._method(node, env)
        passed = self._arguments(node, env)
        if not self._record_class(node.func):
            passed = without_order(passed)
        imported = self._package_function(node.func) if self.imports else None
        if imported is not None:
            # The result of one function of the package handed to another (``render(pick())``)
            # is judged by the module that defines both; anything else may not survive.
            kept = tuple(o if o.code == t.IMPORTED else opaque((o,))[0] for o in passed)
            return merge((Origin(t.IMPORTED, node, imported),), kept)
        return opaque(passed)

    def _package_function(self, func: ast.expr) -> str | None:
        """``module.name`` of a function imported from a module of this file's package
        (``from .module import name``, or ``from app.module import name`` in ``app/``)."""
        if not isinstance(func, ast.Name):
            return None
        for assignment in self.bindings.assignments(func):
            statement = assignment.node
            if not isinstance(statement, ast.ImportFrom) or not statement.module:
                continue
            package, _, module = statement.module.rpartition(".")
            relative = statement.level == 1 and not package
            absolute = statement.level == 0 and package.rpartition(".")[2] == self._package
            if not (relative or absolute):
                continue
            for alias in statement.names:
                if (alias.asname or alias.name) == func.id:
                    return f"{module}.{alias.name}"
        return None

    @cached_property
    def _package(self) -> str:
        """The name of the folder this file is in."""
        return os.path.basename(os.path.dirname(os.path.abspath(self.document.path)))

    def _arguments(self, node: ast.Call, env: Env) -> tuple[Origin, ...]:
        return self._all((a.value for a in arguments(node)), env)

    def _known_call(self, name: str, node: ast.Call, env: Env) -> tuple[Origin, ...] | None:
        given = positional(node)
        if name in _ENVIRONMENT_READS and given and _configures_requests(string_value(given[0])):
            return self._all(given[1:], env)
        if name in t.VOLATILE_CALLS:
            code, granularity = t.VOLATILE_CALLS[name]
            pure_from = t.PURE_WITH_ARGUMENTS.get(name)
            if pure_from is not None and len(given) >= pure_from:
                return self._arguments(node, env)
            if code == codes.UNIQUE_ID and name.startswith(("random.", "numpy.")) and self._seeded:
                return ()
            if name == "time.strftime" and given:
                spec = string_value(given[0])
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
        loaded = given and self._loaded_mapping(given[0])
        if name in ("builtins.str", "builtins.repr") and loaded:
            order = Origin(codes.KEY_ORDER, node, self._label(node))
            return merge((order,), self._arguments(node, env))
        if name in t.ORDER_INSENSITIVE:
            return without_order(self._arguments(node, env))
        if name in t.ORDER_PRESERVING:
            if given:
                # str() and repr() write a collection out in its order, with its brackets.
                exact = name not in ("builtins.str", "builtins.repr")
                first = given[0]
                rest = self._all((a.value for a in arguments(node)[1:]), env)
                return merge(consumed(self.origins(first, env), first, exact=exact), rest)
            return self._arguments(node, env)
        if name in t.RANDOM_CONSTRUCTORS:
            return ()
        return None

    def _unordered_call(self, name: str, node: ast.Call, env: Env) -> tuple[Origin, ...]:
        inner = self._arguments(node, env)
        if name in ("builtins.set", "builtins.frozenset"):
            if not _has_arguments(node):
                return inner
            sort_by = self._element_sort(arguments(node)[0].value, env)
            order = Origin(codes.UNORDERED, node, self._label(node), sort_by=sort_by)
            return merge((order,), without_order(inner))
        order = Origin(codes.UNORDERED, node, self._label(node), sort_by=t.UNORDERED_CALLS[name])
        return merge((order,), inner)

    def _element_sort(self, source: ast.expr, env: Env) -> str:
        """How the elements of ``set(source)`` sort, when the source says."""
        if isinstance(source, (ast.List, ast.Tuple)):
            return _literal_sort(source.elts) if source.elts else ""
        kinds = {o.sort_by for o in self.origins(source, env) if o.code == codes.UNORDERED}
        return kinds.pop() if len(kinds) == 1 else ""

    def _json_dumps(self, node: ast.Call, env: Env) -> tuple[Origin, ...]:
        given = arguments(node)
        payload = next((a.value for a in given if a.keyword is None or a.keyword == "obj"), None)
        inner = self.origins(payload, env) if payload is not None else ()
        if any(
            a.keyword == "sort_keys" and isinstance(a.value, ast.Constant) and a.value.value is True
            for a in given
        ):
            keys_only = [self._orders_keys_only(o) for o in inner]
            return tuple(
                without_order((o,))[0] if o.code == t.PARAMETER and keys else o
                for o, keys in zip(inner, keys_only, strict=True)
                if not (o.code == codes.UNORDERED and keys)
            )
        dumped = Origin(codes.KEY_ORDER, node, self._label(node))
        keys = [self._orders_keys_only(o) and o.code == codes.UNORDERED for o in inner]
        if any(keys):
            # A set iterated into the keys: ``sort_keys=True`` orders what it left unordered.
            rest = (o for o, key in zip(inner, keys, strict=True) if not key)
            return merge((dumped,), tuple(rest))
        if payload is None or self._fixed_literal(payload):
            return inner
        return merge((dumped,), inner)

    def _orders_keys_only(self, origin: Origin) -> bool:
        """An unordered collection iterated into the keys of a dict comprehension: sorting
        the keys (``json.dumps(..., sort_keys=True)``) leaves nothing of its order."""
        if origin.code not in (codes.UNORDERED, t.PARAMETER) or origin.consumer is None:
            return False
        clause = self.document.parent(origin.consumer)
        return isinstance(clause, ast.comprehension) and isinstance(
            self.document.parent(clause), ast.DictComp
        )

    def _fixed_literal(self, node: ast.expr, depth: int = 0) -> bool:
        """A value built in the same key order every time, so it serialises the same way.

        Displays with literal keys, comprehensions (their order is their input's, which the
        unordered-collection rule judges) and JSON decoded again (``json.loads`` keeps the
        text's order), directly or through a name or ``self`` attribute bound only to those.
        """
        if depth > 3:
            return False
        if isinstance(node, ast.Name) and depth == 0:
            values = []
            for assignment in self.bindings.reaching(node):
                for mutation in self.bindings.mutations_of(assignment):
                    # ``rows.append({"name": ...})``: a list filled with fixed values
                    added = mutation.call.args if isinstance(mutation.call, ast.Call) else []
                    if mutation.method not in ("append", "insert") or not added:
                        return False
                    values.append(added[-1])
                values += [b.value for b in self.bindings.values_of(assignment)]
            return bool(values) and all(self._fixed_literal(v, depth + 1) for v in values)
        if isinstance(node, ast.Attribute) and _declared_tool_schema(node):
            return True
        if isinstance(node, ast.Attribute) and depth == 0:
            values = [b.value for b in self.bindings.attribute_values(node)]
            return bool(values) and all(self._fixed_literal(v, depth + 1) for v in values)
        if isinstance(node, ast.Dict):
            return all(
                key is not None and string_value(key) is not None and self._fixed_value(v, depth)
                for key, v in zip(node.keys, node.values, strict=True)
            )
        if isinstance(node, (ast.List, ast.Tuple)):
            return all(self._fixed_value(_unstarred(e), depth) for e in node.elts)
        if isinstance(node, (ast.DictComp, ast.ListComp)):
            return True
        if isinstance(node, ast.Subscript):  # a part of a fixed value: ``schema["properties"]``
            return self._fixed_literal(node.value, depth)
        return isinstance(node, ast.Call) and self._fixed_call(node, depth)

    def _fixed_call(self, node: ast.Call, depth: int) -> bool:
        """A call whose dict comes from code, in one order: ``json.loads`` or ``json.load`` (a
        text's or a file's order), a dump or schema of declared fields
        (:data:`~prefixlint.pyflow.tables.FIXED_ORDER_CALLS`), a function
        defined here whose every return is fixed, or one given only classes and fixed values
        (``describe(Report)``, ``serialize_for_json({f.name: v for f, v in fields})``)."""
        names = self._names(node.func)
        if names & {"json.loads", "json.load"} or names & t.FIXED_ORDER_CALLS:
            return True
        if isinstance(node.func, ast.Attribute) and node.func.attr in t.FIXED_ORDER_METHODS:
            return True
        function = self.document.local_function(node.func)
        if function is not None:
            returns = self.bindings.returns_of(function)
            return bool(returns) and all(self._fixed_literal(r, depth + 1) for r in returns)
        given = [a.value for a in arguments(node)]
        return bool(given) and all(
            self._names_class(a) or self._fixed_literal(a, depth) for a in given
        )

    def _record_class(self, func: ast.expr) -> bool:
        """A class defined here that declares its fields (a dataclass, a model): an instance
        holds what it is given, in the order given."""
        if not isinstance(func, ast.Name):
            return False
        found = [a.node for a in self.bindings.assignments(func)]
        return bool(found) and all(
            isinstance(n, ast.ClassDef) and any(isinstance(s, ast.AnnAssign) for s in n.body)
            for n in found
        )

    def _names_class(self, node: ast.expr) -> bool:
        """A name bound only to a class: defined here, or imported and spelled ``CapWords``."""
        if not isinstance(node, ast.Name) or not node.id[0].isupper() or node.id.isupper():
            return False
        found = self.bindings.assignments(node)
        kinds = (ast.ClassDef, ast.Import, ast.ImportFrom)
        return bool(found) and all(isinstance(a.node, kinds) for a in found)

    def _fixed_value(self, node: ast.expr, depth: int) -> bool:
        if isinstance(node, (ast.Dict, ast.List, ast.Tuple)):
            return self._fixed_literal(node, depth + 1)
        return not isinstance(node, (ast.Set, ast.SetComp))

    def _loaded_mapping(self, node: ast.expr) -> bool:
        """A dict decoded from JSON text, whose key order is whatever the producer sent."""
        candidates = [node]
        if isinstance(node, ast.Name):
            candidates = [
                b.value for a in self.bindings.reaching(node) for b in self.bindings.values_of(a)
            ]
        for value in candidates:
            if isinstance(value, ast.Await):
                value = value.value
            if not isinstance(value, ast.Call):
                continue
            if "json.loads" in self._names(value.func):
                return True
            if isinstance(value.func, ast.Attribute) and value.func.attr == "json":
                return True
        return False

    def _unpacked(self, binding: Binding, env: Env) -> tuple[Origin, ...] | None:
        """``a, b = f()`` where every ``return`` of the local function ``f`` is a tuple display
        of one length: the origins of the returned elements at the target's position, not of
        the whole tuple (``None`` for any other binding)."""
        value = binding.value
        value = value.value if isinstance(value, ast.Await) else value
        if binding.position is not None and isinstance(value, ast.Subscript):
            return self._unpacked_item(value, binding.position, env)
        if binding.position is None or not isinstance(value, ast.Call):
            return None
        function = self.document.local_function(value.func)
        if function is None:
            return None
        returns = self.bindings.returns_of(function)
        lengths = {len(r.elts) if isinstance(r, ast.Tuple) else -1 for r in returns}
        if len(lengths) != 1 or lengths.pop() <= binding.position:
            return None
        if any(isinstance(e, ast.Starred) for r in returns for e in cast(ast.Tuple, r).elts):
            return None
        return self._local_call(function, value, env, binding.position)

    def _unpacked_item(
        self, item: ast.Subscript, position: int, env: Env
    ) -> tuple[Origin, ...] | None:
        """``value, stamp = cache[key]`` where ``cache`` starts empty and every item stored in
        it is a tuple display of one length (``cache[key] = (value, time.time())``): the
        origins of the stored elements at the target's position."""
        if not isinstance(item.value, ast.Name):
            return None
        stored: list[ast.expr] = []
        for assignment in self.bindings.reaching(item.value):
            for binding in self.bindings.values_of(assignment):
                if not (isinstance(binding.value, ast.Dict) and not binding.value.keys):
                    return None
            for mutation in self.bindings.mutations_of(assignment):
                if not isinstance(mutation.call, ast.Assign):
                    return None
                stored.append(mutation.call.value)
        lengths = {len(s.elts) if isinstance(s, ast.Tuple) else -1 for s in stored}
        if len(lengths) != 1 or lengths.pop() <= position:
            return None
        if any(isinstance(e, ast.Starred) for s in stored for e in cast(ast.Tuple, s).elts):
            return None
        return merge(*(self.origins(cast(ast.Tuple, s).elts[position], env) for s in stored))

    def _local_call(
        self, function: Function, node: ast.Call, env: Env, position: int | None = None
    ) -> tuple[Origin, ...]:
        """What a call of a function defined here returns, its parameters replaced by the
        call's arguments; ``position``: only that element of the tuples it returns."""
        self.visited.add(id(function))
        summary_env = self.summary(function)
        returned = self.bindings.returns_of(function)
        if position is not None:
            returned = [cast(ast.Tuple, value).elts[position] for value in returned]
        summary = merge(
            *(self.origins(value, summary_env) for value in returned),
            self._drifting_returns(function, returned),
        )
        bound = self._bind_arguments(function, node, env)
        found: list[tuple[Origin, ...]] = []
        effects: set[tuple[object, ...]] = set()
        for origin in summary:
            if origin.code != t.PARAMETER:
                found.append((origin,))
            elif origin.label in bound and origin.effect() not in effects:
                effects.add(origin.effect())
                found.append(self._substituted(origin, self.origins(*bound[origin.label])))
        return stepped(merge(*found), f"return value of {function.name}()", boundary=True)

    def _substituted(self, placeholder: Origin, argument: tuple[Origin, ...]) -> tuple[Origin, ...]:
        """:func:`substituted`, once per placeholder effect and argument (the argument's
        origins are memoized, so their tuple stands for them)."""
        key = (placeholder.effect(), id(argument))
        if key not in self._substitutions:
            self._substitutions[key] = substituted(placeholder, argument)
        return self._substitutions[key]

    @staticmethod
    def _bind_arguments(
        function: Function, node: ast.Call, env: Env
    ) -> dict[str, tuple[ast.expr, Env]]:
        signature = function.args
        params = [*signature.posonlyargs, *signature.args]
        defaults: dict[str, ast.expr] = {}
        for param, default in zip(reversed(params), reversed(signature.defaults), strict=False):
            defaults[param.arg] = default
        for param, kw_default in zip(signature.kwonlyargs, signature.kw_defaults, strict=True):
            if kw_default is not None:
                defaults[param.arg] = kw_default
        if isinstance(node.func, ast.Attribute) and params and params[0].arg in ("self", "cls"):
            params = params[1:]
        bound: dict[str, tuple[ast.expr, Env]] = {}
        for param, argument in zip(params, positional(node), strict=False):
            bound[param.arg] = (argument, env)
        for keyword in node.keywords:
            if keyword.arg is not None:
                bound[keyword.arg] = (keyword.value, env)
        for param in [*params, *signature.kwonlyargs]:
            if param.arg not in bound and param.arg in defaults:
                bound[param.arg] = (defaults[param.arg], ROOT)
        return bound

    def _method(self, node: ast.Call, env: Env) -> tuple[Origin, ...]:
        func = cast(ast.Attribute, node.func)  # _Call dispatches only attribute calls here
        name = func.attr
        given = arguments(node)
        receiver = self.origins(func.value, env)
        found_arguments = self._arguments(node, env)
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
        if name == "glob" and len(given) == 1:
            order = Origin(codes.UNORDERED, node, self._label(node), sort_by="plain")
            return merge((order,), without_order(receiver))
        if name in t.SELECTOR_METHODS and self._unseeded_selector(node):
            order = Origin(codes.RANDOM_SELECTION, node, self._label(node))
            return merge((order,), found_arguments)
        if name in t.SET_METHODS and any(o.code == codes.UNORDERED for o in receiver):
            order = Origin(codes.UNORDERED, node, self._label(node))
            return merge((order,), without_order(receiver + found_arguments))
        if name in t.DAY_METHODS:
            return coarsened(receiver, t.DAILY)
        if name == "strftime" and given:
            spec = string_value(given[0].value)
            if spec is not None:
                return coarsened(receiver, format_granularity(spec))
            return receiver
        queries = ("execute", "fetch", "fetchrow", "fetchall")
        query = self._query(node) if name in queries else None
        if query is not None:
            return (Origin(codes.UNORDERED, query, "query without an order"),)
        if name == "join" and len(given) == 1:
            items = given[0].value
            found_arguments = consumed(self.origins(items, env), items, exact=True, strings=True)
        if name in t.FILLING_METHODS:
            receiver = tuple(o for o in receiver if not o.within)
            if not self._known_text(func.value):
                given = [a for a in given if not (a.star == "**" and self._context_bag(a.value))]
                found_arguments = self._all((a.value for a in given), env)
            found_arguments = merge(found_arguments, self._named_arguments(given, env))
        if name in t.ORDER_PRESERVING_METHODS:
            step = {
                "format": "str.format",
                "join": "join",
                "render": "Template.render",
                "replace": "str.replace",
            }.get(name, name if name in ("substitute", "safe_substitute") else None)
            # A field or a replaced tag can sit anywhere in the text, not only at its end.
            placed = name in ("format", "replace")
            found = merge(receiver, not_tail(found_arguments) if placed else found_arguments)
            return stepped(found, f"{step} {self._here(node)}") if step else found
        if name == "sort":
            return ()
        return without_order(merge(receiver, opaque(found_arguments)))

    def _known_text(self, node: ast.expr, depth: int = 0) -> bool:
        """Whether the template ``node`` fills is text written in this file: a literal, a name
        bound to one, or a template made from one (``Template(SYSTEM)``)."""
        if depth > 3:
            return False
        if string_value(node) is not None or isinstance(node, ast.JoinedStr):
            return True
        if isinstance(node, ast.Call) and template_maker(node.func) and positional(node):
            return self._known_text(positional(node)[0], depth + 1)
        if isinstance(node, ast.Name):
            values = [
                b.value for a in self.bindings.reaching(node) for b in self.bindings.values_of(a)
            ]
            return bool(values) and all(self._known_text(v, depth + 1) for v in values)
        return False

    def _context_bag(self, node: ast.expr, depth: int = 0) -> bool:
        """Whether ``node`` is a bag of template variables: several mappings merged
        (``merge(config, env_vars, {...})``, ``a | b | c``, ``{**a, **b}``) or an object's
        fields (``asdict(self)``, ``vars()``), offered to whatever template the configuration
        supplies. Which of its values such a template uses is not known here."""
        if depth > 3:
            return False
        if isinstance(node, ast.Call):
            function = self.document.local_function(node.func)
            if function is not None:
                returned = self.document.returns_of(function)
                return bool(returned) and all(self._context_bag(r, depth + 1) for r in returned)
            callee = _callee_word(node.func)
            if callee in _FIELD_BAGS:
                return True
            return len(node.args) >= 3 and "merge" in callee
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            return _operands(node) >= 3
        if isinstance(node, ast.Dict):
            return sum(key is None for key in node.keys) >= 2
        if isinstance(node, ast.Name):
            values = [
                b.value for a in self.bindings.reaching(node) for b in self.bindings.values_of(a)
            ]
            return bool(values) and all(self._context_bag(v, depth + 1) for v in values)
        return False

    def _field_default(self, node: ast.Call, env: Env) -> tuple[Origin, ...]:
        """A declared field's value is its default, never its metadata or description (those
        describe the field to whoever fills it in): ``field(default=x, metadata=...)``,
        ``Field(x, description=...)``."""
        default = next((k.value for k in node.keywords if k.arg == "default"), None)
        given = positional(node)
        if default is None and given:
            default = given[0]
        if default is not None:
            return self.origins(default, env)
        factory = next((k.value for k in node.keywords if k.arg == "default_factory"), None)
        if isinstance(factory, ast.Lambda):
            return self.origins(factory.body, env)
        return ()

    def _named_arguments(self, given: list[Arg], env: Env) -> tuple[Origin, ...]:
        """The first keyword that names a volatile value, for values of unknown provenance:
        ``PROMPT.format(user_name=ctx.name, user_email=ctx.email)`` fills in a per-user value."""
        named = []
        for argument in given:
            keyword = argument.keyword
            code = vocabulary.classify_name(keyword, self.document.extra_names) if keyword else None
            value = argument.value
            if code not in NAME_CODES or string_value(value) is not None:
                continue
            unknown = (t.REQUEST_INPUT, t.PARAMETER)
            if all(o.code in unknown for o in self.origins(value, env)):
                named.append((keyword, code, value))
        if not named:
            return ()
        keyword, code, value = named[0]
        label = ", ".join(f"`{k}`" for k, _, _ in named)
        return (Origin(code, value, label, t.PROCESS, guessed=True),)

    def _query(self, call: ast.Call) -> ast.expr | None:
        """The text of an unordered query that ``call`` runs (a literal, or a name bound to one)."""
        if not _has_arguments(call):
            return None
        query = arguments(call)[0].value
        if isinstance(query, ast.Name):
            values = [
                b.value for a in self.bindings.reaching(query) for b in self.bindings.values_of(a)
            ]
            query = values[0] if len(values) == 1 else query
        return query if is_unordered_query(query) else None

    def _unseeded_selector(self, call: ast.Call) -> bool:
        """Whether ``call`` draws from the shared generator or from one built without a seed."""
        func = call.func
        names = self._names(func)
        if names & t.RANDOM_SELECTORS:
            return not self._seeded
        if not isinstance(func, ast.Attribute):
            return False
        receiver = func.value
        makers = [receiver]
        if isinstance(receiver, ast.Name):
            makers = [
                b.value
                for a in self.bindings.reaching(receiver)
                for b in self.bindings.values_of(a)
            ]
        constructed = [
            m
            for m in makers
            if isinstance(m, ast.Call) and self._names(m.func) & t.RANDOM_CONSTRUCTORS
        ]
        return bool(constructed) and any(
            not _has_arguments(m) or not self._fixed_seed(m) for m in constructed
        )


# Annotations of a parameter that holds a set.
_SET_TYPES = frozenset({"set", "frozenset", "Set", "FrozenSet", "AbstractSet", "MutableSet"})
# Methods that fill some of a template's fields by keyword and return the template.
_FILLS = frozenset({"partial", "format"})
# Of those, what ``str.format`` fills is explained by the flow through the call itself.
_FORMATS = frozenset({"format"})
_FILLING = _FORMATS | _FILLS | {"format_map"}
# Methods of a LangChain runnable (a prompt, or a pipeline from one) given the fields by a dict.
_RUNNABLE_CALLS = frozenset({"invoke", "ainvoke", "stream", "astream"})

# Seeds that differ between processes: salted string hashes, the clock, the process id.
_ENVIRONMENT_READS = frozenset({"os.getenv", "os.environ.get"})


def _configures_requests(key: str | None) -> bool:
    """Whether an environment variable names the model (``OPENAI_MODEL``, ``MODEL_NAME``) or
    holds prompt text (``SYSTEM_PROMPT``, ``BOT_PERSONA``): prompt caches are kept per model,
    so a value that picks the model splits none, and a deployment's configured prompt is the
    same for every request its processes send."""
    words = vocabulary.split_words(key or "")
    return bool(words) and (
        words[-1] == "model"
        or words[-2:] in (("model", "name"), ("model", "id"))
        or not _PROMPT_SETTING_WORDS.isdisjoint(words)
    )


_PROMPT_SETTING_WORDS = frozenset(
    {"prompt", "prompts", "system", "instructions", "instruction", "persona", "preamble"}
)


_PER_PROCESS_SEEDS = frozenset({"hash", "time", "time_ns", "getpid", "urandom", "now"})


def _has_arguments(call: ast.Call) -> bool:
    return bool(call.args or call.keywords)


def _unstarred(node: ast.expr) -> ast.expr:
    """The value of ``*value`` in a display, or the element itself."""
    return node.value if isinstance(node, ast.Starred) else node


def _filled_sets(values: list[ast.expr], changes: list[Mutation]) -> tuple[Origin, ...]:
    """An empty ``set()`` that ``add`` calls fill: it iterates in no fixed order."""
    if not any(change.method == "add" for change in changes):
        return ()
    return tuple(
        Origin(codes.UNORDERED, value, "set()")
        for value in values
        if isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "set"
        and not value.args
        and not value.keywords
    )


# Calls that return an object's fields as a mapping.
_FIELD_BAGS = frozenset({"asdict", "model_dump", "dict", "vars", "locals", "globals"})


def _callee_word(func: ast.expr) -> str:
    """The last name of a callee (``merge`` of ``utils.merge``), lowered."""
    if isinstance(func, ast.Attribute):
        return func.attr.lower()
    return func.id.lower() if isinstance(func, ast.Name) else ""


def _operands(node: ast.expr) -> int:
    """How many mappings ``a | b | c`` merges."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _operands(node.left) + _operands(node.right)
    return 1


def _replaced_text(node: ast.expr, parent: ast.AST | None) -> bool:
    """Whether ``node`` is the text a ``str.replace`` call replaces (its first argument)."""
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and parent.func.attr == "replace"
        and bool(parent.args)
        and parent.args[0] is node
    )


def _literal_sort(elements: list[ast.expr]) -> str:
    """``"plain"`` when every element is a literal of one kind that sorts (str, bytes or
    numbers)."""
    kinds = set()
    for element in elements:
        value = element.value if isinstance(element, ast.Constant) else None
        if isinstance(value, str):
            kinds.add("str")
        elif isinstance(value, bytes):
            kinds.add("bytes")
        elif type(value) in (int, float):
            kinds.add("number")
        else:
            return ""
    return "plain" if len(kinds) == 1 else ""


def _short_literal(document: PythonDocument, node: ast.Constant) -> bool:
    """A string literal shorter than 40 characters as written (quotes and prefix included)."""
    if node.lineno != node.end_lineno:
        return False
    start, end = document.offsets(node)
    return end - start < 40


def _daily_name(name: str) -> bool:
    words = vocabulary.split_words(name)
    return bool({"date", "day", "today"} & set(words)) and not {"time", "datetime"} & set(words)


def _runs_git(call: ast.Call) -> bool:
    if not _has_arguments(call):
        return False
    command = arguments(call)[0].value
    if isinstance(command, (ast.List, ast.Tuple)) and command.elts:
        first = string_value(command.elts[0])
        return first is not None and first.rsplit("/", 1)[-1] == "git"
    text = string_value(command)
    return text is not None and text.lstrip().split(" ", 1)[0] == "git"


def _callee_name(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else None


def _spelling(func: ast.expr) -> tuple[str | None, str | None]:
    """The last and the first name of a callee (``a.b.c`` -> ``("c", "a")``)."""
    leaf = func.attr if isinstance(func, ast.Attribute) else None
    if isinstance(func, ast.Name):
        leaf = func.id
    root = func
    while isinstance(root, (ast.Attribute, ast.Call, ast.Subscript)):
        root = root.func if isinstance(root, ast.Call) else root.value
    return leaf, root.id if isinstance(root, ast.Name) else None


def _dotted_name(node: ast.Attribute) -> str | None:
    parts = [node.attr]
    value = node.value
    while isinstance(value, ast.Attribute):
        parts.append(value.attr)
        value = value.value
    if not isinstance(value, ast.Name):
        return None
    parts.append(value.id)
    return ".".join(reversed(parts))


def _set_typed(node: ast.expr, name: str, annotation: ast.expr | None) -> tuple[Origin, ...]:
    """An unordered origin for ``node`` when ``annotation`` says a set."""
    if isinstance(annotation, ast.BinOp):  # ``set[str] | None``
        annotation = annotation.left
    if annotation is None:
        return ()
    outer = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    if _spelling(outer)[0] not in _SET_TYPES:
        return ()
    inner = annotation.slice if isinstance(annotation, ast.Subscript) else None
    plain = inner is not None and _spelling(inner)[0] in ("str", "int")
    label = f"`{name}` (a set)"
    return (Origin(codes.UNORDERED, node, label, sort_by="plain" if plain else ""),)


# What a branch's test may read that makes the value it chooses differ between runs.
_CHOOSING_CODES = frozenset({codes.TIMESTAMP, codes.UNIQUE_ID, codes.PER_USER, codes.ENVIRONMENT})


def _tested(test: ast.expr) -> list[ast.expr]:
    """The values a branch's test reads: the operands of its comparisons, and the operands of
    ``and``/``or``/``not``."""
    if isinstance(test, ast.BoolOp):
        return [operand for value in test.values for operand in _tested(value)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _tested(test.operand)
    if isinstance(test, ast.Compare):
        return [test.left, *test.comparators]
    return [test]


# A tool's declared parameter schema (``tool.args``, ``tool.input_schema``, MCP's
# ``tool.inputSchema``): made from its declared fields, or parsed from its server's JSON.
_TOOL_SCHEMA_ATTRIBUTES = frozenset(
    {"args", "args_schema", "parameters", "input_schema", "inputSchema", "schema"}
)


def _declared_tool_schema(node: ast.Attribute) -> bool:
    """``tool.args`` and the like: the parameter schema of something named as a tool."""
    words = vocabulary.split_words(leaf(node.value) or "")
    return (
        node.attr in _TOOL_SCHEMA_ATTRIBUTES and bool(words) and words[-1] in ("tool", "function")
    )


def _is_property(method: Function) -> bool:
    return any(_spelling(d)[0] in _PROPERTIES for d in method.decorator_list)
