"""Which volatile or unordered values reach which request parts, in one document."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path

from prefixlint.codes import ENVIRONMENT, UNORDERED, WHITESPACE_DRIFT
from prefixlint.context import RuleContext
from prefixlint.pyflow.bindings import Bindings
from prefixlint.pyflow.document import FUNCTIONS, Function, PythonDocument
from prefixlint.pyflow.flow import ROOT, Flow
from prefixlint.pyflow.importers import sending_importers
from prefixlint.pyflow.origins import Origin, merge, substituted
from prefixlint.pyflow.prompt_words import PREFIX_REGIONS, PROMPT, SYSTEM, TOOLS
from prefixlint.pyflow.scopes import MODULE
from prefixlint.pyflow.sinks import Sink, find_sinks
from prefixlint.pyflow.syntax import leaf
from prefixlint.pyflow.tables import IMPORTED, PARAMETER, REQUEST_INPUT
from prefixlint.pyflow.whitespace import whitespace_drift


@dataclass(frozen=True, eq=False)
class Reach:
    """``origin`` ends up in ``sink``; ``also`` are more values of its code on the same line.

    ``site`` is where the finding points: the origin itself for the first request part it
    reaches, and the name it is read through for each further request part seen at a call
    (a date stored once and read into two system prompts is two findings).
    """

    origin: Origin
    sink: Sink
    also: tuple[Origin, ...] = ()
    site: ast.AST | None = None

    @property
    def at(self) -> ast.AST:
        """``site``, which every reach a rule is given has (:meth:`Analysis.in_prefix`)."""
        if self.site is None:
            raise ValueError("a reach that is not reported has no site")
        return self.site

    @property
    def in_prefix(self) -> bool:
        """Whether the value lands where later requests would reuse what follows it."""
        if self.sink.region not in PREFIX_REGIONS:
            return False
        if self.sink.region == TOOLS and self.origin.opaque:
            # Passed into a tool's constructor (a working directory, a credential in its
            # config): the schema the model sees may not show it.
            return False
        if self.origin.guessed and self.origin.opaque >= 2:
            # Known only by its name (``run_id``) and passed through unknown calls one into
            # another: what comes out (an object holding it, a list of capabilities) need not
            # show it. Through one (a lookup by the id) it may well.
            return False
        if self.sink.named and (
            self.origin.opaque or (self.origin.code == UNORDERED and self.origin.consumer is None)
        ):
            # Known only by its name, the sink needs a direct flow: not a value passed into an
            # unknown call, nor a set that is never iterated into the prompt.
            return False
        return not (self.sink.region == PROMPT and self.origin.tail)


class Analysis:
    """Sinks of a document and the flows into them, computed once."""

    @classmethod
    def of(cls, document: PythonDocument) -> Analysis:
        """The document's analysis, computed on first use and then kept with it."""
        found = document.derived.get("analysis")
        if found is None:
            found = document.derived["analysis"] = cls(document)
        return found

    def __init__(self, document: PythonDocument, importer: bool = False) -> None:
        """``importer``: built for a module of the same package that defines functions this
        one calls, to see where their results go (its own importers are not asked)."""
        self.document = document
        self.bindings = Bindings(document)
        self.flow = Flow(document, self.bindings, imports=importer)
        found = find_sinks(document)
        self.sinks = found.concrete
        # Return values sent by an importing module, each with the function that returns it:
        # its parameters are what that module passes, not what calls in this module pass.
        self._returned_by: dict[int, Function] = {}
        # The defaults of their parameters that some such call leaves out, by name.
        self._defaults: dict[int, dict[str, ast.expr]] = {}
        if not importer:
            self.sinks += self._sent_by_importers()
        self.message_lists = found.message_lists
        self.template_lists = found.template_lists
        self.reaches: list[Reach] = []
        for sink in self.sinks:
            self._follow(sink)
        self.reaches += self._drifting_sinks()
        explained = set(self.flow.visited)  # names already explained as part of a request
        sends_own = any(s.region == SYSTEM and s.named is None for s in self.sinks)
        for sink in found.named:
            if id(sink.named) in explained or (sends_own and self._module_constant(sink)):
                continue
            self._follow(sink)

    def _sent_by_importers(self) -> list[Sink]:
        """The values returned by this module's functions that a module of its package
        imports and sends (``system=build_system()``), as sinks of the request part."""
        functions = {f.name: f for f in self.document.module.body if isinstance(f, FUNCTIONS)}
        if not functions:
            return []
        stem = Path(self.document.path).stem
        found: dict[int, Sink] = {}
        for path, text in sending_importers(self.document.path, self.document.text):
            importer = _importer_analysis(path, text, self.document.ctx)
            for reach in importer.reaches if importer is not None else ():
                module, _, name = reach.origin.label.rpartition(".")
                if reach.origin.code != IMPORTED or module != stem or name not in functions:
                    continue
                if reach.origin.opaque or not reach.in_prefix:
                    continue
                where = f"{reach.sink.description} in {Path(path).name}"
                left = _defaults_left(functions[name], reach.origin.node)
                for value in self.document.returns_of(functions[name]):
                    found.setdefault(id(value), Sink(value, reach.sink.region, where))
                    self._returned_by[id(value)] = functions[name]
                    self._defaults.setdefault(id(value), {}).update(left)
        return list(found.values())

    def _drifting_sinks(self) -> list[Reach]:
        """The system texts that the requests of one class (or of the module) send, when they
        differ only in whitespace (``dedent(SYSTEM).strip()`` in one, ``SYSTEM.strip()`` in
        another): each request caches its own prefix."""
        groups: dict[int, list[Sink]] = {}
        for sink in self.sinks:
            if sink.region == SYSTEM and sink.named is None and sink.expr is not None:
                owner = self.document.enclosing_class(sink.expr) or self.document.module
                groups.setdefault(id(owner), []).append(sink)
        found = []
        for sinks in groups.values():
            values = [s.expr for s in sinks]
            if len(sinks) > 1 and whitespace_drift(values, self._module_text):
                last = max(sinks, key=lambda s: self.document.order(s.expr))
                shown = [" ".join(self.document.code(v).split()) for v in values]
                other = next(
                    text for v, text in zip(values, shown, strict=True) if v is not last.expr
                )
                label = f"{shown[values.index(last.expr)]} (elsewhere {other})"
                found.append(Reach(Origin(WHITESPACE_DRIFT, last.expr, label), last))
        return found

    def _module_text(self, name: ast.Name) -> ast.expr | None:
        """The string literal a name is bound to once, at module level."""
        values = [
            b.value
            for a in self.bindings.reaching(name)
            if a.scope.kind == MODULE
            for b in self.bindings.values_of(a)
        ]
        if len(values) != 1 or len(self.bindings.reaching(name)) != 1:
            return None
        text = values[0]
        return text if isinstance(text, ast.Constant) and isinstance(text.value, str) else None

    def _module_constant(self, sink: Sink) -> bool:
        """Whether a named text is a module-level name: in a module that sends its own system
        prompt, one its requests never read is kept for something else, not sent here."""
        target = sink.named
        return isinstance(target, ast.Name) and self.document.enclosing_function(target) is None

    def _follow(self, sink: Sink) -> None:
        if not self.flow.possible:
            return
        self.flow.root = sink
        function = self._returned_by.get(id(sink.expr))
        env = self.flow.summary(function) if function is not None else ROOT
        origins = self.flow.origins(sink.expr, env)
        defaults = self._defaults.get(id(sink.expr), {})
        if defaults:
            origins = merge(
                *(
                    substituted(o, self.flow.origins(defaults[o.label]))
                    if o.code == PARAMETER and o.label in defaults
                    else (o,)
                    for o in origins
                )
            )
        if sink.named is not None and _setting(origins, sink.expr):
            return
        self.reaches += [Reach(origin, sink) for origin in origins]

    def inputs_of(self, node: ast.AST) -> set[str]:
        """The names of the per-request inputs ``node`` is made from (``question``)."""
        return {o.label for o in self.flow.origins(node) if o.code == REQUEST_INPUT}

    def sink_of(self, node: ast.AST) -> Sink | None:
        """The first sink whose value was explained through ``node``, if any."""
        return self.flow.roots.get(id(node))

    @cached_property
    def _first_in_prefix(self) -> dict[str, list[Reach]]:
        """One reach per construct: values of one kind in one statement (``platform.system()``
        and ``platform.machine()``), then values of a code on one line, then values of a code
        that one name holds when it is read into the request part (``os_info`` set on each
        branch of an ``if``), then values of a code read on one line of one f-string
        (``f"{os_name} {os_version}"``), are one finding."""
        reaches = _grouped(self._sited(), self._statement_key)
        reaches = _grouped(reaches, lambda r: (r.origin.code, self.document.span(r.at).line))
        reaches = sorted(reaches, key=lambda r: self.document.order(r.at))
        reaches = _grouped(reaches, self._alternative_key)
        reaches = _grouped(reaches, self._read_together_key)
        by_code: dict[str, list[Reach]] = {}
        for reach in reaches:
            by_code.setdefault(reach.origin.code, []).append(reach)
        return by_code

    def _alternative_key(self, reach: Reach) -> Hashable:
        """The code, request part and name read that a reach shares with the other values
        assigned to that name (``os_info = ...`` on each branch of an ``if``, ``self.date =
        ...`` in two methods); the reach itself where its value was not assigned to the name
        it was read through."""
        use = reach.origin.use
        statement = next(
            (a for a in self.document.ancestors(reach.origin.node) if isinstance(a, ast.stmt)),
            None,
        )
        targets: list[ast.expr] = [statement.target] if isinstance(statement, ast.AnnAssign) else []
        targets += statement.targets if isinstance(statement, ast.Assign) else []
        if isinstance(use, ast.Name) and any(
            isinstance(t, ast.Name) and t.id == use.id for t in targets
        ):
            return reach.origin.code, id(reach.sink.expr), id(use)
        # ``self.date = ...`` in one method and another: the attribute read into the request
        attributes = [
            t for t in targets if isinstance(t, ast.Attribute) and leaf(t.value) == "self"
        ]
        if use is None and len(attributes) == 1:
            owner = self.document.enclosing_class(attributes[0])
            return reach.origin.code, id(reach.sink.expr), id(owner), attributes[0].attr
        return id(reach)

    def _read_together_key(self, reach: Reach) -> Hashable:
        """The code, request part, f-string and line where a reach's name is read into the
        text; the reach itself where it is not read by a name in an f-string."""
        use = reach.origin.use
        parent = self.document.parent(use) if use is not None else None
        text = self.document.parent(parent) if isinstance(parent, ast.FormattedValue) else None
        if use is None or not isinstance(text, ast.JoinedStr):
            return id(reach)
        return reach.origin.code, id(reach.sink.expr), id(text), self.document.span(use).line

    def _statement_key(self, reach: Reach) -> tuple[str, int, int, str]:
        statement = next(
            (a for a in self.document.ancestors(reach.at) if isinstance(a, ast.stmt)),
            None,
        )
        family = _IDENTIFIER.match(reach.origin.label.strip("`{"))
        return (
            reach.origin.code,
            id(statement),
            id(reach.sink.expr),
            family.group(0) if family else reach.origin.label,
        )

    def _sited(self) -> list[Reach]:
        """Reaches into a prefix, one per origin and request part, with the site to report."""
        sinks: dict[tuple[str, int], set[int]] = {}
        uses: dict[tuple[str, int], set[int]] = {}
        out: list[Reach] = []
        for reach in self.reaches:
            if reach.origin.code in _NEVER_REPORTED or not reach.in_prefix:
                continue
            origin = reach.origin
            key = (origin.code, id(origin.node))
            if key not in sinks:
                sinks[key], uses[key] = {id(reach.sink.expr)}, {id(origin.use)}
                out.append(replace(reach, site=origin.node))
            elif (
                reach.sink.named is None  # a named text may be part of one already reported
                and id(reach.sink.expr) not in sinks[key]
                and id(origin.use) not in uses[key]
            ):
                sinks[key].add(id(reach.sink.expr))
                uses[key].add(id(origin.use))
                out.append(replace(reach, site=origin.use))
        return out

    def in_prefix(self, code: str) -> list[Reach]:
        """One reach per line and code that lands in a request prefix (first sink wins)."""
        return self._first_in_prefix.get(code, [])


def _importer_analysis(path: str, text: str, ctx: RuleContext) -> Analysis | None:
    """The analysis of an importing module, with the options of the module that asks; kept
    for the next module it imports from (a runner importing from two toolsets)."""
    key = (path, text, ctx.enabled, repr(ctx.options))
    if key in _IMPORTER_ANALYSES:
        return _IMPORTER_ANALYSES[key]
    try:
        tree = ast.parse(text)
        context = RuleContext(path=path, enabled=ctx.enabled, options=ctx.options)
        found: Analysis | None = Analysis(PythonDocument(text, tree, context), importer=True)
    except (SyntaxError, ValueError, RecursionError):
        found = None
    if len(_IMPORTER_ANALYSES) >= _MAX_IMPORTER_ANALYSES:
        del _IMPORTER_ANALYSES[next(iter(_IMPORTER_ANALYSES))]
    _IMPORTER_ANALYSES[key] = found
    return found


# The last importer analyses, oldest first: each holds its module's tree, so only a few.
_IMPORTER_ANALYSES: dict[tuple[str, str, frozenset[str], str], Analysis | None] = {}
_MAX_IMPORTER_ANALYSES = 8


def _defaults_left(function: Function, call: ast.AST) -> dict[str, ast.expr]:
    """The default values of ``function``'s parameters that ``call`` passes nothing for (none
    when it unpacks ``*args`` or ``**kwargs``)."""
    if not isinstance(call, ast.Call):
        return {}
    if any(isinstance(a, ast.Starred) for a in call.args) or any(
        k.arg is None for k in call.keywords
    ):
        return {}
    signature = function.args
    params = [*signature.posonlyargs, *signature.args]
    passed = {p.arg for p in params[: len(call.args)]} | {k.arg for k in call.keywords if k.arg}
    pairs = [
        *zip(reversed(params), reversed(signature.defaults), strict=False),
        *zip(signature.kwonlyargs, signature.kw_defaults, strict=True),
    ]
    return {p.arg: d for p, d in pairs if d is not None and p.arg not in passed}


_IDENTIFIER = re.compile(r"\w+")
_NEVER_REPORTED = frozenset({REQUEST_INPUT, PARAMETER, IMPORTED})


def _grouped(reaches: list[Reach], key: Callable[[Reach], Hashable]) -> list[Reach]:
    """Reaches with equal ``key`` merged into the first (the others become its ``also``); a
    value known by what makes it goes before one only guessed from its name."""
    first: dict[object, int] = {}
    out: list[Reach] = []
    for reach in reaches:
        k = key(reach)
        if k not in first:
            first[k] = len(out)
            out.append(reach)
            continue
        earlier = out[first[k]]
        if earlier.origin.guessed and not reach.origin.guessed:
            earlier, reach = reach, earlier
        known = {id(o.node) for o in (earlier.origin, *earlier.also)}
        extra = [o for o in (reach.origin, *reach.also) if id(o.node) not in known]
        out[first[k]] = replace(earlier, also=(*earlier.also, *extra))
    return out


def _setting(origins: tuple[Origin, ...], value: ast.expr | None) -> bool:
    """Whether a text known only by its name is nothing but one environment read
    (``instruction = os.environ.get(var)``): a setting the name holds whole, not text that a
    prompt is written with."""
    return bool(origins) and all(o.code == ENVIRONMENT and o.node is value for o in origins)
