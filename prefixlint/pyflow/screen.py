"""Whether a Python file can hold a finding, decided on the stdlib ``ast`` tree.

The full analysis builds a document on the same tree (parents, scopes, qualified names,
every flow into every request part), which costs many times the parse.
:func:`may_need_analysis` runs first: it is a superset test of what the analysis needs, so a
file it rejects yields no finding there:

* a request part (:func:`prefixlint.pyflow.sinks.find_sinks` finds one) and something that
  can start a volatile, unordered or per-request value (``Flow.possible``), or
* a list that can hold messages (named like one, typed as one, sent as ``messages`` or
  given role dicts) together with a statement that could change it in place.

Every test here reads more into the tree than the analysis does, never less.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Iterable, Iterator
from functools import cached_property

from prefixlint import codes, vocabulary
from prefixlint.codes import ENVIRONMENT, LAYOUT, PER_USER, SYSTEM_ROLES, TIMESTAMP, UNIQUE_ID
from prefixlint.context import RuleContext
from prefixlint.lines import python_lines
from prefixlint.pyflow import syntax
from prefixlint.pyflow import tables as t
from prefixlint.pyflow.compaction import (
    CONVERSATION_CLASS_WORDS,
    EXCHANGE_WORDS,
    added,
    cuts_conversation,
    fetch_cap,
    names_summary,
    selects,
)
from prefixlint.pyflow.importers import sending_importers
from prefixlint.pyflow.message_types import NOT_CHAT_WORDS, builds_messages, is_tool_definition
from prefixlint.pyflow.prompt_words import (
    AGENT_PACKAGES,
    API_METHODS,
    CHAT_LISTS,
    CHAT_ROLES,
    CONVERSE_METHODS,
    FRAMEWORKS,
    KEYWORD_SYSTEM_BY_NAME,
    MESSAGE_CLASSES,
    MESSAGE_MAKER,
    PROMPT,
    RESPONSE_WRAPPERS,
    SHRINKER_CLASSES,
    SYSTEM,
    SYSTEM_CALLEE,
    SYSTEM_DECORATORS,
    SYSTEM_KEYWORDS,
    TEMPLATE_STATIC_TOKENS,
    TOOL_FIELDS,
    TOOL_KEYWORDS,
    WINDOW_MEMORIES,
    defines_message_list,
    name_region,
    text_region,
)
from prefixlint.pyflow.templates import template_fields
from prefixlint.pyflow.whitespace import shape

_NAME_CODES = frozenset({codes.TIMESTAMP, codes.UNIQUE_ID, codes.PER_USER, codes.ENVIRONMENT})
_LIST_WORDS = frozenset({"messages", "conversation", "transcript"})
# Names of a list that a cutting call may be given as a conversation (``history`` too: the call
# says what it does).
_CUT_LIST_WORDS = _LIST_WORDS | {"history", "turns"}
# Names of a list that holds a conversation when a loop reads its items as messages.
_HISTORY_LIST_WORDS = _LIST_WORDS | {"history", "turns", "trajectory"}
_SPACE = re.compile(r"\s+")
_STRING_PREFIX = re.compile(r"[A-Za-z]*")
# The role LangChain templates give a conversation spliced in: ``("placeholder", "{history}")``.
_PLACEHOLDER_ROLE = re.compile(r"['\"]placeholder['\"]")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def may_need_analysis(text: str, tree: ast.Module, ctx: RuleContext) -> bool:
    """Whether the analysis of ``text`` (parsed as ``tree``) could find anything."""
    screen = _Screen(text, tree, ctx)
    sinks = screen.sinks_possible() or bool(sending_importers(ctx.path, text))
    return screen.history_possible() or (sinks and screen.flow_possible())


def _words(name: str) -> tuple[str, ...]:
    return vocabulary.split_words(name)


def _root(node: ast.AST) -> ast.AST:
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _chain(node: ast.AST) -> list[str]:
    """The attribute names along a callee, outermost last, through calls and subscripts."""
    names: list[str] = []
    while isinstance(node, (ast.Attribute, ast.Call, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            names.append(node.attr)
        node = node.func if isinstance(node, ast.Call) else node.value
    if isinstance(node, ast.Name):
        names.append(node.id)
    return names[::-1]


def _spelled_role(node: ast.AST | None) -> str:
    text = syntax.string_value(node)
    if text is None and isinstance(node, ast.Attribute):
        text = node.attr
    return (text or "").lower()


def _role(element: ast.AST) -> str | None:
    """The role of a message-shaped display or call (as ``sinks._Finder._role``)."""
    if isinstance(element, ast.Dict):
        for key, value in zip(element.keys, element.values, strict=True):
            if key is not None and syntax.string_value(key) == "role":
                return _spelled_role(value) or None
        return None
    if isinstance(element, ast.Tuple) and len(element.elts) == 2:
        role = (syntax.string_value(_unstarred(element.elts[0])) or "").lower()
        return role if role in SYSTEM_ROLES or role in CHAT_ROLES else None
    if isinstance(element, ast.Call):
        short = (syntax.dotted(element.func) or "").rsplit(".", 1)[-1]
        if MESSAGE_CLASSES.get(short):
            return MESSAGE_CLASSES[short]
        return _spelled_role(syntax.keyword(element, "role")) or None
    return None


def _unstarred(node: ast.expr) -> ast.expr:
    return node.value if isinstance(node, ast.Starred) else node


def _list_named(node: ast.AST) -> bool:
    """A name or attribute named like a conversation (``messages``, ``self.transcript``)."""
    name = syntax.leaf(node)
    return _list_named_as(name) if name else False


def _list_named_as(name: str) -> bool:
    words = _words(name)
    return bool(words) and words[-1] in _LIST_WORDS and NOT_CHAT_WORDS.isdisjoint(words)


def _returns_value(function: ast.AST) -> bool:
    return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(function))


class _Screen:
    """One walk over the tree, then the tests of :func:`may_need_analysis`."""

    def __init__(self, text: str, tree: ast.Module, ctx: RuleContext) -> None:
        self.text = text
        self.ctx = ctx
        self.nodes = _by_type(tree)
        self._lines: list[str] | None = None

    @cached_property
    def _in_fstring(self) -> set[int]:
        """The ids of the nodes inside an f-string."""
        inside: set[int] = set()
        for node in self.of(ast.JoinedStr):
            if id(node) not in inside:
                inside.update(id(n) for n in ast.walk(node) if n is not node)
        return inside

    @cached_property
    def _class_of(self) -> dict[int, ast.ClassDef]:
        """Statements by id, to the class they are in when no function lies between."""
        found: dict[int, ast.ClassDef] = {}
        for owner in self.of(ast.ClassDef):
            assert isinstance(owner, ast.ClassDef)
            stack: list[ast.AST] = list(owner.body)
            while stack:
                node = stack.pop()
                if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
                    continue
                found[id(node)] = owner
                stack.extend(ast.iter_child_nodes(node))
        return found

    def of(self, *kinds: type) -> Iterator[ast.AST]:
        for kind in kinds:
            yield from self.nodes.get(kind, ())

    def _calls(self) -> Iterator[ast.Call]:
        for node in self.of(ast.Call):
            assert isinstance(node, ast.Call)
            yield node

    # -- request parts ---------------------------------------------------------------------

    def sinks_possible(self) -> bool:
        """Whether ``find_sinks`` could find a request part (concrete or named)."""
        text = self.text
        if self._messages_sent or any(name in text for name in FRAMEWORKS):
            return True
        agents = any(name in text for name in AGENT_PACKAGES)
        if agents and ("camel" in text or "autogen" in text):
            return True  # an agent class that takes its system message by position
        if "dspy" in text and ".demos" in text:
            return True  # a predictor's few-shot demos
        for call in self._calls():
            if self._call_sink(call, agents):
                return True
        if self._unclaimed():
            return True
        if any(is_tool_definition(node) for node in self.of(ast.Dict, ast.Call)):
            return True
        for node in self.of(ast.Assign, ast.AnnAssign, ast.AugAssign):
            if self._assignment_sink(node):
                return True
        return any(self._function_sink(node) for node in self.of(*_FUNCTIONS))

    def _call_sink(self, call: ast.Call, agents: bool) -> bool:
        for keyword in call.keywords:
            if keyword.arg in SYSTEM_KEYWORDS or (agents and keyword.arg in TOOL_KEYWORDS):
                return True
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "bind_tools" and call.args:
            return True
        callee = syntax.leaf(func) or ""
        if SYSTEM_CALLEE.match(callee):
            return True
        if callee in CONVERSE_METHODS:
            return True
        keywords = KEYWORD_SYSTEM_BY_NAME.get(callee, ()) if agents else ()
        if any(keyword.arg in keywords for keyword in call.keywords):
            return True
        role = syntax.keyword(call, "role")
        if role is not None:
            return _spelled_role(role) in SYSTEM_ROLES
        unnamed = len(call.args) + sum(k.arg is None for k in call.keywords)
        if unnamed >= 2 and MESSAGE_MAKER.search(callee):
            return _spelled_role(syntax.positional_at(call, 0)) in SYSTEM_ROLES
        return False

    def _unclaimed(self) -> bool:
        """A system role dict, or a list of two or more messages."""
        for node in self.of(ast.Dict):
            if _role(node) in SYSTEM_ROLES:
                return True
        for node in self.of(ast.List):
            assert isinstance(node, ast.List)
            elements = [_unstarred(e) for e in node.elts]
            roles = [_role(e) for e in elements]
            if any(isinstance(e, ast.Tuple) for e in elements) and None in roles:
                continue
            if sum(role is not None for role in roles) >= 2:
                return True
        return False

    def _assignment_sink(self, node: ast.AST) -> bool:
        assert isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        if node.value is None:
            return False
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            name = syntax.leaf(target)
            if name is not None and text_region(name) is not None:
                return True
            if self._tool_field(node, target) or _content_write(target):
                return True
            if isinstance(target, ast.Attribute) and target.attr == "__name__":
                return True
        return False

    def _tool_field(self, statement: ast.AST, target: ast.AST) -> bool:
        if isinstance(target, ast.Subscript):
            return syntax.string_value(target.slice) in TOOL_FIELDS
        if isinstance(target, ast.Name) and target.id in TOOL_FIELDS:
            owner = self._class_of.get(id(statement))
            return owner is not None and (owner.name.endswith("Tool") or bool(owner.bases))
        return (
            isinstance(target, ast.Attribute)
            and target.attr in TOOL_FIELDS
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        )

    def _function_sink(self, node: ast.AST) -> bool:
        assert isinstance(node, _FUNCTIONS)
        decorated = any(
            isinstance(d, ast.Attribute) and d.attr in SYSTEM_DECORATORS
            for d in node.decorator_list
        )
        arguments = node.args
        params = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]
        named = (
            decorated
            or name_region(node.name) is not None
            or any(name_region(p.arg) in (SYSTEM, PROMPT) for p in params)
        )
        return named and _returns_value(node)

    # -- values that can start a volatile or per-request flow ------------------------------

    def flow_possible(self) -> bool:
        """A superset of ``Flow.possible`` on the document, where values that only PFX301
        reads (per-request input) count only with enough static text to report."""
        return self._volatile_possible() or (
            self._layout_possible() and any(self._is_input(n) for n in self._spellings)
        )

    def _volatile_possible(self) -> bool:
        """Whether anything can start a volatile or unordered value (all codes but PFX301)."""
        if self.nodes.get(ast.Set) or self.nodes.get(ast.SetComp):
            return True
        aliases = self._import_aliases()
        for call in self._calls():
            leaf = syntax.leaf(call.func)
            root = _root(call.func)
            first = root.id if isinstance(root, ast.Name) else None
            if leaf in t.SOURCE_LEAVES or first in t.SOURCE_ROOTS:
                return True
            if (leaf is not None and leaf in aliases) or (first is not None and first in aliases):
                return True
        for node in self.of(ast.Attribute):
            assert isinstance(node, ast.Attribute)
            if node.attr in t.SOURCE_ATTRIBUTES:
                return True
        if self._drift_possible():
            return True
        extra = {
            code: self._option(code, "extra-volatile-names")
            for code in (TIMESTAMP, UNIQUE_ID, PER_USER, ENVIRONMENT)
        }
        return any(vocabulary.classify_name(n, extra) in _NAME_CODES for n in self._spellings)

    def _is_input(self, name: str) -> bool:
        return vocabulary.is_request_input(name, self._option(LAYOUT, "input-names"))

    def _layout_possible(self) -> bool:
        """PFX301 is on and the literals could make as much static text as it reports: the
        strings that are not statements of their own, any text repeated (``"-" * 80``), or a
        file's text."""
        if LAYOUT not in self.ctx.enabled:
            return False
        try:
            needed = min(int(self.ctx.option(LAYOUT, "min-static-tokens")), TEMPLATE_STATIC_TOKENS)
        except KeyError:
            return True
        for node in self.of(ast.BinOp):
            assert isinstance(node, ast.BinOp)
            if isinstance(node.op, ast.Mult):
                return True
        if any(syntax.leaf(call.func) in ("read", "read_text") for call in self._calls()):
            return True  # a file's text, of any size
        if self._splices_messages():
            return True  # this turn's input before a conversation, of any size
        alone = {id(n.value) for n in self.of(ast.Expr) if isinstance(n, ast.Expr)}
        total = 0
        for node in self.of(ast.Constant):
            assert isinstance(node, ast.Constant)
            if isinstance(node.value, str) and id(node) not in alone:
                total += len(node.value)
                if total >= needed:
                    return True
        return False

    def _splices_messages(self) -> bool:
        """A list that splices another in (``[system, *history, user]``, ``[system] + history``)
        or a template's placeholder for the conversation (``MessagesPlaceholder``)."""
        if any(isinstance(n, ast.Starred) for n in self.of(ast.Starred)) and self.nodes.get(
            ast.List
        ):
            return True
        for node in self.of(ast.BinOp):
            assert isinstance(node, ast.BinOp)
            if isinstance(node.op, ast.Add) and ast.List in (type(node.left), type(node.right)):
                return True
        return "MessagesPlaceholder" in self.text or _PLACEHOLDER_ROLE.search(self.text) is not None

    def _option(self, code: str, key: str) -> list[str]:
        """A list option of a rule (``()`` where the rule has none)."""
        try:
            return list(self.ctx.option(code, key))
        except KeyError:
            return []

    def _import_aliases(self) -> set[str]:
        found: set[str] = set()
        for node in self.of(ast.Import, ast.ImportFrom):
            assert isinstance(node, (ast.Import, ast.ImportFrom))
            found.update(a.asname for a in node.names if a.asname and a.name != "*")
        return found

    @cached_property
    def _spellings(self) -> set[str]:
        """Every name, dotted attribute path and short string ``Flow.possible`` reads."""
        found: set[str] = set()
        for node in self.of(ast.Name):
            assert isinstance(node, ast.Name)
            found.add(node.id)
        for node in self.of(ast.Attribute):
            assert isinstance(node, ast.Attribute)
            found.add(node.attr)
            dotted = syntax.dotted(node)
            if dotted:
                found.add(dotted)
        for node in self.of(ast.arg):
            assert isinstance(node, ast.arg)
            found.add(node.arg)
        for node in self.of(ast.keyword):
            assert isinstance(node, ast.keyword)
            if node.arg:
                found.add(node.arg)
        for node in self.of(*_FUNCTIONS, ast.ClassDef):
            assert isinstance(node, (*_FUNCTIONS, ast.ClassDef))
            found.add(node.name)
        for node in self.of(ast.Global, ast.Nonlocal):
            assert isinstance(node, (ast.Global, ast.Nonlocal))
            found.update(node.names)
        for node in self.of(ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
            name = getattr(node, "name", None)
            if name:
                found.add(name)
        for node in self.of(ast.MatchMapping):
            assert isinstance(node, ast.MatchMapping)
            found.update([node.rest] if node.rest else [])
        for node in self.of(ast.MatchClass):
            assert isinstance(node, ast.MatchClass)
            found.update(node.kwd_attrs)
        for node in self.of(ast.Import, ast.ImportFrom):
            assert isinstance(node, (ast.Import, ast.ImportFrom))
            modules = [a.name for a in node.names if a.name != "*"]
            modules += [node.module] if isinstance(node, ast.ImportFrom) and node.module else []
            for name in modules:
                parts = name.split(".")
                found.update(parts)
                found.update(".".join(parts[:n]) for n in range(2, len(parts) + 1))
            found.update(a.asname for a in node.names if a.asname)
        for value, raw in self._string_pieces():
            if len(raw) < 40:
                found.add(value)
            if "{" in value:
                found.update(template_fields(value))
        return found

    def _string_pieces(self) -> Iterator[tuple[str, str]]:
        """``(value, source)`` of every plain string literal, each piece of an implicit
        concatenation apart, as the analysis reads them.

        Implicit concatenations are one ``ast`` node: their pieces are re-tokenized. Inside
        an f-string, positions are not reliable before Python 3.12, so strings there count
        as short (a superset of what the analysis reads).
        """
        for node in self.of(ast.JoinedStr):
            if id(node) not in self._in_fstring:
                yield from self._pieces(node, None)
        for node in self.of(ast.Constant):
            assert isinstance(node, ast.Constant)
            if not isinstance(node.value, str):
                continue
            if id(node) in self._in_fstring:
                yield node.value, ""
            else:
                yield from self._pieces(node, node.value)

    def _pieces(self, node: ast.AST, value: str | None) -> Iterator[tuple[str, str]]:
        raw = self._segment(node)
        if raw is None:
            if value is not None:
                yield value, ""  # positions unknown: count it as short
            return
        if value is not None and _single_literal(raw):
            yield value, raw
            return
        yield from _literal_tokens(raw)

    def _segment(self, node: ast.AST) -> str | None:
        lineno = getattr(node, "lineno", None)
        end = getattr(node, "end_lineno", None)
        if lineno is None or end is None:
            return None
        if self._lines is None:
            self._lines = python_lines(self.text)
        lines = self._lines[lineno - 1 : end]
        if not lines:
            return None
        data = [line.encode("utf-8", "surrogatepass") for line in lines]
        start_col = getattr(node, "col_offset", 0)
        end_col = getattr(node, "end_col_offset", 0)
        if len(data) == 1:
            return data[0][start_col:end_col].decode("utf-8", "replace")
        middle = b"\n".join([data[0][start_col:], *data[1:-1], data[-1][:end_col]])
        return middle.decode("utf-8", "replace")

    def _drift_possible(self) -> bool:
        """A superset of ``Flow._drift_possible``: texts that may differ in whitespace."""
        for node in self.of(ast.IfExp):
            assert isinstance(node, ast.IfExp)
            if _drift([node.body, node.orelse]):
                return True
        by_name: dict[str, list[ast.expr]] = {}
        for node in self.of(ast.Assign):
            assert isinstance(node, ast.Assign)
            for target in node.targets:
                if isinstance(target, ast.Name):
                    by_name.setdefault(target.id, []).append(node.value)
        if any(len(v) > 1 and _drift(v) for v in by_name.values()):
            return True
        returns = (_returned(f) for f in self.of(*_FUNCTIONS))
        return any(len(v) > 1 and _drift(v) for v in returns)

    # -- conversations edited in place -----------------------------------------------------

    def _compaction_possible(self) -> bool:
        """A ``+`` with an operand named like a summary, or a list comprehension keeping a
        selection (``HistoryAnalysis._compactions``), where a list is named or typed like a
        conversation."""
        shaped = any(
            any(names_summary(o) for o in added(node))
            for node in self.of(ast.BinOp)
            if isinstance(node, ast.BinOp)
        ) or any(
            any(selects(t) for t in (*node.generators[0].ifs, node.generators[0].iter))
            for node in self.of(ast.ListComp)
            if isinstance(node, ast.ListComp)
        )
        if not shaped:
            return False
        names = (
            n.arg if isinstance(n, ast.arg) else syntax.leaf(n)
            for n in self.of(ast.Name, ast.Attribute, ast.arg)
        )
        return defines_message_list(self.text) or any(
            _list_named_as(name) for name in names if name
        )

    def history_possible(self) -> bool:
        """Whether a list that may hold messages meets a statement that may change it."""
        if self._messages_sent or self._messages_added():
            return True  # any list may be known to hold messages: leave it to the analysis
        if any(
            syntax.leaf(call.func) in WINDOW_MEMORIES or fetch_cap(call) for call in self._calls()
        ):
            return True
        if self.nodes.get(ast.Slice) and self._conversation_returned():
            return True
        if self._compaction_possible() or self._cut_in_place() or self._head_dropped():
            return True
        if self._content_rewritten_in_history_loop() or self._condenser_defined():
            return True
        bases = self._edited_bases()
        if defines_message_list(self.text):
            # A list typed as messages (or copied from one) may have any name: any edit counts.
            return next(bases, None) is not None or self._split_possible()
        return any(_list_named(base) or self._exchanges_kept(base) for base in bases)

    def _condenser_defined(self) -> bool:
        """A class named for shrinking a conversation (``HistoryAnalysis._condensed``)."""
        return any(
            any(name in node.name for name in SHRINKER_CLASSES)
            or any(
                name in (syntax.leaf(base) or "")
                for base in node.bases
                for name in SHRINKER_CLASSES
            )
            for node in self.of(ast.ClassDef)
            if isinstance(node, ast.ClassDef)
        )

    def _content_rewritten_in_history_loop(self) -> bool:
        """A loop over a list named like a history that writes a message's content
        (``HistoryAnalysis._copy_rewrites``)."""
        for loop in self.of(ast.For, ast.AsyncFor):
            assert isinstance(loop, (ast.For, ast.AsyncFor))
            source = loop.iter
            if isinstance(source, ast.Call) and source.args:
                source = source.args[0]
            if isinstance(source, ast.Subscript):
                source = source.value
            name = syntax.leaf(source) if isinstance(source, (ast.Name, ast.Attribute)) else ""
            if not (name and _HISTORY_LIST_WORDS.intersection(_words(name))):
                continue
            if any(
                isinstance(node, ast.Subscript)
                and isinstance(node.ctx, ast.Store)
                and syntax.string_value(syntax.index_of(node)) == "content"
                for node in ast.walk(loop)
            ):
                return True
        return False

    def _exchanges_kept(self, base: ast.AST) -> bool:
        """``self.runs`` in a module with a class named for a conversation (``ConversationMemory``):
        the exchanges it keeps (``HistoryAnalysis._named_messages``)."""
        name = syntax.leaf(base) if isinstance(base, ast.Attribute) else None
        words = _words(name) if name else ()
        if not words or words[-1] not in EXCHANGE_WORDS:
            return False
        return any(
            CONVERSATION_CLASS_WORDS.intersection(_words(node.name))
            for node in self.of(ast.ClassDef)
            if isinstance(node, ast.ClassDef)
        )

    def _head_dropped(self) -> bool:
        """``history = history[2:]`` in a ``while`` loop (``HistoryAnalysis._dropped_heads``)."""
        for loop in self.of(ast.While):
            for node in ast.walk(loop):
                if not isinstance(node, ast.Assign) or not isinstance(node.value, ast.Subscript):
                    continue
                name = syntax.leaf(node.value.value)
                sliced = isinstance(node.value.slice, ast.Slice)
                if sliced and name and _CUT_LIST_WORDS.intersection(_words(name)):
                    return True
        return False

    def _cut_in_place(self) -> bool:
        """A call that cuts, its result unused, given a conversation first
        (``prune_history(history, max_turns)``: ``HistoryAnalysis._summarized_splits``)."""
        for node in self.of(ast.Expr):
            assert isinstance(node, ast.Expr)
            call = node.value.value if isinstance(node.value, ast.Await) else node.value
            if not isinstance(call, ast.Call) or not call.args or not cuts_conversation(call):
                continue
            name = syntax.leaf(call.args[0])
            if name and _CUT_LIST_WORDS.intersection(_words(name)):
                return True
        return False

    def _conversation_returned(self) -> bool:
        """``return {"messages": ...}``: a state update that may replace a conversation."""
        for node in self.of(ast.Return):
            assert isinstance(node, ast.Return)
            if isinstance(node.value, ast.Dict) and any(
                syntax.string_value(k) in _LIST_WORDS for k in node.value.keys if k
            ):
                return True
        return False

    def _split_possible(self) -> bool:
        """``older, recent = cut(history, limit)``: two names bound from one call."""
        for node in self.of(ast.Assign):
            assert isinstance(node, ast.Assign)
            target = node.targets[0]
            if isinstance(target, ast.Tuple) and len(target.elts) == 2:
                return True
        return False

    @cached_property
    def _messages_sent(self) -> bool:
        """A request call (``messages=`` of a chat API): as ``sinks._Finder._api``."""
        for call in self._calls():
            func = call.func
            # The callee's own name is the chain's last: most calls end here.
            if (
                isinstance(func, ast.Attribute)
                and func.attr not in RESPONSE_WRAPPERS
                and func.attr not in API_METHODS
                and not func.attr.endswith("completion")
            ):
                continue
            chain = [p for p in _chain(func) if p not in RESPONSE_WRAPPERS]
            if not chain:
                continue
            if chain[-1].endswith("completion") and "litellm" in self.text:
                return True
            keywords = {k.arg for k in call.keywords if k.arg}
            if len(chain) < 2 or chain[-1] not in API_METHODS:
                continue
            if not keywords & {"model", "messages", "system", "input"}:
                continue
            if chain[-2] in ("completions", "messages", "responses"):
                return True
        return False

    def _messages_added(self) -> bool:
        for call in self._calls():
            func = call.func
            if isinstance(func, ast.Attribute) and func.attr in ("append", "extend", "insert"):
                values = [*call.args, *(k.value for k in call.keywords)]
                if any(builds_messages(v) for v in values):
                    return True
        return False

    def _edited_bases(self) -> Iterator[ast.AST]:
        """The lists that statements of the history rules could change."""
        for node in self.of(ast.Assign, ast.AugAssign, ast.AnnAssign):
            assert isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign))
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(node, ast.Assign) and (
                    isinstance(node.value, ast.ListComp) or cuts_conversation(node.value)
                ):
                    yield target
                yield from _subscripted(
                    target.value if isinstance(target, ast.Attribute) else target
                )
        for node in self.of(ast.Delete):
            assert isinstance(node, ast.Delete)
            for target in node.targets:
                for part in target.elts if isinstance(target, ast.Tuple) else [target]:
                    yield from _subscripted(part)
        for call in self._calls():
            if isinstance(call.func, ast.Attribute) and call.func.attr in (
                "insert",
                "pop",
                "remove",
                "clear",
            ):
                yield call.func.value
        for node in self.of(ast.Subscript):
            assert isinstance(node, ast.Subscript)
            if isinstance(node.slice, ast.Slice):
                yield node.value
        for node in self.of(ast.For, ast.AsyncFor):
            assert isinstance(node, (ast.For, ast.AsyncFor))
            source = node.iter
            if isinstance(source, ast.Subscript):
                source = source.value
            if isinstance(source, ast.Call):
                first = [*source.args, *(k.value for k in source.keywords)][:1]
                source = _unstarred(first[0]) if first else source
            yield source


def _by_type(tree: ast.Module) -> dict[type, list[ast.AST]]:
    """Every node of ``tree`` by its type (contexts, operators and aliases left out)."""
    found: dict[type, list[ast.AST]] = {}
    stack: list[ast.AST | None] = [tree]
    pop, extend, append = stack.pop, stack.extend, stack.append
    while stack:
        node = pop()
        if node is None:  # a gap in a list field (``{**rest}``'s key)
            continue
        kind = type(node)
        nodes = found.get(kind)
        if nodes is None:
            nodes = found[kind] = []
        nodes.append(node)
        fields = _FIELDS.get(kind)
        for name in _node_fields(kind) if fields is None else fields:
            value = getattr(node, name)
            if type(value) is list:
                extend(value)
            elif isinstance(value, ast.AST):
                append(value)
    return found


# Fields that never hold a node the screen looks up (names, flags, contexts, operators,
# import aliases), and the others of each node type, found once.
_LEAF_FIELDS = frozenset(
    {
        "ctx", "op", "id", "arg", "attr", "name", "names", "module", "level", "kind",
        "type_comment", "is_async", "conversion", "kwd_attrs", "value_str",
    }
)  # fmt: skip
_CONSTANT_FIELDS = _LEAF_FIELDS | {"value"}  # a constant's value is never a node
_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}


def _node_fields(kind: type[ast.AST]) -> tuple[str, ...]:
    fields = _FIELDS.get(kind)
    if fields is None:
        leaves = _CONSTANT_FIELDS if kind in (ast.Constant, ast.MatchSingleton) else _LEAF_FIELDS
        fields = _FIELDS[kind] = tuple(f for f in kind._fields if f not in leaves)
    return fields


def _subscripted(node: ast.AST) -> Iterator[ast.AST]:
    """The innermost value of ``x[i][k]`` (``x``), if ``node`` is a subscript."""
    if not isinstance(node, ast.Subscript):
        return
    while isinstance(node, ast.Subscript):
        node = node.value
    yield node


def _content_write(target: ast.AST) -> bool:
    """``messages[0]["content"] = ...`` or ``history[2].content = ...`` (``_content_write``)."""
    attribute = isinstance(target, ast.Attribute) and target.attr == "content"
    key = isinstance(target, ast.Subscript) and syntax.string_value(target.slice) == "content"
    if not (attribute or key):
        return False
    assert isinstance(target, (ast.Attribute, ast.Subscript))
    element = target.value
    if attribute and isinstance(element, ast.Name):
        return True  # maybe a copy of a message (``_copied_message``)
    if not isinstance(element, ast.Subscript):
        return False
    position = element.slice
    if not (
        isinstance(position, ast.Constant)
        and isinstance(position.value, int)
        and not isinstance(position.value, bool)
    ):
        return False
    name = syntax.dotted(element.value) or ""
    words = _words(name.rsplit(".", 1)[-1])
    return bool(words) and words[-1] in CHAT_LISTS


def _hole(node: ast.expr) -> str:
    return "\0"  # the code of a value is left out


def _drift(values: Iterable[ast.AST]) -> bool:
    shapes = [shape(v, _hole) if isinstance(v, ast.expr) else None for v in values]
    if any(text is None for text in shapes):
        return False
    holes = any("\0" in (text or "") for text in shapes)
    if not holes and len(set(shapes)) < 2:
        return False
    return len({_SPACE.sub("", text or "") for text in shapes}) == 1


def _returned(function: ast.AST) -> list[ast.expr]:
    """The values ``function`` returns (not those of functions or classes nested in it)."""
    found = []
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (*_FUNCTIONS, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            found.append(node.value)
        stack += ast.iter_child_nodes(node)
    return found


def _single_literal(raw: str) -> bool:
    """Whether ``raw`` is one string literal (not an implicit concatenation)."""
    body = raw[_STRING_PREFIX.match(raw).end() :]  # type: ignore[union-attr]
    quote = body[:3] if body[:3] in ('"""', "'''") else body[:1]
    if not quote or not body.endswith(quote) or len(body) < 2 * len(quote):
        return False
    return quote not in body[len(quote) : -len(quote)]


def _literal_tokens(raw: str) -> Iterator[tuple[str, str]]:
    """The plain string literals among the tokens of ``raw``, with their values."""
    try:  # in parentheses, continuation lines need no indentation
        tokens = list(tokenize.generate_tokens(io.StringIO(f"({raw})").readline))
    except (tokenize.TokenError, SyntaxError):
        return
    for token in tokens:
        if token.type != tokenize.STRING:
            continue
        prefix = _STRING_PREFIX.match(token.string)
        if prefix is not None and any(c in "fFbB" for c in prefix.group(0)):
            continue
        try:
            value = ast.literal_eval(token.string)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, str):
            yield value, token.string
