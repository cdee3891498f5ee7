"""Edits to a conversation that is sent again: rewrites, deletions, windows, masked tool output.

A provider or engine reuses the previous request's prefix only if the new request starts with
the same messages. Appending keeps that true; changing, deleting or inserting an earlier
message (PFX501), cutting a sliding window that moves every turn (PFX502), or rewriting older
tool results (PFX504) makes the new request differ at the first changed message.

A message list is a name or ``self`` attribute passed as ``messages`` to a request, one that
gets role dicts or message objects appended, or one named ``messages``. A change only counts
when the list outlives one request: an attribute, a parameter, a module-level list, or a local
list changed inside a loop it was created outside of (building a fresh list is fine).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import TypeAlias, cast

from prefixlint.codes import HISTORY_EDIT, SLIDING_WINDOW, TOOL_OUTPUT
from prefixlint.plural import counted
from prefixlint.pyflow.analysis import Analysis
from prefixlint.pyflow.compaction import (
    CONVERSATION_CLASS_WORDS,
    CUT_CALL_WORDS,
    EXCHANGE_WORDS,
    SUMMARY_CALL_WORDS,
    added,
    fetch_cap,
    names_summary,
    selects,
)
from prefixlint.pyflow.document import FUNCTIONS, PythonDocument
from prefixlint.pyflow.message_types import (
    NOT_CHAT_WORDS,
    builds_message,
    builds_messages,
    copied_list,
    holds_messages,
    is_message_class,
    spliced_parts,
)
from prefixlint.pyflow.prompt_words import (
    SHRINKER_CLASSES,
    WINDOW_MEMORIES,
    defines_message_list,
    mentions_chat,
)
from prefixlint.pyflow.scopes import MODULE, Assignment
from prefixlint.pyflow.syntax import (
    arguments,
    index_of,
    integer,
    leaf,
    slice_of,
    string_value,
)
from prefixlint.vocabulary import split_words

_LIST_WORDS = frozenset({"messages", "conversation", "transcript"})
_BUDGET_WORDS = frozenset({"token", "tokens", "limit", "budget", "max"})
# The subject of a selection of messages to keep (a budget loop, the list it is taken as):
# one finding per function.
_SELECTION = "selection kept"
# Words of what a loop that keeps messages measures them against.
_LOOP_BUDGET_WORDS = _BUDGET_WORDS | {"remaining", "left"}
# Names of a conversation's parts, besides the message lists.
_CONVERSATION_WORDS = frozenset({"messages", "msgs", "history", "conversation", "rounds", "turns"})
# Names of a method whose result is a request's conversation (``get_messages``, ``buffer``).
_HANDED_ON_WORDS = _CONVERSATION_WORDS | {"context", "buffer", "chat"}
# Messages at the end of a conversation that belong to the turn being answered.
_CURRENT_EXCHANGE = 3
# Fields of a message that hold what the model reads.
_CONTENT_FIELDS = frozenset({"content", "blocks", "text", "parts", "output"})
# Words of a class that shrinks the conversation it is given before it is sent.
_SHRINKER_WORDS = frozenset(name.lower() for name in SHRINKER_CLASSES)
# Names of a list that holds a conversation when its items are read as messages.
_HISTORY_LIST_WORDS = frozenset({"history", "messages", "conversation", "turns", "trajectory"})
_TOOL_ROLES = frozenset(
    {"tool", "tool_result", "function", "function_call_output", "ipython", "observation"}
)


@dataclass(frozen=True)
class HistoryEdit:
    """A finding; ``subject`` is the list and the kind of change (``messages pop``): each
    subject is reported once per function and code."""

    code: str
    node: ast.AST
    message: str
    subject: str = ""


def _is_minus_one(node: ast.AST | None) -> bool:
    return _negative(node) and _int(node) == -1


def _negative(node: ast.AST | None) -> bool:
    """``-k``, or a product with one negated factor (``-self.MAX_TURNS * 2``)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _negative(node.left) != _negative(node.right)
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)


def _int(node: ast.AST | None) -> int | None:
    return integer(node)


# A list's identity: the assignments of its name, or (class, attribute) for ``self.X``.
_Identity: TypeAlias = frozenset[int] | tuple[int, str]


def _method_of(call: ast.Call) -> ast.Attribute:
    """The ``receiver.method`` of a call in ``_Collector.method_calls`` (each has one)."""
    return cast(ast.Attribute, call.func)


def _first_argument(call: ast.Call) -> ast.expr | None:
    given = arguments(call)
    return given[0].value if given else None


def _positional_index(node: ast.expr) -> bool:
    """An index that can be a list position (not a string key or an ``id``/``key``/``name``)."""
    if isinstance(node, ast.JoinedStr) or (
        isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))
    ):
        return False
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = node.id if isinstance(node, ast.Name) else node.attr
        words = split_words(name)
        return not words or words[-1] not in ("id", "key", "name", "uuid")
    return True


class _Collector:
    """Every statement shape that can change a list in place, from the document's nodes."""

    def __init__(self, document: PythonDocument) -> None:
        self.subscript_writes: list[tuple[ast.Subscript, ast.AST]] = []
        self.attribute_writes: list[ast.Attribute] = []
        self.reassignments: list[tuple[ast.expr, ast.expr]] = []
        self.deletes: list[ast.Subscript] = []
        for node in document.nodes(ast.Assign, ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                self._write_target(target, node)
                if isinstance(node, ast.Assign):
                    self.reassignments.append((target, node.value))
        for statement in document.nodes(ast.Delete):
            for deleted in statement.targets:
                items = deleted.elts if isinstance(deleted, ast.Tuple) else [deleted]
                self.deletes += [item for item in items if isinstance(item, ast.Subscript)]
        self.method_calls = [
            call for call in document.nodes(ast.Call) if isinstance(call.func, ast.Attribute)
        ]
        self.slices = bool(document.nodes(ast.Slice))

    def _write_target(self, target: ast.expr, statement: ast.AST) -> None:
        if isinstance(target, ast.Subscript):
            self.subscript_writes.append((target, statement))
        elif isinstance(target, ast.Attribute):
            self.attribute_writes.append(target)

    @property
    def empty(self) -> bool:
        """No statement that could edit a list in place (nothing for the rules to check)."""
        edits = (
            self.slices
            or self.subscript_writes
            or self.deletes
            or self.attribute_writes
            or any(
                isinstance(v, (ast.Subscript, ast.ListComp))
                or (isinstance(v, ast.Call) and is_message_class(v.func))
                for _, v in self.reassignments
            )
            or any(
                _method_of(c).attr in ("insert", "pop", "remove", "clear")
                for c in self.method_calls
            )
        )
        return not edits


class HistoryAnalysis:
    """Finds PFX501/502/504 patterns in one document."""

    def __init__(
        self, document: PythonDocument, analysis: Analysis, min_cut_fraction: float
    ) -> None:
        self.document = document
        self.analysis = analysis
        self.min_cut_fraction = min_cut_fraction
        self.collector = _Collector(document)
        self.message_lists = analysis.message_lists
        self._sending_loops = {
            id(a)
            for expr in self.message_lists
            for a in document.ancestors(expr)
            if isinstance(a, (ast.For, ast.AsyncFor, ast.While))
        }

    @cached_property
    def _lists(self) -> set[_Identity | None]:
        """Identities of the lists known to hold messages (sent, or given role dicts)."""
        found: set[_Identity | None] = set()
        for expr in self.message_lists:
            for part in self._list_parts(expr):
                found.add(self._identity(part))
        for call in self.collector.method_calls:
            method = _method_of(call)
            if method.attr in ("append", "extend", "insert") and self._adds_messages(call):
                found.add(self._identity(method.value))
        for target, value in self.collector.reassignments:
            if isinstance(value, ast.List) and builds_messages(value):
                found.add(self._identity(target))  # msg = [{"role": "system", ...}]
        found.discard(None)
        return found

    # -- identity of a list -----------------------------------------------------------------

    def _identity(self, node: ast.AST) -> _Identity | None:
        """A name's assignments, or the class and path of an attribute of ``self`` or ``cls``
        (``self.messages``, ``self.generator_agent.messages``: another object's list that
        this one keeps)."""
        if isinstance(node, ast.Name):
            return frozenset(id(a) for a in self.document.assignments(node)) or None
        path: list[str] = []
        while isinstance(node, ast.Attribute):
            path.append(node.attr)
            node = node.value
        if path and isinstance(node, ast.Name) and node.id in ("self", "cls"):
            owner = self.document.enclosing_class(node)
            return (id(owner), ".".join(reversed(path))) if owner is not None else None
        return None

    def _list_parts(self, expr: ast.AST) -> list[ast.AST]:
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return self._list_parts(expr.left) + self._list_parts(expr.right)
        if isinstance(expr, ast.List):
            return [e.value for e in expr.elts if isinstance(e, ast.Starred)]
        if isinstance(expr, ast.Subscript):
            return [expr.value]
        return [expr]

    def _adds_messages(self, call: ast.Call) -> bool:
        return any(builds_messages(arg.value) for arg in arguments(call))

    def is_message_list(self, node: ast.AST) -> bool:
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return False
        if self._named_messages(node) or self._condensed(node):
            return True
        if (
            isinstance(node, ast.Name)
            and self._definitions_possible
            and self._defined_as_messages(node, depth=0)
        ):
            return True
        if not self._typed_lists_possible:
            return False
        identity = self._identity(node)
        return identity is not None and identity in self._lists

    @cached_property
    def _definitions_possible(self) -> bool:
        """Whether the text has a message annotation, or a copy of a list named like a
        conversation (no scopes needed)."""
        return defines_message_list(self.document.text)

    def _named_messages(self, node: ast.Name | ast.Attribute) -> bool:
        """Named like a conversation (``messages``), or like its exchanges (``self.runs``,
        ``self.turns``) in a class named for one (``ConversationMemory``, ``ChatHistory``)."""
        name = node.id if isinstance(node, ast.Name) else node.attr
        words = split_words(name)
        if words and words[-1] in _LIST_WORDS and NOT_CHAT_WORDS.isdisjoint(words):
            return self._identity(node) is not None
        if isinstance(node, ast.Attribute) and words and words[-1] in EXCHANGE_WORDS:
            owner = self.document.enclosing_class(node)
            named = split_words(owner.name) if owner is not None else ()
            return bool(CONVERSATION_CLASS_WORDS.intersection(named)) and (
                self._identity(node) is not None
            )
        return False

    def _condensed(self, node: ast.Name | ast.Attribute) -> bool:
        """The conversation a condenser is given: the sequence parameter of a method of a
        class named for shrinking one (``RecentEventsCondenser.condense(self, view)``,
        ``HistoryReducer.reduce(self, history)``), which returns what is sent in its place."""
        if not isinstance(node, ast.Name):
            return False
        function = self.document.enclosing_function(node)
        owner = self.document.enclosing_class(node)
        if function is None or owner is None:
            return False
        named = {
            w for n in (owner.name, *map(self.document.code, owner.bases)) for w in split_words(n)
        }
        if not _SHRINKER_WORDS.intersection(named):
            return False
        parameters = [a.arg for a in function.args.args[1:]]
        return parameters[:1] == [node.id]

    def _definitions(self, node: ast.Name) -> list[Assignment]:
        return self.document.assignments(node)

    def _copied_sources(self, node: ast.Name) -> list[ast.expr]:
        """The lists ``node`` was assigned a copy of (``h = history.copy()``)."""
        bindings = self.analysis.bindings
        return [
            source
            for assignment in self._definitions(node)
            for binding in bindings.values_of(assignment)
            if (source := copied_list(binding.value)) is not None
        ]

    def _defined_as_messages(self, node: ast.Name, depth: int) -> bool:
        """Annotated as a list of messages, or a copy of such a list."""
        for assignment in self._definitions(node):
            target = assignment.node
            annotation = target.annotation if isinstance(target, ast.arg) else None
            if annotation is not None and holds_messages(annotation):
                return True
            parent = self.document.parent(target) if target is not None else None
            if isinstance(parent, ast.AnnAssign) and holds_messages(parent.annotation):
                return True
        return depth < 2 and any(
            self._named_messages(source) or self._defined_as_messages(source, depth + 1)
            if isinstance(source, ast.Name)
            else self.is_message_list(source)
            for source in self._copied_sources(node)
        )

    @cached_property
    def _typed_lists_possible(self) -> bool:
        """Whether any list is sent as messages, gets messages appended or is made of them (no
        scopes needed)."""
        return (
            bool(self.message_lists)
            or any(
                _method_of(call).attr in ("append", "extend", "insert")
                and self._adds_messages(call)
                for call in self.collector.method_calls
            )
            or any(
                isinstance(value, ast.List) and builds_messages(value)
                for _, value in self.collector.reassignments
            )
        )

    def outlives_request(self, node: ast.AST, at: ast.AST) -> bool:
        """Whether the list at ``node`` is sent again after the change at ``at``."""
        if isinstance(node, ast.Attribute):
            return True
        if not isinstance(node, ast.Name):
            return False
        assignments = self._definitions(node)
        sources = [
            s
            for s in self._copied_sources(node)
            if not (isinstance(s, ast.Name) and s.id == node.id)
        ]
        if any(self.outlives_request(s, at) for s in sources):
            return True  # an edited copy of a kept history is returned in its place
        function = self.document.enclosing_function(at)
        for assignment in assignments:
            target = assignment.node
            if isinstance(target, ast.arg):
                return True
            if function is not None and assignment.scope.kind == MODULE:
                return True
            if self._loop_between(target, at):
                return True
        return False

    def _loop_between(self, target: ast.AST | None, at: ast.AST) -> bool:
        """A loop that sends a request encloses ``at`` but not the assignment ``target``."""
        if target is None:
            return False
        around_target = {id(a) for a in self.document.ancestors(target)}
        for ancestor in self.document.ancestors(at):
            if isinstance(ancestor, (*FUNCTIONS, ast.ClassDef)):
                return False
            if (
                isinstance(ancestor, (ast.For, ast.AsyncFor, ast.While))
                and id(ancestor) not in around_target
                and id(ancestor) in self._sending_loops
            ):
                return True
        return False

    # -- findings ---------------------------------------------------------------------------

    def edits(self) -> list[HistoryEdit]:
        found = self._framework_windows() + self._summarized_splits() + self._refilled()
        found += self._fetched_windows() + self._budget_loops() + self._dropped_heads()
        found += self._position_replacements()
        compactions = self._compactions()
        if self.collector.empty and not self.analysis.message_lists:
            return found + compactions
        found += self._subscript_writes()
        found += self._slice_writes()
        found += self._deletes()
        found += self._method_edits()
        insertions = self._spliced_insertions()
        found += insertions
        found += self._loop_rewrites()
        found += self._copy_rewrites()
        windows = self._windows()
        found += windows
        found += self._comprehension_rewrites()
        found += self._replaced_elements()
        # A window of the recent part that a compaction joins is reported as that window; a
        # summary spliced in with every older message kept is an insertion.
        windowed = {id(self.document.enclosing_function(w.node)) for w in windows}
        inserted = {id(i.node) for i in insertions}
        found += [
            c
            for c in compactions
            if id(self.document.enclosing_function(c.node)) not in windowed
            and id(c.node) not in inserted
        ]
        return self._once_per_list(self._without_reported_cuts(found))

    def _without_reported_cuts(self, found: list[HistoryEdit]) -> list[HistoryEdit]:
        """Leaves out a call that cuts the conversation (``truncate(messages, n)``) when the
        function it calls is defined here and its own edit is reported."""
        reported = {id(f) for edit in found if (f := self.document.enclosing_function(edit.node))}
        out = []
        for edit in found:
            call = _cut_call(edit.node) if edit.subject.endswith(" cut") else None
            callee = self.document.local_function(call.func) if call is not None else None
            if callee is None or id(callee) not in reported:
                out.append(edit)
        return out

    def _once_per_list(self, found: list[HistoryEdit]) -> list[HistoryEdit]:
        """The first edit of each list, code and function (both branches of an ``if``)."""
        seen: set[tuple[str, int, str]] = set()
        out = []
        for edit in found:
            function = self.document.enclosing_function(edit.node)
            key = (edit.code, id(function), edit.subject)
            if edit.subject and key in seen:
                continue
            seen.add(key)
            out.append(edit)
        return out

    def _owner(self, node: ast.AST) -> str:
        return self.document.code(node)

    def _subscript_writes(self) -> list[HistoryEdit]:
        out = []
        target: ast.Subscript | ast.Attribute
        for target, statement in self.collector.subscript_writes:
            base, index = self._element(target)
            if base is None or _is_minus_one(index) or not self.is_message_list(base):
                continue
            if not self.outlives_request(base, statement):
                continue
            out.append(
                HistoryEdit(
                    HISTORY_EDIT,
                    target,
                    f"`{self._owner(target)}` is rewritten in place; "
                    f"`{self._owner(base)}` is sent again, so the next request "
                    "differs from this message on",
                    f"{self._owner(base)} write",
                )
            )
        for target in self.collector.attribute_writes:
            if target.attr not in _CONTENT_FIELDS:
                continue
            base, index = self._element(target.value)
            if base is None or _is_minus_one(index) or not self.is_message_list(base):
                continue
            if self.outlives_request(base, target):
                out.append(
                    HistoryEdit(
                        HISTORY_EDIT,
                        target,
                        f"`{self._owner(target)}` is rewritten in "
                        "place; the next request differs from this message on",
                        f"{self._owner(base)} write",
                    )
                )
        return out

    def _slice_writes(self) -> list[HistoryEdit]:
        """``messages[1:3] = []`` or ``messages[1:] = [summary]``: earlier messages of a kept
        conversation replaced in place; ``messages[:] = messages[-k:]`` keeps a window of it.
        ``messages[len(messages):] = more`` appends."""
        out = []
        for target, statement in self.collector.subscript_writes:
            span = slice_of(target)
            base = target.value
            if span is None or span.step is not None or not isinstance(statement, ast.Assign):
                continue
            if self._is_length_of(span.lower, base) or not self.is_message_list(base):
                continue
            if not self.outlives_request(base, statement):
                continue
            if span.lower is None and span.upper is None:
                value = statement.value
                if isinstance(value, ast.Subscript) and self._is_window_of(value, base):
                    out.append(self._window_edit(target, base))
                continue
            code = SLIDING_WINDOW if self._in_length_guard(target, base) else HISTORY_EDIT
            out.append(
                HistoryEdit(
                    code,
                    target,
                    f"`{self._owner(target)} = ...` replaces earlier messages of a "
                    "conversation that is sent again; the next request differs from them on",
                    f"{self._owner(base)} write",
                )
            )
        return out

    def _is_window_of(self, value: ast.Subscript, base: ast.AST) -> bool:
        """``base[-k:]``."""
        span = slice_of(value)
        return (
            span is not None
            and span.upper is None
            and _negative(span.lower)
            and self._identity(value.value) == self._identity(base)
        )

    def _element(self, node: ast.expr) -> tuple[ast.AST | None, ast.expr | None]:
        """``(messages, i)`` for ``messages[i]`` or ``messages[i]["content"]``."""
        while isinstance(node, ast.Subscript):
            if isinstance(node.value, (ast.Name, ast.Attribute)):
                index = index_of(node)
                if index is not None and _positional_index(index):
                    return node.value, index
                return None, None
            node = node.value
        return None, None

    def _deletes(self) -> list[HistoryEdit]:
        out = []
        for target in self.collector.deletes:
            base = target.value
            if not self.is_message_list(base) or not self.outlives_request(base, target):
                continue
            index = target.slice
            if _is_minus_one(index):
                continue
            if isinstance(index, ast.Slice) and index.lower is None and _negative(index.upper):
                out.append(self._window_edit(target, base))
                continue
            code = SLIDING_WINDOW if self._in_length_guard(target, base) else HISTORY_EDIT
            out.append(
                HistoryEdit(
                    code,
                    target,
                    f"`del {self._owner(target)}` removes an "
                    "earlier message of a conversation that is sent again",
                    f"{self._owner(base)} del",
                )
            )
        return out

    def _method_edits(self) -> list[HistoryEdit]:
        out = []
        for call in self.collector.method_calls:
            method = _method_of(call).attr
            base = _method_of(call).value
            if method not in ("insert", "pop", "remove"):
                continue
            if not self.is_message_list(base) or not self.outlives_request(base, call):
                continue
            first = _first_argument(call)
            if method == "pop" and (first is None or _is_minus_one(first)):
                continue
            if method == "insert" and (
                self._is_length_of(first, base) or self._placed_in_sent_copy(call, base)
            ):
                continue
            code = (
                SLIDING_WINDOW
                if method == "pop" and self._in_length_guard(call, base)
                else HISTORY_EDIT
            )
            what = {"insert": "inserts before", "pop": "removes", "remove": "removes"}[method]
            out.append(
                HistoryEdit(
                    code,
                    call,
                    f"`{self._owner(call)}` {what} an earlier "
                    "message of a conversation that is sent again",
                    f"{self._owner(base)} {method}",
                )
            )
        return out

    def _spliced_insertions(self) -> list[HistoryEdit]:
        """``self.messages = [self.messages[0]] + added + self.messages[1:]`` (or ``m[:k] + added +
        m[k:]``) on a conversation that is sent again: ``insert`` spelled as a new list."""
        out = []
        for target, value in self.collector.reassignments:
            parts = spliced_parts(value)
            if len(parts) < 3 or not self.is_message_list(target):
                continue
            head, rest = self._head_cut(parts[0], target), parts[-1][1]
            window = slice_of(rest) if isinstance(rest, ast.Subscript) else None
            if head is None or window is None or window.upper is not None:
                continue
            same = self._identity(cast(ast.Subscript, rest).value) == self._identity(target)
            if not same or self._constant(window.lower) != head:
                continue
            if not self.outlives_request(target, value):
                continue
            out.append(
                HistoryEdit(
                    HISTORY_EDIT,
                    value,
                    f"`{self._owner(target)} = ...` inserts messages after the first "
                    f"{'message' if head == 1 else counted(head, 'message')} of a conversation "
                    "that is sent again; the next request differs from there on",
                    f"{self._owner(target)} insert",
                )
            )
        return out

    def _head_cut(self, part: tuple[bool, ast.expr], target: ast.expr) -> int | None:
        """How many leading messages of ``target`` a list's first part keeps: 1 for
        ``[target[0]]``, k for ``target[:k]``."""
        spliced, node = part
        if not spliced and isinstance(node, ast.Subscript) and _int(index_of(node)) == 0:
            base = node.value  # an element of the list display: ``[m[0], ...]``
            return 1 if self._identity(base) == self._identity(target) else None
        window = slice_of(node) if spliced and isinstance(node, ast.Subscript) else None
        if window is None or window.lower is not None or window.step is not None:
            return None
        kept = self._constant(window.upper)
        if kept is None or kept <= 0:
            return None
        same = self._identity(cast(ast.Subscript, node).value) == self._identity(target)
        return kept if same else None

    def _placed_in_sent_copy(self, call: ast.Call, base: ast.AST) -> bool:
        """``sent = history.copy(); sent.insert(0, system)``, the copy neither returned nor
        stored: each request gets the message at the same place, and the kept list is as it
        was."""
        index = _int(_first_argument(call))
        function = self.document.enclosing_function(call)
        if index is None or index < 0 or function is None or not isinstance(base, ast.Name):
            return False
        bindings = [b for a in self._definitions(base) for b in self.analysis.bindings.values_of(a)]
        if not bindings or any(copied_list(b.value) is None for b in bindings):
            return False
        for node in ast.walk(function):
            kept = isinstance(node, (ast.Return, ast.Yield)) or (
                isinstance(node, ast.Assign)
                and any(not isinstance(t, ast.Name) for t in node.targets)
            )
            if kept and _holds(cast(ast.Return | ast.Yield | ast.Assign, node).value, base.id):
                return False
        return True

    def _is_length_of(self, node: ast.expr | None, base: ast.AST) -> bool:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            return False
        first = _first_argument(node)
        return (
            node.func.id == "len"
            and first is not None
            and self._identity(first) == self._identity(base)
        )

    def _in_length_guard(self, node: ast.AST, base: ast.AST) -> bool:
        for ancestor in self.document.ancestors(node):
            if isinstance(ancestor, (*FUNCTIONS, ast.ClassDef)):
                return False
            if isinstance(ancestor, (ast.If, ast.While)) and self._guard_bound(ancestor.test, base):
                return True
        return False

    def _guard_bound(self, test: ast.expr, base: ast.AST) -> int | bool | None:
        """The N of ``len(base) > N`` (True when the bound is not a literal), else None."""
        if not isinstance(test, ast.Compare) or len(test.ops) != 1:
            return None
        if not self._is_length_of(test.left, base):
            return None
        bound = self._constant(test.comparators[0])
        if bound is None:
            return True
        return bound + 1 if isinstance(test.ops[0], ast.GtE) else bound

    # -- sliding windows --------------------------------------------------------------------

    def _window_edit(self, node: ast.AST, base: ast.AST) -> HistoryEdit:
        return HistoryEdit(
            SLIDING_WINDOW,
            node,
            f"`{self._owner(node)}` keeps a sliding window of "
            f"`{self._owner(base)}`; the first kept message moves every turn, so "
            "no request reuses the previous one's cached messages",
        )

    def _summarized_splits(self) -> list[HistoryEdit]:
        """``older, recent = split_history(history, token_limit)``, ``summary, rounds =
        compress_rounds(rounds)``, ``messages = trim(messages, max_tokens=n)`` or, its result
        left unused, ``prune_history(messages, max_turns)`` (a cut in place): a call cuts the
        conversation in two, or to a budget, and the older part is dropped or summarised; the
        verbatim part starts later as the conversation grows."""
        out = []
        for node in self.document.nodes(ast.Assign, ast.Expr):
            target = node.targets[0] if isinstance(node, ast.Assign) else None
            if isinstance(node, ast.Assign) and len(node.targets) != 1:
                continue
            if isinstance(target, ast.Tuple):
                if len(target.elts) != 2 or not all(isinstance(e, ast.Name) for e in target.elts):
                    continue
            elif target is not None and not isinstance(target, (ast.Name, ast.Attribute)):
                continue
            call = node.value.value if isinstance(node.value, ast.Await) else node.value
            if not isinstance(call, ast.Call) or not call.args:
                continue
            callee = leaf(call.func) or ""
            words = set(split_words(callee))
            if not words & (SUMMARY_CALL_WORDS | CUT_CALL_WORDS):
                continue
            if (target is None or not words & SUMMARY_CALL_WORDS) and not self._budgeted(call):
                continue
            history = arguments(call)[0].value
            if not self._conversation(history):
                continue
            if isinstance(target, (ast.Name, ast.Attribute)) and self._identity(
                target
            ) != self._identity(history):
                continue  # one target: the conversation cut, ``messages = trim(messages, ...)``
            out.append(
                HistoryEdit(
                    SLIDING_WINDOW,
                    node,
                    f"`{callee}()` cuts `{self._owner(history)}` and keeps only the "
                    "recent part verbatim; the first kept message moves as the conversation "
                    "grows, so no request reuses the previous one's cached messages",
                    f"{self._owner(history)} cut",  # one per function (each branch's call)
                )
            )
        return out

    def _compactions(self) -> list[HistoryEdit]:
        """A conversation returned or kept as a new list that leaves out some of its older
        messages: a summary joined to its recent part (``summary + tail``, ``system +
        [summary_msg] + recent``), or the messages of a computed selection (``[m for m in
        conversation if id(m) in kept_ids]``). The summary and the first verbatim message
        change as the conversation grows, so each request differs from the one before."""
        out = []
        for node in self.document.nodes(ast.BinOp, ast.ListComp):
            if not self._handed_on(node):
                continue
            if isinstance(node, ast.BinOp):
                operands = added(node)
                summaries = [o for o in operands if names_summary(o)]
                recent = [o for o in operands if not names_summary(o) and self._derived(o, 2)]
                if not summaries or not recent:
                    continue
                what = (
                    f"`{self.document.code(recent[-1])}` is joined to "
                    f"`{self.document.code(summaries[0])}` in place of the older messages"
                )
            else:
                generator = node.generators[0]
                selected = any(selects(t) for t in (*generator.ifs, generator.iter))
                # [m for m in conversation if ...], or [conversation[i] for i in sorted(keep)]
                element = node.elt.value if isinstance(node.elt, ast.Subscript) else None
                conversation = element if element is not None else generator.iter
                if not selected or not self._derived(conversation, 2):
                    continue
                what = f"only a selection of `{self.document.code(conversation)}` is kept"
            subject = _SELECTION if isinstance(node, ast.ListComp) else ""
            out.append(
                HistoryEdit(
                    SLIDING_WINDOW,
                    node,
                    f"{what}; the first changed message moves as the conversation grows, "
                    "so no request reuses the previous one's cached messages",
                    subject,
                )
            )
        return out

    def _refilled(self) -> list[HistoryEdit]:
        """A kept conversation emptied in place and filled again, in the same function, with a
        summary of what it held (``messages.clear()``, then ``messages.append(summary_msg)``).
        Emptying alone starts a new conversation, and refilling it with its fixed head (the
        system messages) keeps the cached prefix; a summary in place of the older turns
        changes the messages after that head on every compaction."""
        out = []
        calls = self.collector.method_calls
        for call in calls:
            method = _method_of(call)
            if method.attr != "clear" or call.args or not self.is_message_list(method.value):
                continue
            base = self.document.code(method.value)
            function = self.document.enclosing_function(call)
            summaries = [
                argument
                for later in calls
                if _method_of(later).attr in ("append", "extend", "insert")
                and self.document.code(_method_of(later).value) == base
                and self.document.enclosing_function(later) is function
                and later.lineno > call.lineno
                for argument in later.args[-1:]
                if names_summary(argument.func if isinstance(argument, ast.Call) else argument)
            ]
            if not summaries or not self.outlives_request(method.value, call):
                continue
            out.append(
                HistoryEdit(
                    SLIDING_WINDOW,
                    call,
                    f"`{base}` is emptied and filled again with "
                    f"`{self.document.code(summaries[0])}` in place of its older messages; the "
                    "first changed message moves as the conversation grows, so the next request "
                    "does not reuse the previous one's cached messages",
                    f"{base} cut",
                )
            )
        return out

    def _handed_on(self, node: ast.expr) -> bool:
        """Whether ``node`` is the whole value of a ``return`` or of an attribute assignment,
        or is bound to a name that a ``return`` of the same function gives back (alone or
        joined: ``return system + kept``)."""
        parent = self.document.parent(node)
        if isinstance(parent, ast.Return):
            return True
        if not isinstance(parent, ast.Assign) or len(parent.targets) != 1:
            return False
        target = parent.targets[0]
        if isinstance(target, ast.Attribute):
            return True
        if not isinstance(target, ast.Name):
            return False
        function = self.document.enclosing_function(parent)
        return any(
            r.value is not None
            and any(
                part.id == target.id
                for part in [r.value, *(added(r.value) if isinstance(r.value, ast.BinOp) else [])]
                if isinstance(part, ast.Name)
            )
            and self.document.enclosing_function(r) is function
            for r in self.document.nodes(ast.Return)
        )

    def _derived(self, node: ast.expr, depth: int) -> bool:
        """A message list, a slice of one, or a name bound to a slice of, or a comprehension
        over, such a value (``depth`` bindings deep)."""
        if isinstance(node, ast.Subscript) and slice_of(node) is not None:
            node = node.value
        if self.is_message_list(node):
            return True
        if not isinstance(node, ast.Name) or depth == 0:
            return False
        for assignment in self._definitions(node):
            for binding in self.analysis.bindings.values_of(assignment):
                value = binding.value
                if isinstance(value, ast.ListComp):
                    value = value.generators[0].iter
                if isinstance(value, ast.Subscript) and slice_of(value) is not None:
                    value = value.value
                if value is not node and self._derived(value, depth - 1):
                    return True
        return False

    def _framework_windows(self) -> list[HistoryEdit]:
        """A framework's memory or trimmer that keeps the newest messages
        (``ConversationBufferWindowMemory(k=5)``, ``trim_messages(..., strategy="last")``)."""
        out = []
        for call in self.document.nodes(ast.Call):
            name = leaf(call.func) or ""
            package = WINDOW_MEMORIES.get(name)
            if package is None or not self._imported_from(call.func, package):
                continue
            strategy = [k.value for k in call.keywords if k.arg == "strategy"]
            if strategy and string_value(strategy[0]) == "first":
                continue  # keeps the oldest messages: the start stays put
            out.append(
                HistoryEdit(
                    SLIDING_WINDOW,
                    call,
                    f"`{name}` keeps only the newest messages; once the window is full the "
                    "first message sent moves every turn, so no request reuses the previous "
                    "one's cached messages",
                )
            )
        return out

    def _budget_loops(self) -> list[HistoryEdit]:
        """``for m in reversed(messages):`` that keeps each message while a token budget
        lasts (``if used + n > limit: break``, then ``kept.insert(0, m)``): the newest messages
        that fit, a window whose start moves once the conversation outgrows the budget."""
        out = []
        for loop in self.document.nodes(ast.For):
            source = _newest_first(loop.iter)
            if source is None or not isinstance(loop.target, ast.Name):
                continue
            if not (self._conversation(source) or self._derived(source, 2)):
                continue
            inside = [n for statement in loop.body for n in ast.walk(statement)]
            budgeted = any(isinstance(n, ast.If) and _names_budget(n.test) for n in inside)
            if not budgeted or not _collects(inside, loop.target.id):
                continue
            out.append(
                HistoryEdit(
                    SLIDING_WINDOW,
                    loop,
                    f"the newest messages of `{self._owner(source)}` are kept while a token "
                    "budget lasts; once the conversation outgrows it, the first message sent "
                    "moves every turn, so no request reuses the previous one's cached messages",
                    _SELECTION,
                )
            )
        return out

    def _dropped_heads(self) -> list[HistoryEdit]:
        """``while count(prompt) > limit: history = history[2:]``: the oldest messages dropped
        until the rest fits, so the conversation sent starts later as it grows."""
        out = []
        for target, value in self.collector.reassignments:
            window = slice_of(value) if isinstance(value, ast.Subscript) else None
            if window is None or window.upper is not None or window.step is not None:
                continue
            if window.lower is None or _negative(window.lower) or _int(window.lower) == 0:
                continue
            assert isinstance(value, ast.Subscript)
            if self.document.code(target) != self.document.code(value.value):
                continue
            if not self._conversation(value.value):
                continue
            loop = next(
                (
                    a
                    for a in self.document.ancestors(value)
                    if isinstance(a, (ast.While, *FUNCTIONS))
                ),
                None,
            )
            if not isinstance(loop, ast.While) or not _measures(loop.test):
                continue  # ``while history[0]["role"] != "user"``: the same head dropped
            out.append(
                HistoryEdit(
                    SLIDING_WINDOW,
                    value,
                    f"`{self.document.code(value)}` drops the oldest messages of "
                    f"`{self._owner(value.value)}` until the rest fits; the first message sent "
                    "moves as the conversation grows, so no request reuses the previous one's "
                    "cached messages",
                    f"{self._owner(value.value)} cut",
                )
            )
        return out

    def _fetched_windows(self) -> list[HistoryEdit]:
        """``history = session.get_messages(limit=n)`` whose messages (or a copy of them) are
        added to a message list: the stored conversation fetched with a cap on how many of its
        newest messages come back, a window whose start moves once the cap is reached."""
        out = []
        for node in self.document.nodes(ast.Assign, ast.AnnAssign):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            cap = fetch_cap(node.value) if node.value is not None else None
            if cap is None or not isinstance(target, ast.Name):
                continue
            if not self._added_to_messages(target, node):
                continue
            call = node.value.value if isinstance(node.value, ast.Await) else node.value
            assert isinstance(call, ast.Call)
            out.append(
                HistoryEdit(
                    SLIDING_WINDOW,
                    call,
                    f"`{leaf(call.func)}({cap}=...)` fetches only the newest messages of the "
                    "stored conversation; once it holds more, the first message sent moves "
                    "every turn, so no request reuses the previous one's cached messages",
                )
            )
        return out

    def _added_to_messages(self, target: ast.Name, statement: ast.stmt) -> bool:
        """Whether ``target``, or a copy of it made in the same function (``[deepcopy(m) for m
        in target]``, ``list(target)``), is later added to a message list (``+=``,
        ``extend``) or spread into one (``[system, *target]``)."""
        function = self.document.enclosing_function(statement)
        names = {target.id}
        for copy in self.document.nodes(ast.Assign):
            if (
                self.document.enclosing_function(copy) is not function
                or copy.lineno <= statement.lineno
            ):
                continue
            value = copy.value
            source = value.generators[0].iter if isinstance(value, ast.ListComp) else value
            if isinstance(source, ast.Call) and source.args:
                source = source.args[0]
            if isinstance(source, ast.Name) and source.id in names:
                names.update(t.id for t in copy.targets if isinstance(t, ast.Name))

        def named(node: ast.AST) -> bool:
            node = node.value if isinstance(node, ast.Starred) else node
            return isinstance(node, ast.Name) and node.id in names

        for added_to in self.document.nodes(ast.AugAssign):
            if (
                self.document.enclosing_function(added_to) is function
                and isinstance(added_to.op, ast.Add)
                and named(added_to.value)
                and self._conversation(added_to.target)
            ):
                return True
        for call in self.collector.method_calls:
            method = _method_of(call)
            if (
                method.attr == "extend"
                and self.document.enclosing_function(call) is function
                and call.args
                and named(call.args[0])
                and self._conversation(method.value)
            ):
                return True
        return any(
            self.document.enclosing_function(node) is function
            and any(isinstance(e, ast.Starred) and named(e) for e in node.elts)
            and any(builds_message(e) for e in node.elts if not isinstance(e, ast.Starred))
            for node in self.document.nodes(ast.List)
        )

    def _imported_from(self, func: ast.expr, package: str) -> bool:
        """``func`` is spelled from an import of ``package`` (``langchain_core`` for
        ``langchain``, ``autogen_core`` for ``autogen``)."""
        for qualified in self.document.qualified_names(func):
            root = qualified.split(".", 1)[0]
            if root == package or root.startswith(package + "_"):
                return True
        return False

    def _budgeted(self, call: ast.Call) -> bool:
        """Whether an argument after the first names a size (``token_limit``, ``max_tokens``)
        or is one (``truncate(messages, 20000)``)."""
        for argument in arguments(call)[1:]:
            size = _int(argument.value)
            if size is not None and size > 0 and argument.keyword is None:
                return True
            names = [argument.keyword] if argument.keyword else []
            names.append(self.document.code(argument.value))
            if any(set(split_words(n)) & _BUDGET_WORDS for n in names):
                return True
        return False

    def _conversation(self, node: ast.expr) -> bool:
        if self.is_message_list(node):
            return True
        if not isinstance(node, (ast.Name, ast.Attribute)):
            return False
        words = split_words(self.document.code(node).rsplit(".", 1)[-1])
        return bool(words) and words[-1] in _CONVERSATION_WORDS

    def _windows(self) -> list[HistoryEdit]:
        out = []
        seen: set[int] = set()
        candidates = []
        for target, assigned in self.collector.reassignments:
            # ``m = m[-k:] if len(m) > k else m``: either branch may be the window.
            branches = [assigned.body, assigned.orelse] if isinstance(assigned, ast.IfExp) else []
            for value in branches or [assigned]:
                if (
                    isinstance(value, ast.Subscript)
                    and self._is_tail_slice(value)
                    and self.document.code(target) == self.document.code(value.value)
                    and self._identity(target) == self._identity(value.value)
                ):
                    candidates.append(value)
        # A slice spliced into the messages of a request holds messages, whatever its name.
        sent: set[int] = set()
        for target, value in self.collector.reassignments:
            if isinstance(value, ast.Subscript) and self._stored_back(target, value):
                candidates.append(value)
                sent.add(id(value.value))
        for window in self._returned_windows():
            candidates.append(window)
            sent.add(id(window.value))
        for expr in self.analysis.message_lists:
            slices = self._sent_slices(expr)
            sent.update(id(s.value) for s in slices)
            candidates += slices
        for window in self._rendered_windows():
            candidates.append(window)
            if self._conversation(window.value):
                sent.add(id(window.value))
        candidates += [
            subscript
            for subscript in self.document.nodes(ast.Subscript)
            if self._is_tail_slice(subscript) and self._kept(subscript)
        ]
        rests = [s for s in self.document.nodes(ast.Subscript) if self._rest_after_head(s)]
        for subscript in candidates + rests:
            if id(subscript) in seen:
                continue
            if not self._is_tail_slice(subscript) and subscript not in rests:
                continue
            seen.add(id(subscript))
            base = subscript.value
            known = id(base) in sent or self.is_message_list(base)
            if not known or self._cuts_in_blocks(subscript, base):
                continue
            out.append(self._window_edit(subscript, base))
        return out

    def _rendered_windows(self) -> list[ast.Subscript]:
        """``for turn in history[-k:]: messages.append(...)`` or ``prompt += ...``, and
        ``"\\n".join(... for m in history[-k:])`` that reaches a request: the window rendered
        into the request turn by turn."""
        found = []
        for subscript in self.document.nodes(ast.Subscript):
            if not self._is_tail_slice(subscript):
                continue
            kept = self._constant(cast(ast.Slice, subscript.slice).lower)
            if kept is not None and kept >= -_CURRENT_EXCHANGE:
                continue
            parent = self.document.parent(subscript)
            if not isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)):
                continue
            if parent.iter is not subscript:
                continue
            looped = not isinstance(parent, ast.comprehension) and self._adds_in(parent)
            if looped or self.analysis.sink_of(subscript) is not None:
                found.append(subscript)
        return found

    def _adds_in(self, loop: ast.For | ast.AsyncFor) -> bool:
        """The loop's body appends messages to a message list."""
        return any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("append", "extend")
            and self._adds_messages(node)
            and self.is_message_list(node.func.value)
            for statement in loop.body
            for node in ast.walk(statement)
        )

    def _stored_back(self, target: ast.expr, window: ast.Subscript) -> bool:
        """``self.history = msgs[-k:]`` where ``msgs`` was built from ``self.history``: the
        window of a working copy becomes the kept conversation."""
        base = window.value
        if not isinstance(target, ast.Attribute) or not isinstance(base, ast.Name):
            return False
        if not self._is_tail_slice(window):
            return False
        kept = self._constant(cast(ast.Slice, window.slice).lower)
        if kept is not None and kept >= -_CURRENT_EXCHANGE:
            return False  # the current exchange, not a window of the conversation
        if not (self.is_message_list(target) or self.is_message_list(base)):
            return False
        identity = self._identity(target)
        return identity is not None and any(
            self._identity(node) == identity
            for assignment in self._definitions(base)
            for binding in self.analysis.bindings.values_of(assignment)
            for node in ast.walk(binding.value)
            if isinstance(node, ast.Attribute)
        )

    def _returned_windows(self) -> list[ast.Subscript]:
        """``return {"messages": history[-k:]}`` where ``history`` is ``state["messages"]`` of a
        parameter: a graph node's update that replaces the kept conversation by its window
        (unless the state declares a reducer for it, which merges the update instead)."""
        found = []
        for node in self.document.nodes(ast.Return):
            if not isinstance(node.value, ast.Dict):
                continue
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                field_name = string_value(key) if key is not None else None
                if field_name is None or field_name not in _LIST_WORDS:
                    continue
                for window in self._values(value):
                    if not isinstance(window, ast.Subscript) or not self._is_tail_slice(window):
                        continue
                    kept = self._constant(cast(ast.Slice, window.slice).lower)
                    if kept is not None and kept >= -_CURRENT_EXCHANGE:
                        continue
                    state = self._field_of_parameter(window.value, field_name)
                    if state is not None and not self._reduced(state, field_name):
                        found.append(window)
        return found

    def _values(self, node: ast.expr) -> list[ast.expr]:
        """``node``, or what the name ``node`` is bound to (its element of a tuple display)."""
        if not isinstance(node, ast.Name):
            return [node]
        out = []
        bindings = self.analysis.bindings
        for assignment in bindings.reaching(node):
            for binding in bindings.values_of(assignment):
                value = binding.value
                if binding.position is not None:
                    if not isinstance(value, ast.Tuple) or len(value.elts) <= binding.position:
                        continue
                    value = value.elts[binding.position]
                out.append(value)
        return out

    def _field_of_parameter(self, node: ast.expr, field_name: str) -> ast.arg | None:
        """The parameter ``state`` of ``state["messages"]``, ``state.get("messages")`` or
        ``state.messages`` (directly or through a name), for ``field_name``."""
        for value in self._values(node):
            if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
                owner = value.func.value if value.func.attr == "get" else None
                read = string_value(value.args[0]) if value.args else None
            elif isinstance(value, ast.Subscript):
                owner, read = value.value, string_value(index_of(value))
            elif isinstance(value, ast.Attribute):
                owner, read = value.value, value.attr
            else:
                continue
            if read != field_name or not isinstance(owner, ast.Name):
                continue
            for assignment in self._definitions(owner):
                if isinstance(assignment.node, ast.arg):
                    return assignment.node
        return None

    def _reduced(self, state: ast.arg, field_name: str) -> bool:
        """The state's class, defined here, gives the field a reducer (``Annotated[list,
        add_messages]``) or derives from ``MessagesState``; an unknown class is taken as
        having none."""
        annotation = state.annotation
        if not isinstance(annotation, ast.Name):
            return False
        if annotation.id.endswith("MessagesState"):
            return True
        for assignment in self.analysis.bindings.assignments(annotation):
            declared = assignment.node
            if not isinstance(declared, ast.ClassDef):
                continue
            if any(self.document.code(b).endswith("MessagesState") for b in declared.bases):
                return True
            for statement in declared.body:
                if (
                    isinstance(statement, ast.AnnAssign)
                    and isinstance(statement.target, ast.Name)
                    and statement.target.id == field_name
                ):
                    return "Annotated" in self.document.code(statement.annotation)
        return False

    def _sent_slices(
        self, expr: ast.AST, seen: frozenset[int] = frozenset()
    ) -> list[ast.Subscript]:
        """The slices ``expr`` is made of, through names and local functions' returns (each
        value once: ``messages = [system, *messages]`` reads its own earlier binding)."""
        if id(expr) in seen:
            return []
        seen |= {id(expr)}
        if isinstance(expr, ast.Subscript):
            return [expr]
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            return self._sent_slices(expr.left, seen) + self._sent_slices(expr.right, seen)
        if isinstance(expr, ast.List):
            return [s for e in expr.elts for s in self._sent_slices(e, seen)]
        if isinstance(expr, ast.Starred):
            return self._sent_slices(expr.value, seen)
        if isinstance(expr, ast.Call):
            function = self.document.local_function(expr.func)
            if function is None:
                return []
            returns = self.analysis.bindings.returns_of(function)
            return [s for value in returns for s in self._sent_slices(value, seen)]
        if isinstance(expr, ast.Name):
            out = []
            for assignment in self.document.assignments(expr):
                for binding in self.analysis.bindings.values_of(assignment):
                    if not isinstance(binding.value, ast.Name):
                        out += self._sent_slices(binding.value, seen)
            return out
        return []

    @staticmethod
    def _is_tail_slice(subscript: ast.Subscript) -> bool:
        window = slice_of(subscript)
        if window is None:
            return False
        return _negative(window.lower) and window.upper is None and not _is_minus_one(window.lower)

    def _rest_after_head(self, subscript: ast.Subscript) -> bool:
        """``[m[0]] + m[start:]`` or ``m[:1] + m[start:]``: the head, then a moving start."""
        window = slice_of(subscript)
        if window is None:
            return False
        if window.upper is not None or window.lower is None or _int(window.lower) is not None:
            return False
        parent = self.document.parent(subscript)
        if not isinstance(parent, ast.BinOp) or parent.right is not subscript:
            return False
        head = parent.left
        while isinstance(head, ast.BinOp) and isinstance(head.op, ast.Add):
            head = head.left  # [m[0]] + [summary] + m[start:]
        if isinstance(head, ast.List) and head.elts:
            head = head.elts[0]
            head = head.value if isinstance(head, ast.Starred) else head
        base = self.document.code(subscript.value)
        if not isinstance(head, ast.Subscript) or self.document.code(head.value) != base:
            return False
        cut = head.slice
        # m[:i] + extra + m[i:] keeps every message: an insertion, not a window.
        code = self.document.code
        return not (
            isinstance(cut, ast.Slice) and cut.upper and code(cut.upper) == code(window.lower)
        )

    def _kept(self, subscript: ast.Subscript) -> bool:
        """The slice is joined to a head (``head + m[-k:]``, directly or through a name) or is a
        kept conversation's recent part handed on, and keeps more than the current exchange
        (``m[-3:]`` is a tool call and its result)."""
        kept = _int(cast(ast.Slice, subscript.slice).lower)  # a tail slice
        if kept is not None and kept >= -_CURRENT_EXCHANGE:
            return False
        node: ast.AST = subscript
        for parent in self.document.ancestors(subscript):
            if isinstance(parent, ast.IfExp) and node is not parent.test:
                node = parent
                continue
            # ``[render(m) for m in self._messages[-k:]]``: the window, message by message
            if isinstance(parent, ast.comprehension) and parent.iter is node:
                node = parent
                continue
            if isinstance(parent, ast.ListComp) and node in parent.generators:
                node = parent
                continue
            if isinstance(parent, ast.BinOp):
                return isinstance(parent.op, ast.Add)
            if isinstance(parent, ast.Return):
                return self._instance_window(subscript, node)
            if isinstance(parent, ast.Assign) and len(parent.targets) == 1:
                return self._joined_later(parent.targets[0], parent) or self._instance_window(
                    subscript, node
                )
            return False
        return False

    def _instance_window(self, subscript: ast.Subscript, handed: ast.AST) -> bool:
        """``return self._messages[-self.size:]`` (or a comprehension over it: ``handed`` is
        what is returned) in a method named for what a request is sent (``get_messages``,
        ``buffer``): the recent part of the conversation its object keeps, handed on as the
        conversation (``recent_for_display`` hands on something else)."""
        base = subscript.value
        function = self.document.enclosing_function(subscript)
        return (
            isinstance(base, ast.Attribute)
            and leaf(base.value) == "self"
            and function is not None
            and bool(_HANDED_ON_WORDS.intersection(split_words(function.name)))
            and isinstance(handed, ast.expr)
            and self._handed_on(handed)
        )

    def _joined_later(self, target: ast.expr, statement: ast.Assign) -> bool:
        """``target`` is an operand of a ``+`` in the same function."""
        if not isinstance(target, ast.Name):
            return False
        function = self.document.enclosing_function(statement)
        return any(
            isinstance(node.op, ast.Add)
            and any(isinstance(o, ast.Name) and o.id == target.id for o in (node.left, node.right))
            and self.document.enclosing_function(node) is function
            for node in self.document.nodes(ast.BinOp)
        )

    def _constant(self, node: ast.expr | None) -> int | None:
        """An integer literal, a name bound once to one (``MAX_TURNS = 20``), or a sum or
        difference of those (``MAX_TURNS + 1``)."""
        value = _int(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
            left, right = self._constant(node.left), self._constant(node.right)
            if left is None or right is None:
                return None
            return left + right if isinstance(node.op, ast.Add) else left - right
        if value is not None or not isinstance(node, (ast.Name, ast.UnaryOp)):
            return value
        negate = isinstance(node, ast.UnaryOp)
        name = node.operand if isinstance(node, ast.UnaryOp) else node
        if not isinstance(name, ast.Name):
            return None
        bindings = self.analysis.bindings
        values = [b.value for a in bindings.reaching(name) for b in bindings.values_of(a)]
        number = _int(values[0]) if len(values) == 1 else None
        if number is None:
            return None
        return -number if negate else number

    def _cuts_in_blocks(self, subscript: ast.Subscript, base: ast.AST) -> bool:
        """``if len(m) > N: m = m[-k:]`` (or ``m[-k:] if len(m) > N else m``) with N well above
        k cuts many messages at once."""
        lower = cast(ast.Slice, subscript.slice).lower  # a tail or rest slice
        kept = self._constant(lower)
        child: ast.AST = subscript
        for ancestor in self.document.ancestors(subscript):
            guarded = isinstance(ancestor, ast.IfExp) and ancestor.body is child
            child = ancestor
            if isinstance(ancestor, (*FUNCTIONS, ast.ClassDef)):
                break
            if not isinstance(ancestor, (ast.If, ast.While)) and not guarded:
                continue
            assert isinstance(ancestor, (ast.If, ast.While, ast.IfExp))
            bound = self._guard_bound(ancestor.test, base)
            if bound is None:
                continue
            if bound is True or kept is None:
                # Unknown sizes: only the same expression on both sides is known to slide.
                comparator = _without_offset(cast(ast.Compare, ancestor.test).comparators[0])
                count = _kept_count(lower)
                if count is None:
                    return True  # a start (``m[:1] + m[start:]``), not a count of kept messages
                return ast.dump(comparator) != ast.dump(count)
            cut = bound + 1 + kept  # kept is negative: -k keeps k messages
            return cut >= max(2, self.min_cut_fraction * -kept)
        return False

    # -- rewritten tool output --------------------------------------------------------------

    def _content_writes(self) -> Iterator[tuple[ast.Subscript | ast.Attribute, ast.AST, ast.Name]]:
        """Each write to a message's text (``m["content"] = ...``, ``m.content = ...``), with
        its statement and the name of the message written."""
        writes = [(t, s) for t, s in self.collector.subscript_writes] + [
            (t, t) for t in self.collector.attribute_writes
        ]
        for target, statement in writes:
            element = target.value
            field_name = target.attr if isinstance(target, ast.Attribute) else self._key(target)
            if field_name in _CONTENT_FIELDS and isinstance(element, ast.Name):
                yield target, statement, element

    def _loop_rewrites(self) -> list[HistoryEdit]:
        out = []
        for target, statement, element in self._content_writes():
            loop = self._loop_over_messages(element, statement)
            if loop is None:
                # A content block of a message (``for block in m["content"]``).
                outer = self._loop_over_blocks(element, statement)
                if (
                    outer is not None
                    and self._tool_condition(statement, element)
                    and self.outlives_request(_walked(outer), statement)
                ):
                    out.append(self._tool_rewrite(target))
                continue
            if self._tool_condition(statement, element):
                out.append(self._tool_rewrite(target))
            elif isinstance(loop.iter, ast.Subscript) and self.outlives_request(
                loop.iter.value, statement
            ):
                # Only part of the history (``messages[:-4]``) is rewritten: the older turns
                # change while the newer ones stay. A pass over every message is a
                # normalisation that renders the same way on every turn.
                out.append(
                    HistoryEdit(
                        HISTORY_EDIT,
                        target,
                        f"`{self._owner(target)}` rewrites "
                        "messages already sent; the next request differs from "
                        "the first rewritten message on",
                    )
                )
        return out

    def _copy_rewrites(self) -> list[HistoryEdit]:
        """``for i, m in enumerate(history): if old(i): m = copy(m); m["content"] = ...``: a
        copy of the history rebuilt with the messages at some positions rewritten. Which ones
        depends on where they stand (``i < len(history) - keep``, ``i not in omitted``), and
        that moves as the conversation grows: a message sent whole is sent rewritten next."""
        out = []
        for target, statement, element in self._content_writes():
            found = self._copied_item(element, statement)
            if found is None:
                continue
            loop, item = found
            source = _loop_source(loop)
            if not (
                self._walks_messages(source, loop, item)
                and self._by_position(statement, loop, source)
                and self._collected_in(element, loop)
                and self.outlives_request(source, statement)
            ):
                continue
            out.append(
                HistoryEdit(
                    HISTORY_EDIT,
                    target,
                    f"`{self._owner(target)}` rewrites the messages of `{self._owner(source)}` "
                    "at some positions, and which ones moves as the conversation grows: a "
                    "message sent whole is sent rewritten later, so the next request differs "
                    "from it on",
                    f"{self._owner(source)} rewrite",
                )
            )
        return out

    def _copied_item(
        self, element: ast.Name, at: ast.AST
    ) -> tuple[ast.For | ast.AsyncFor, ast.Name] | None:
        """The loop around ``at`` and the item it binds, where ``element`` is a copy of that
        item made in the loop (``data = entry.copy()``, ``m = copy.deepcopy(m)``)."""
        loop = next(
            (a for a in self.document.ancestors(at) if isinstance(a, (ast.For, ast.AsyncFor))),
            None,
        )
        if loop is None:
            return None
        for assignment in self._definitions(element):
            for binding in self.analysis.bindings.values_of(assignment):
                value = binding.value
                if not any(a is loop for a in self.document.ancestors(value)):
                    continue
                source = copied_list(value)
                if isinstance(value, ast.Call) and leaf(value.func) == "dict" and value.args:
                    source = value.args[0]  # ``dict(entry)``
                if isinstance(value, ast.Dict) and value.keys == [None]:
                    source = value.values[0]  # ``{**entry}``
                if isinstance(source, ast.Name) and _binds(loop, source):
                    return loop, source
        return None

    def _walks_messages(
        self, source: ast.expr, loop: ast.For | ast.AsyncFor, item: ast.Name
    ) -> bool:
        """``source`` is a message list, or a history whose items the loop reads as messages
        (``item["role"]``, ``item["content"]``)."""
        if self.is_message_list(source):
            return True
        if not isinstance(source, (ast.Name, ast.Attribute)):
            return False
        name = source.id if isinstance(source, ast.Name) else source.attr
        if not _HISTORY_LIST_WORDS.intersection(split_words(name)):
            return False
        return any(
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id == item.id
            and self._key(node) in ("role", "content")
            for node in ast.walk(loop)
        )

    def _by_position(self, at: ast.AST, loop: ast.For | ast.AsyncFor, source: ast.expr) -> bool:
        """``at`` runs under a test in ``loop`` of the item's position (:meth:`_positional`)."""
        for ancestor in self.document.ancestors(at):
            if ancestor is loop:
                return False
            if isinstance(ancestor, ast.If) and self._positional(ancestor.test, loop, source):
                return True
        return False

    def _positional(self, test: ast.expr, loop: ast.For | ast.AsyncFor, source: ast.expr) -> bool:
        """``test`` reads the position of ``loop``'s item: the loop's index, or the history's
        length (not a fixed head, ``i == 0``, ``i < 2``)."""
        target = loop.target
        index = (
            target.elts[0].id
            if isinstance(target, ast.Tuple)
            and target.elts
            and isinstance(target.elts[0], ast.Name)
            else None
        )
        names = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
        compared = [n for n in ast.walk(test) if isinstance(n, (ast.Compare, ast.Call))]
        fixed_head = all(
            isinstance(c, ast.Compare)
            and all(_int(x) is not None for x in c.comparators)
            and not any(isinstance(x, ast.Call) for x in ast.walk(c))
            for c in compared
        )
        if index is not None and index in names and not fixed_head:
            return True
        return any(
            isinstance(n, ast.Call)
            and leaf(n.func) == "len"
            and n.args
            and self._identity(n.args[0]) == self._identity(source)
            for n in compared
        )

    def _position_replacements(self) -> list[HistoryEdit]:
        """``for i, e in enumerate(history): if i < len(history) - k: out.append(Masked())
        else: out.append(e)``: a copy of the history with the items at some positions replaced
        by new ones; which ones moves as the conversation grows."""
        out = []
        for loop in self.document.nodes(ast.For, ast.AsyncFor):
            item = loop.target.elts[-1] if isinstance(loop.target, ast.Tuple) else loop.target
            source = _loop_source(loop)
            if not isinstance(item, ast.Name) or not self._walks_messages(source, loop, item):
                continue
            for branch in (n for n in ast.walk(loop) if isinstance(n, ast.If)):
                if not self._positional(branch.test, loop, source):
                    continue
                kept = _appended_in(branch.orelse) + _appended_in(branch.body)
                if not any(isinstance(v, ast.Name) and v.id == item.id for v in kept):
                    continue
                replaced = [v for v in kept if not isinstance(v, ast.Name)]
                if replaced and self.outlives_request(source, branch):
                    out.append(
                        HistoryEdit(
                            HISTORY_EDIT,
                            replaced[0],
                            f"a copy of `{self._owner(source)}` replaces the items at some "
                            "positions, and which ones moves as the conversation grows: an item "
                            "sent whole is sent replaced later, so the next request differs "
                            "from it on",
                            f"{self._owner(source)} rewrite",
                        )
                    )
        return out

    def _tool_rewrite(self, target: ast.AST) -> HistoryEdit:
        return HistoryEdit(
            TOOL_OUTPUT,
            target,
            f"`{self._owner(target)}` rewrites tool results already sent; the next request "
            "differs from the first rewritten result on",
        )

    def _replaced_elements(self) -> list[HistoryEdit]:
        """``for m in history: if old(m): m = Message(...)``, the copy kept in its place."""
        out = []
        for target, value in self.collector.reassignments:
            if not isinstance(target, ast.Name) or not builds_message(value):
                continue
            loop = self._loop_over_messages(target, value)
            if loop is None or not self._conditional_in(value, loop):
                continue
            if not self._collected_in(target, loop):
                continue
            source = _loop_source(loop)
            if self.outlives_request(source, value):
                out.append(
                    HistoryEdit(
                        HISTORY_EDIT,
                        value,
                        f"`{self._owner(target)}` is replaced by a new message for some of "
                        f"the messages of `{self._owner(source)}` already sent; the next "
                        "request differs from the first replaced message on",
                        f"{self._owner(source)} replace",
                    )
                )
        return out

    def _collected_in(self, element: ast.Name, loop: ast.For | ast.AsyncFor) -> bool:
        """The loop appends the element itself to a list (the rebuilt history)."""
        return any(
            _method_of(call).attr == "append"
            and len(arguments(call)) == 1
            and isinstance(_first_argument(call), ast.Name)
            and cast(ast.Name, _first_argument(call)).id == element.id
            and any(a is loop for a in self.document.ancestors(call))
            for call in self.collector.method_calls
        )

    def _conditional_in(self, node: ast.AST, loop: ast.For | ast.AsyncFor) -> bool:
        """``node`` sits under an ``if`` inside ``loop``."""
        for ancestor in self.document.ancestors(node):
            if ancestor is loop:
                return False
            if isinstance(ancestor, ast.If):
                return True
        return False

    @staticmethod
    def _key(target: ast.expr) -> str | None:
        if isinstance(target, ast.Subscript):
            return string_value(index_of(target))
        return None

    def _loop_over_messages(self, element: ast.Name, at: ast.AST) -> ast.For | ast.AsyncFor | None:
        """The loop around ``at`` that walks a message list as ``element``: ``for element in
        messages``, or ``for i in range(n): element = messages[i]``."""
        for ancestor in self.document.ancestors(at):
            if isinstance(ancestor, (*FUNCTIONS, ast.ClassDef)):
                return None
            if not isinstance(ancestor, (ast.For, ast.AsyncFor)):
                continue
            if _binds(ancestor, element):
                return ancestor if self.is_message_list(_loop_source(ancestor)) else None
            indexed = _indexed_list(ancestor, element.id)
            if indexed is not None:
                return ancestor if self.is_message_list(indexed) else None
        return None

    def _loop_over_blocks(self, element: ast.Name, at: ast.AST) -> ast.For | ast.AsyncFor | None:
        """The loop over messages around ``for element in m["content"]``, if ``at`` is in one."""
        for ancestor in self.document.ancestors(at):
            if isinstance(ancestor, (*FUNCTIONS, ast.ClassDef)):
                return None
            if isinstance(ancestor, (ast.For, ast.AsyncFor)) and _binds(ancestor, element):
                message = _content_of(self._bound_content(ancestor.iter))
                if message is None:
                    return None
                return self._loop_over_messages(message, ancestor)
        return None

    def _bound_content(self, iterated: ast.expr) -> ast.expr:
        """What ``for block in content`` walks where ``content = m.get("content", [])`` is the
        one value the name has there; else ``iterated`` itself."""
        if not isinstance(iterated, ast.Name):
            return iterated
        values = [
            b.value
            for a in self._definitions(iterated)
            for b in self.analysis.bindings.values_of(a)
        ]
        return values[0] if len(values) == 1 else iterated

    def _tool_condition(self, at: ast.AST, element: ast.Name) -> bool:
        """``at`` runs only for tool output: under ``if <tool test>``, or after ``if not
        <tool test>: continue`` in the loop's body."""
        child = at
        for ancestor in self.document.ancestors(at):
            if isinstance(ancestor, (ast.For, ast.AsyncFor)):
                return any(_skips_other_than_tool(s) for s in _before(ancestor.body, child))
            if isinstance(ancestor, FUNCTIONS):
                return False
            if isinstance(ancestor, (ast.If, ast.IfExp)) and _mentions_tool(ancestor.test):
                return True
            child = ancestor
        return False

    def _comprehension_rewrites(self) -> list[HistoryEdit]:
        out = []
        for target, value in self.collector.reassignments:
            if not isinstance(value, ast.ListComp) or not self.is_message_list(target):
                continue
            source = value.generators[0].iter
            if isinstance(source, ast.Subscript):
                source = source.value
            if self._identity(source) != self._identity(target):
                continue
            element = value.elt
            if isinstance(element, ast.IfExp) and _mentions_tool(element.test):
                out.append(
                    HistoryEdit(
                        TOOL_OUTPUT,
                        value,
                        f"`{self._owner(target)}` is rebuilt "
                        "with older tool results replaced; the next request "
                        "differs from the first replaced result on",
                    )
                )
            elif value.generators[0].ifs and self.outlives_request(target, value):
                out.append(
                    HistoryEdit(
                        HISTORY_EDIT,
                        value,
                        f"`{self._owner(target)}` is filtered, "
                        "dropping earlier messages of a conversation that is sent "
                        "again",
                    )
                )
        return out


def _binds(loop: ast.For | ast.AsyncFor, element: ast.Name) -> bool:
    """The loop names each item ``element`` (``for m in ...``, ``for i, m in enumerate(...)``)."""
    target = loop.target
    names = target.elts if isinstance(target, ast.Tuple) else [target]
    return any(isinstance(n, ast.Name) and n.id == element.id for n in names)


def _content_of(node: ast.expr) -> ast.Name | None:
    """``m`` of ``m["content"]``, ``m.content`` or ``m.get("content")``."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr != "get" or not node.args:
            return None
        field, owner = string_value(node.args[0]), node.func.value
    elif isinstance(node, ast.Subscript):
        field, owner = string_value(index_of(node)), node.value
    elif isinstance(node, ast.Attribute):
        field, owner = node.attr, node.value
    else:
        return None
    return owner if field in _CONTENT_FIELDS and isinstance(owner, ast.Name) else None


def _appended_in(body: list[ast.stmt]) -> list[ast.expr]:
    """What the statements of ``body`` (not nested deeper) append: ``x`` of ``out.append(x)``."""
    found = []
    for statement in body:
        call = statement.value if isinstance(statement, ast.Expr) else None
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append"
            and len(call.args) == 1
        ):
            found.append(call.args[0])
    return found


def _before(body: list[ast.stmt], child: ast.AST) -> list[ast.stmt]:
    """The statements of ``body`` that run before ``child`` (empty if it is not in it)."""
    for position, statement in enumerate(body):
        if statement is child:
            return body[:position]
    return []


def _skips_other_than_tool(statement: ast.stmt) -> bool:
    """``if m["type"] != "tool_result": continue``: what follows runs only for tool output."""
    if not isinstance(statement, ast.If) or statement.orelse:
        return False
    if len(statement.body) != 1 or not isinstance(statement.body[0], ast.Continue):
        return False
    tests = statement.test.values if isinstance(statement.test, ast.BoolOp) else [statement.test]
    if isinstance(statement.test, ast.BoolOp) and isinstance(statement.test.op, ast.And):
        return False
    return any(_excludes_tool(test) for test in tests)


def _excludes_tool(test: ast.expr) -> bool:
    """A test that is true for what is not tool output (``role != "tool"``, ``not is_tool``)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _mentions_tool(test.operand)
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.NotEq, ast.IsNot, ast.NotIn))
        and _mentions_tool(test)
    )


def _kept_count(lower: ast.expr | None) -> ast.expr | None:
    """How many messages a negative slice start keeps: ``k`` of ``-k``, ``k * 2`` of
    ``-k * 2`` (``None`` for any other start)."""
    if isinstance(lower, ast.UnaryOp) and isinstance(lower.op, ast.USub):
        return lower.operand
    if isinstance(lower, ast.BinOp) and isinstance(lower.op, ast.Mult):
        left, right = _kept_count(lower.left), _kept_count(lower.right)
        if (left is None) != (right is None):
            return ast.BinOp(left or lower.left, ast.Mult(), right or lower.right)
    return None


def _without_offset(node: ast.expr) -> ast.expr:
    """``k`` of ``k + 1`` or ``k - 2``: a bound a few messages off the kept count still slides."""
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, (ast.Add, ast.Sub))
        and (offset := _int(node.right)) is not None
        and offset < _CURRENT_EXCHANGE
    ):
        return node.left
    return node


def _indexed_list(loop: ast.For | ast.AsyncFor, element: str | None = None) -> ast.expr | None:
    """``messages`` where ``loop`` is ``for i in range(...)`` and its body reads ``element =
    messages[i]`` (any name, without ``element``)."""
    iterated = loop.iter
    if not (isinstance(iterated, ast.Call) and leaf(iterated.func) == "range"):
        return None
    if not isinstance(loop.target, ast.Name):
        return None
    for statement in loop.body:
        if (
            isinstance(statement, ast.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and element in (None, statement.targets[0].id)
            and isinstance(statement.value, ast.Subscript)
            and isinstance(statement.value.slice, ast.Name)
            and statement.value.slice.id == loop.target.id
        ):
            return statement.value.value
    return None


def _walked(loop: ast.For | ast.AsyncFor) -> ast.expr:
    """The message list ``loop`` walks: ``messages`` of ``for i in range(n): m = messages[i]``,
    else its source."""
    return _indexed_list(loop) or _loop_source(loop)


def _loop_source(loop: ast.For | ast.AsyncFor) -> ast.expr:
    """The list a loop walks: ``m`` of ``m``, ``m[:-4]``, ``enumerate(m[:-4])``, ``reversed(m)``."""
    source = loop.iter
    if isinstance(source, ast.Call):
        source = _first_argument(source) or source
    if isinstance(source, ast.Subscript):
        source = source.value
    return source


def _newest_first(iterated: ast.expr) -> ast.expr | None:
    """The list a loop walks from its end: ``reversed(m)``, ``m[::-1]``, ``m[-k:][::-1]``,
    ``reversed(m[1:])`` (the list itself, without its slices)."""
    if isinstance(iterated, ast.Call) and leaf(iterated.func) == "reversed" and iterated.args:
        source = iterated.args[0]
    elif isinstance(iterated, ast.Subscript) and _is_minus_one(
        getattr(slice_of(iterated), "step", None)
    ):
        source = iterated.value
    else:
        return None
    while isinstance(source, ast.Subscript) and slice_of(source) is not None:
        source = source.value
    return source


def _names_budget(test: ast.expr) -> bool:
    """A test that reads a size budget (``used + n > self.token_limit``, ``n <= remaining``)."""
    names = [leaf(n) for n in ast.walk(test) if isinstance(n, (ast.Name, ast.Attribute))]
    return any(
        _LOOP_BUDGET_WORDS.intersection(split_words(name)) for name in names if name is not None
    )


def _measures(test: ast.expr) -> bool:
    """A test of a size: a budget's name, a token count or ``len(...)``."""
    counted = any(
        isinstance(n, ast.Call) and (leaf(n.func) or "").startswith(("len", "num_tokens", "count"))
        for n in ast.walk(test)
    )
    return counted or _names_budget(test)


def _collects(nodes: list[ast.AST], element: str) -> bool:
    """Whether the loop body adds its element to a list (``kept.append(m)``,
    ``kept.insert(0, m)``, ``kept = [m] + kept``)."""
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            given = node.args if node.func.attr in ("append", "insert") else []
        else:
            given = node.elts if isinstance(node, ast.List) else []
        if any(isinstance(a, ast.Name) and a.id == element for a in given):
            return True
    return False


def _holds(value: ast.expr | None, name: str) -> bool:
    """Whether ``value`` is the list ``name`` or a display or sum that has its items."""
    if isinstance(value, ast.Starred):
        value = value.value
    if isinstance(value, ast.Name):
        return value.id == name
    if isinstance(value, (ast.List, ast.Tuple)):
        return any(_holds(e, name) for e in value.elts)
    if isinstance(value, ast.BinOp):
        return _holds(value.left, name) or _holds(value.right, name)
    return False


def _mentions_tool(test: ast.AST) -> bool:
    """Whether a condition names a tool role (``"tool"``, ``m.role == Role.TOOL``) or a tool
    message class; an f-string's literal pieces are not string literals of their own."""
    stack = [test]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Constant) and string_value(node) in _TOOL_ROLES:
            return True
        if isinstance(node, ast.Name) and node.id in ("ToolMessage", "FunctionMessage"):
            return True
        if isinstance(node, ast.Attribute) and node.attr.lower() in _TOOL_ROLES:
            return True
        if isinstance(node, ast.JoinedStr):
            stack += [v for v in node.values if not isinstance(v, ast.Constant)]
        else:
            stack += ast.iter_child_nodes(node)
    return False


def history_edits(document: PythonDocument) -> list[HistoryEdit]:
    """Edits to conversations that are sent again (PFX501, PFX502, PFX504), found once."""
    found = document.derived.get("history")
    if found is None:
        fraction = document.ctx.option(SLIDING_WINDOW, "min-cut-fraction")
        analysis = Analysis.of(document)
        text = document.text
        if (
            analysis.message_lists
            or mentions_chat(text)
            or any(name in text for name in SHRINKER_CLASSES)
        ):
            found = HistoryAnalysis(document, analysis, fraction).edits()
        else:
            found = []  # lists named ``messages`` in code that never speaks of chats
        document.derived["history"] = found
    return found


def _cut_call(statement: ast.AST) -> ast.Call | None:
    """The call of ``x = trim(x, n)`` or ``await prune(x, n)``."""
    value = getattr(statement, "value", None)
    if isinstance(value, ast.Await):
        value = value.value
    return value if isinstance(value, ast.Call) else None
