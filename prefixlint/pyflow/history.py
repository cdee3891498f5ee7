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

import re
from dataclasses import dataclass
from functools import cached_property
from typing import TypeAlias, TypeGuard, cast

import libcst as cst
from libcst.metadata import BaseAssignment, GlobalScope

from prefixlint.codes import HISTORY_EDIT, SLIDING_WINDOW, TOOL_OUTPUT
from prefixlint.pyflow.analysis import Analysis
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.message_types import copied_list, holds_messages, is_message_class
from prefixlint.pyflow.sinks import string_value
from prefixlint.vocabulary import split_words

_LIST_WORDS = frozenset({"messages", "conversation", "transcript"})
_NOT_CHAT_WORDS = frozenset(
    {
        "by",
        "error",
        "errors",
        "warning",
        "warnings",
        "log",
        "logs",
        "validation",
        "status",
        "commit",
        "git",
        "debug",
        "email",
        "queue",
        "kafka",
        "flash",
        "pending",
        "unread",
    }
)
# What a list defined as messages needs in the text: an annotation, or a copy of a list
# named like a conversation (``history.copy()``, ``list(messages)``, ``messages[:]``).
_MESSAGE_ANNOTATION = re.compile(r"""\[\s*["']?[\w.]*Message""")
_NAMED_COPY = re.compile(
    r"(?:messages|history|conversation|transcript)(?:\.copy\(\)|\[:\])"
    r"|(?:list|deepcopy|copy)\(\s*[\w.]*(?:messages|history|conversation|transcript)\s*\)"
)
# Callees that summarise a conversation, or cut it by a size given with it.
_SUMMARY_WORDS = frozenset({"compress", "summarize", "summarise", "condense", "compact"})
_CUT_WORDS = frozenset({"split", "trim", "truncate"})
_BUDGET_WORDS = frozenset({"token", "tokens", "limit", "budget"})
# Names of a conversation's parts, besides the message lists.
_CONVERSATION_WORDS = frozenset({"messages", "msgs", "history", "conversation", "rounds", "turns"})
# Messages at the end of a conversation that belong to the turn being answered.
_CURRENT_EXCHANGE = 3
# Fields of a message that hold what the model reads.
_CONTENT_FIELDS = frozenset({"content", "blocks", "text", "parts", "output"})
_TOOL_ROLES = frozenset(
    {"tool", "tool_result", "function", "function_call_output", "ipython", "observation"}
)


@dataclass(frozen=True)
class HistoryEdit:
    """A finding; ``subject`` is the list and the kind of change (``messages pop``): each
    subject is reported once per function and code."""

    code: str
    node: cst.CSTNode
    message: str
    subject: str = ""


def _is_minus_one(node: cst.BaseExpression | None) -> bool:
    return (
        isinstance(node, cst.UnaryOperation)
        and isinstance(node.operator, cst.Minus)
        and isinstance(node.expression, cst.Integer)
        and node.expression.value == "1"
    )


def _negative(node: cst.BaseExpression | None) -> TypeGuard[cst.UnaryOperation]:
    return isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)


def _int(node: cst.BaseExpression | None) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if _negative(node) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value, 0)
    return None


# A list's identity: the assignments of its name, or (class, attribute) for ``self.X``.
_Identity: TypeAlias = frozenset[int] | tuple[int, str]


def _method_of(call: cst.Call) -> cst.Attribute:
    """The ``receiver.method`` of a call in ``_Collector.method_calls`` (each has one)."""
    return cast(cst.Attribute, call.func)


def _positional_index(node: cst.BaseExpression) -> bool:
    """An index that can be a list position (not a string key or an ``id``/``key``/``name``)."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return False
    if isinstance(node, (cst.Name, cst.Attribute)):
        name = node.value if isinstance(node, cst.Name) else node.attr.value
        words = split_words(name)
        return not words or words[-1] not in ("id", "key", "name", "uuid")
    return True


class _Collector:
    """Every statement shape that can change a list in place, from the document's nodes."""

    def __init__(self, document: PythonDocument) -> None:
        self.subscript_writes: list[tuple[cst.Subscript, cst.CSTNode]] = []
        self.attribute_writes: list[cst.Attribute] = []
        self.reassignments: list[tuple[cst.BaseExpression, cst.BaseExpression]] = []
        self.deletes: list[cst.Subscript] = []
        node: cst.Assign | cst.AugAssign | cst.Del
        target: cst.BaseExpression
        for node in document.nodes(cst.Assign, cst.AugAssign):
            targets = (
                [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            )
            for target in targets:
                self._write_target(target, node)
                if isinstance(node, cst.Assign):
                    self.reassignments.append((target, node.value))
        for node in document.nodes(cst.Del):
            elements = node.target.elements if isinstance(node.target, cst.Tuple) else None
            for target in [e.value for e in elements] if elements else [node.target]:
                if isinstance(target, cst.Subscript):
                    self.deletes.append(target)
        self.method_calls = [
            call for call in document.nodes(cst.Call) if isinstance(call.func, cst.Attribute)
        ]
        self.slices = bool(document.nodes(cst.Slice))

    def _write_target(self, target: cst.BaseExpression, statement: cst.CSTNode) -> None:
        if isinstance(target, cst.Subscript):
            self.subscript_writes.append((target, statement))
        elif isinstance(target, cst.Attribute):
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
                isinstance(v, (cst.Subscript, cst.ListComp))
                or (isinstance(v, cst.Call) and is_message_class(v.func))
                for _, v in self.reassignments
            )
            or any(
                _method_of(c).attr.value in ("insert", "pop", "remove") for c in self.method_calls
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
            if isinstance(a, (cst.For, cst.While))
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
            if method.attr.value in ("append", "extend", "insert") and self._adds_messages(call):
                found.add(self._identity(method.value))
        found.discard(None)
        return found

    # -- identity of a list -----------------------------------------------------------------

    def _identity(self, node: cst.CSTNode) -> _Identity | None:
        if isinstance(node, cst.Name):
            scope = self.document.scopes.get(node)
            if scope is None or node.value not in scope:
                return None
            return frozenset(id(a) for a in scope[node.value]) or None
        if (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value in ("self", "cls")
        ):
            owner = self.document.enclosing_class(node)
            return (id(owner), node.attr.value) if owner is not None else None
        return None

    def _list_parts(self, expr: cst.CSTNode) -> list[cst.CSTNode]:
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            return self._list_parts(expr.left) + self._list_parts(expr.right)
        if isinstance(expr, cst.List):
            return [e.value for e in expr.elements if isinstance(e, cst.StarredElement)]
        if isinstance(expr, cst.Subscript):
            return [expr.value]
        return [expr]

    def _adds_messages(self, call: cst.Call) -> bool:
        for arg in call.args:
            value = arg.value
            if isinstance(value, cst.Dict) and any(
                isinstance(e, cst.DictElement) and string_value(e.key) == "role"
                for e in value.elements
            ):
                return True
            if isinstance(value, cst.Call) and (
                is_message_class(value.func)
                or any(a.keyword is not None and a.keyword.value == "role" for a in value.args)
            ):
                return True
        return False

    def is_message_list(self, node: cst.CSTNode) -> bool:
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return False
        if self._named_messages(node):
            return True
        if (
            isinstance(node, cst.Name)
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
        text = self.document.text
        if _MESSAGE_ANNOTATION.search(text):
            return True
        return bool(_NAMED_COPY.search(text))

    def _named_messages(self, node: cst.Name | cst.Attribute) -> bool:
        name = node.value if isinstance(node, cst.Name) else node.attr.value
        words = split_words(name)
        if words and words[-1] in _LIST_WORDS and not _NOT_CHAT_WORDS.intersection(words):
            return self._identity(node) is not None
        return False

    def _definitions(self, node: cst.Name) -> list[BaseAssignment]:
        scope = self.document.scopes.get(node)
        return list(scope[node.value]) if scope and node.value in scope else []

    def _copied_sources(self, node: cst.Name) -> list[cst.BaseExpression]:
        """The lists ``node`` was assigned a copy of (``h = history.copy()``)."""
        bindings = self.analysis.bindings
        return [
            source
            for assignment in self._definitions(node)
            for binding in bindings.values_of(assignment)
            if (source := copied_list(binding.value)) is not None
        ]

    def _defined_as_messages(self, node: cst.Name, depth: int) -> bool:
        """Annotated as a list of messages, or a copy of such a list."""
        for assignment in self._definitions(node):
            target = getattr(assignment, "node", None)
            annotation = target.annotation if isinstance(target, cst.Param) else None
            if annotation is not None and holds_messages(annotation.annotation):
                return True
            parent = self.document.parent(target) if target is not None else None
            if isinstance(parent, cst.AnnAssign) and holds_messages(parent.annotation.annotation):
                return True
        return depth < 2 and any(
            self._named_messages(source) or self._defined_as_messages(source, depth + 1)
            if isinstance(source, cst.Name)
            else self.is_message_list(source)
            for source in self._copied_sources(node)
        )

    @cached_property
    def _typed_lists_possible(self) -> bool:
        """Whether any list is sent as messages or gets messages appended (no scopes needed)."""
        return bool(self.message_lists) or any(
            _method_of(call).attr.value in ("append", "extend", "insert")
            and self._adds_messages(call)
            for call in self.collector.method_calls
        )

    def outlives_request(self, node: cst.CSTNode, at: cst.CSTNode) -> bool:
        """Whether the list at ``node`` is sent again after the change at ``at``."""
        if isinstance(node, cst.Attribute):
            return True
        if not isinstance(node, cst.Name):
            return False
        assignments = self._definitions(node)
        sources = [
            s
            for s in self._copied_sources(node)
            if not (isinstance(s, cst.Name) and s.value == node.value)
        ]
        if any(self.outlives_request(s, at) for s in sources):
            return True  # an edited copy of a kept history is returned in its place
        function = self.document.enclosing_function(at)
        for assignment in assignments:
            target = getattr(assignment, "node", None)
            if isinstance(target, cst.Param):
                return True
            if function is not None and isinstance(assignment.scope, GlobalScope):
                return True
            if self._loop_between(target, at):
                return True
        return False

    def _loop_between(self, target: cst.CSTNode | None, at: cst.CSTNode) -> bool:
        """A loop that sends a request encloses ``at`` but not the assignment ``target``."""
        if target is None:
            return False
        around_target = {id(a) for a in self.document.ancestors(target)}
        for ancestor in self.document.ancestors(at):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                return False
            if (
                isinstance(ancestor, (cst.For, cst.While))
                and id(ancestor) not in around_target
                and id(ancestor) in self._sending_loops
            ):
                return True
        return False

    # -- findings ---------------------------------------------------------------------------

    def edits(self) -> list[HistoryEdit]:
        found: list[HistoryEdit] = []
        if self.collector.empty and not self.analysis.message_lists:
            return found
        found += self._subscript_writes()
        found += self._deletes()
        found += self._method_edits()
        found += self._loop_rewrites()
        found += self._windows()
        found += self._comprehension_rewrites()
        found += self._replaced_elements()
        found += self._summarized_splits()
        return self._once_per_list(found)

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

    def _owner(self, node: cst.CSTNode) -> str:
        return self.document.code(node)

    def _subscript_writes(self) -> list[HistoryEdit]:
        out = []
        target: cst.Subscript | cst.Attribute
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
            if target.attr.value not in _CONTENT_FIELDS:
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

    def _element(
        self, node: cst.BaseExpression
    ) -> tuple[cst.CSTNode | None, cst.BaseExpression | None]:
        """``(messages, i)`` for ``messages[i]`` or ``messages[i]["content"]``."""
        while isinstance(node, cst.Subscript):
            if isinstance(node.value, (cst.Name, cst.Attribute)):
                index = node.slice[0].slice if len(node.slice) == 1 else None
                if isinstance(index, cst.Index) and _positional_index(index.value):
                    return node.value, index.value
                return None, None
            node = node.value
        return None, None

    def _deletes(self) -> list[HistoryEdit]:
        out = []
        for target in self.collector.deletes:
            base = target.value
            if not self.is_message_list(base) or not self.outlives_request(base, target):
                continue
            index = target.slice[0].slice if len(target.slice) == 1 else None
            if isinstance(index, cst.Index) and _is_minus_one(index.value):
                continue
            if isinstance(index, cst.Slice) and index.lower is None and _negative(index.upper):
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
            method = _method_of(call).attr.value
            base = _method_of(call).value
            if method not in ("insert", "pop", "remove"):
                continue
            if not self.is_message_list(base) or not self.outlives_request(base, call):
                continue
            first = call.args[0].value if call.args else None
            if method == "pop" and (first is None or _is_minus_one(first)):
                continue
            if method == "insert" and self._is_length_of(first, base):
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

    def _is_length_of(self, node: cst.BaseExpression | None, base: cst.CSTNode) -> bool:
        return (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Name)
            and node.func.value == "len"
            and bool(node.args)
            and self._identity(node.args[0].value) == self._identity(base)
        )

    def _in_length_guard(self, node: cst.CSTNode, base: cst.CSTNode) -> bool:
        for ancestor in self.document.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                return False
            if isinstance(ancestor, (cst.If, cst.While)) and self._guard_bound(ancestor.test, base):
                return True
        return False

    def _guard_bound(self, test: cst.BaseExpression, base: cst.CSTNode) -> int | bool | None:
        """The N of ``len(base) > N`` (True when the bound is not a literal), else None."""
        if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
            return None
        if not self._is_length_of(test.left, base):
            return None
        target = test.comparisons[0]
        bound = self._constant(target.comparator)
        if bound is None:
            return True
        return bound + 1 if isinstance(target.operator, cst.GreaterThanEqual) else bound

    # -- sliding windows --------------------------------------------------------------------

    def _window_edit(self, node: cst.CSTNode, base: cst.CSTNode) -> HistoryEdit:
        return HistoryEdit(
            SLIDING_WINDOW,
            node,
            f"`{self._owner(node)}` keeps a sliding window of "
            f"`{self._owner(base)}`; the first kept message moves every turn, so "
            "no request reuses the previous one's cached messages",
        )

    def _summarized_splits(self) -> list[HistoryEdit]:
        """``older, recent = split_history(history, token_limit)`` or ``summary, rounds =
        compress_rounds(rounds)``: a call cuts the conversation in two, and the older part is
        dropped or summarised; the verbatim part starts later as the conversation grows."""
        out = []
        for node in self.document.nodes(cst.Assign):
            if len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Tuple):
                continue
            targets = node.targets[0].target.elements
            if len(targets) != 2 or not all(isinstance(e.value, cst.Name) for e in targets):
                continue
            call = node.value.expression if isinstance(node.value, cst.Await) else node.value
            if not isinstance(call, cst.Call) or not call.args or call.args[0].keyword:
                continue
            func = call.func
            callee = func.attr.value if isinstance(func, cst.Attribute) else ""
            callee = func.value if isinstance(func, cst.Name) else callee
            words = set(split_words(callee))
            if not words & (_SUMMARY_WORDS | _CUT_WORDS):
                continue
            if not words & _SUMMARY_WORDS and not self._budgeted(call):
                continue
            history = call.args[0].value
            if not self._conversation(history):
                continue
            out.append(
                HistoryEdit(
                    SLIDING_WINDOW,
                    node,
                    f"`{callee}()` cuts `{self._owner(history)}` in two and keeps only the "
                    "recent part verbatim; the first kept message moves as the conversation "
                    "grows, so no request reuses the previous one's cached messages",
                )
            )
        return out

    def _budgeted(self, call: cst.Call) -> bool:
        """Whether an argument after the first names a size (``token_limit``, ``max_tokens``)."""
        for argument in call.args[1:]:
            names = [argument.keyword.value] if argument.keyword else []
            names.append(self.document.code(argument.value))
            if any(set(split_words(n)) & _BUDGET_WORDS for n in names):
                return True
        return False

    def _conversation(self, node: cst.BaseExpression) -> bool:
        if self.is_message_list(node):
            return True
        if not isinstance(node, (cst.Name, cst.Attribute)):
            return False
        words = split_words(self.document.code(node).rsplit(".", 1)[-1])
        return bool(words) and words[-1] in _CONVERSATION_WORDS

    def _windows(self) -> list[HistoryEdit]:
        out = []
        seen: set[int] = set()
        candidates = []
        for target, value in self.collector.reassignments:
            if (
                isinstance(value, cst.Subscript)
                and self._is_tail_slice(value)
                and self.document.code(target) == self.document.code(value.value)
                and self._identity(target) == self._identity(value.value)
            ):
                candidates.append(value)
        for expr in self.analysis.message_lists:
            candidates += [p for p in self._sent_slices(expr)]
        candidates += [
            subscript
            for subscript in self.document.nodes(cst.Subscript)
            if self._is_tail_slice(subscript) and self._kept(subscript)
        ]
        rests = [s for s in self.document.nodes(cst.Subscript) if self._rest_after_head(s)]
        for subscript in candidates + rests:
            if id(subscript) in seen:
                continue
            if not self._is_tail_slice(subscript) and subscript not in rests:
                continue
            seen.add(id(subscript))
            base = subscript.value
            if not self.is_message_list(base) or self._cuts_in_blocks(subscript, base):
                continue
            out.append(self._window_edit(subscript, base))
        return out

    def _sent_slices(self, expr: cst.CSTNode) -> list[cst.Subscript]:
        if isinstance(expr, cst.Subscript):
            return [expr]
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            return self._sent_slices(expr.left) + self._sent_slices(expr.right)
        if isinstance(expr, cst.List):
            return [s for e in expr.elements for s in self._sent_slices(e.value)]
        if isinstance(expr, cst.StarredElement):
            return self._sent_slices(expr.value)
        if isinstance(expr, cst.Call):
            function = self.analysis.bindings.local_function(expr.func)
            if function is None:
                return []
            returns = self.analysis.bindings.returns_of(function)
            return [s for value in returns for s in self._sent_slices(value)]
        if isinstance(expr, cst.Name):
            scope = self.document.scopes.get(expr)
            out = []
            for assignment in scope[expr.value] if scope and expr.value in scope else ():
                for binding in self.analysis.bindings.values_of(assignment):
                    if not isinstance(binding.value, cst.Name):
                        out += self._sent_slices(binding.value)
            return out
        return []

    @staticmethod
    def _is_tail_slice(subscript: cst.Subscript) -> bool:
        if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Slice):
            return False
        window = subscript.slice[0].slice
        return _negative(window.lower) and window.upper is None and not _is_minus_one(window.lower)

    def _rest_after_head(self, subscript: cst.Subscript) -> bool:
        """``[m[0]] + m[start:]`` or ``m[:1] + m[start:]``: the head, then a moving start."""
        if len(subscript.slice) != 1 or not isinstance(subscript.slice[0].slice, cst.Slice):
            return False
        window = subscript.slice[0].slice
        if window.upper is not None or window.lower is None or _int(window.lower) is not None:
            return False
        parent = self.document.parent(subscript)
        if not isinstance(parent, cst.BinaryOperation) or parent.right is not subscript:
            return False
        head = parent.left
        while isinstance(head, cst.BinaryOperation) and isinstance(head.operator, cst.Add):
            head = head.left  # [m[0]] + [summary] + m[start:]
        if isinstance(head, cst.List) and head.elements:
            head = head.elements[0].value
        base = self.document.code(subscript.value)
        if not isinstance(head, cst.Subscript) or self.document.code(head.value) != base:
            return False
        cut = head.slice[0].slice if len(head.slice) == 1 else None
        # m[:i] + extra + m[i:] keeps every message: an insertion, not a window.
        code = self.document.code
        return not (
            isinstance(cut, cst.Slice) and cut.upper and code(cut.upper) == code(window.lower)
        )

    def _kept(self, subscript: cst.Subscript) -> bool:
        """The slice is joined to a head (``head + m[-k:]``, directly or through a name) and
        keeps more than the current exchange (``m[-3:]`` is a tool call and its result)."""
        kept = _int(cast(cst.Slice, subscript.slice[0].slice).lower)  # a tail slice
        if kept is not None and kept >= -_CURRENT_EXCHANGE:
            return False
        node: cst.BaseExpression = subscript
        for parent in self.document.ancestors(subscript):
            if isinstance(parent, cst.IfExp) and node is not parent.test:
                node = parent
                continue
            if isinstance(parent, cst.BinaryOperation):
                return isinstance(parent.operator, cst.Add)
            if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
                return self._joined_later(parent.targets[0].target, parent)
            return False
        return False

    def _joined_later(self, target: cst.BaseExpression, statement: cst.Assign) -> bool:
        """``target`` is an operand of a ``+`` in the same function."""
        if not isinstance(target, cst.Name):
            return False
        function = self.document.enclosing_function(statement)
        return any(
            isinstance(node.operator, cst.Add)
            and any(
                isinstance(o, cst.Name) and o.value == target.value for o in (node.left, node.right)
            )
            and self.document.enclosing_function(node) is function
            for node in self.document.nodes(cst.BinaryOperation)
        )

    def _constant(self, node: cst.BaseExpression | None) -> int | None:
        """An integer literal, or a name bound once to one (``MAX_TURNS = 20``)."""
        value = _int(node)
        if value is not None or not isinstance(node, (cst.Name, cst.UnaryOperation)):
            return value
        negate = isinstance(node, cst.UnaryOperation)
        name = node.expression if isinstance(node, cst.UnaryOperation) else node
        if not isinstance(name, cst.Name):
            return None
        bindings = self.analysis.bindings
        values = [b.value for a in bindings.reaching(name) for b in bindings.values_of(a)]
        number = _int(values[0]) if len(values) == 1 else None
        if number is None:
            return None
        return -number if negate else number

    def _cuts_in_blocks(self, subscript: cst.Subscript, base: cst.CSTNode) -> bool:
        """``if len(m) > N: m = m[-k:]`` with N well above k cuts many messages at once."""
        lower = cast(cst.Slice, subscript.slice[0].slice).lower  # a tail or rest slice
        kept = self._constant(lower)
        for ancestor in self.document.ancestors(subscript):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                break
            if not isinstance(ancestor, (cst.If, cst.While)):
                continue
            bound = self._guard_bound(ancestor.test, base)
            if bound is None:
                continue
            if bound is True or kept is None:
                # Unknown sizes: only the same expression on both sides is known to slide.
                comparator = cast(cst.Comparison, ancestor.test).comparisons[0].comparator
                if not isinstance(lower, cst.UnaryOperation):
                    return True  # a start (``m[:1] + m[start:]``), not a count of kept messages
                return self.document.code(comparator) != self.document.code(lower.expression)
            cut = bound + 1 + kept  # kept is negative: -k keeps k messages
            return cut >= max(2, self.min_cut_fraction * -kept)
        return False

    # -- rewritten tool output --------------------------------------------------------------

    def _loop_rewrites(self) -> list[HistoryEdit]:
        out = []
        writes = [(t, s) for t, s in self.collector.subscript_writes] + [
            (t, t) for t in self.collector.attribute_writes
        ]
        for target, statement in writes:
            element = target.value
            field_name = (
                target.attr.value if isinstance(target, cst.Attribute) else self._key(target)
            )
            if field_name not in _CONTENT_FIELDS or not isinstance(element, cst.Name):
                continue
            loop = self._loop_over_messages(element, statement)
            if loop is None:
                continue
            if self._tool_condition(statement, element):
                out.append(
                    HistoryEdit(
                        TOOL_OUTPUT,
                        target,
                        f"`{self._owner(target)}` rewrites "
                        "tool results already sent; the next request differs "
                        "from the first rewritten result on",
                    )
                )
            elif isinstance(loop.iter, cst.Subscript) and self.outlives_request(
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

    def _replaced_elements(self) -> list[HistoryEdit]:
        """``for m in history: if old(m): m = Message(...)``, the copy kept in its place."""
        out = []
        for target, value in self.collector.reassignments:
            if not isinstance(target, cst.Name) or not self._builds_message(value):
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

    def _builds_message(self, value: cst.BaseExpression) -> bool:
        if isinstance(value, cst.Call):
            return is_message_class(value.func) or any(
                a.keyword is not None and a.keyword.value == "role" for a in value.args
            )
        return isinstance(value, cst.Dict) and any(
            isinstance(e, cst.DictElement) and string_value(e.key) == "role" for e in value.elements
        )

    def _collected_in(self, element: cst.Name, loop: cst.For) -> bool:
        """The loop appends the element itself to a list (the rebuilt history)."""
        return any(
            _method_of(call).attr.value == "append"
            and len(call.args) == 1
            and isinstance(call.args[0].value, cst.Name)
            and call.args[0].value.value == element.value
            and any(a is loop for a in self.document.ancestors(call))
            for call in self.collector.method_calls
        )

    def _conditional_in(self, node: cst.CSTNode, loop: cst.For) -> bool:
        """``node`` sits under an ``if`` inside ``loop``."""
        for ancestor in self.document.ancestors(node):
            if ancestor is loop:
                return False
            if isinstance(ancestor, cst.If):
                return True
        return False

    @staticmethod
    def _key(target: cst.BaseExpression) -> str | None:
        if isinstance(target, cst.Subscript) and len(target.slice) == 1:
            index = target.slice[0].slice
            if isinstance(index, cst.Index):
                return string_value(index.value)
        return None

    def _loop_over_messages(self, element: cst.Name, at: cst.CSTNode) -> cst.For | None:
        for ancestor in self.document.ancestors(at):
            if isinstance(ancestor, (cst.FunctionDef, cst.ClassDef)):
                return None
            if isinstance(ancestor, cst.For) and isinstance(ancestor.target, cst.Name):
                if ancestor.target.value != element.value:
                    continue
                return ancestor if self.is_message_list(_loop_source(ancestor)) else None
        return None

    def _tool_condition(self, at: cst.CSTNode, element: cst.Name) -> bool:
        for ancestor in self.document.ancestors(at):
            if isinstance(ancestor, (cst.For, cst.FunctionDef)):
                return False
            if isinstance(ancestor, (cst.If, cst.IfExp)) and self._mentions_tool(ancestor.test):
                return True
        return False

    def _mentions_tool(self, test: cst.CSTNode) -> bool:
        finder = _ToolMention()
        test.visit(finder)
        return finder.found

    def _comprehension_rewrites(self) -> list[HistoryEdit]:
        out = []
        for target, value in self.collector.reassignments:
            if not isinstance(value, cst.ListComp) or not self.is_message_list(target):
                continue
            source = value.for_in.iter
            if isinstance(source, cst.Subscript):
                source = source.value
            if self._identity(source) != self._identity(target):
                continue
            element = value.elt
            if isinstance(element, cst.IfExp) and self._mentions_tool(element.test):
                out.append(
                    HistoryEdit(
                        TOOL_OUTPUT,
                        value,
                        f"`{self._owner(target)}` is rebuilt "
                        "with older tool results replaced; the next request "
                        "differs from the first replaced result on",
                    )
                )
            elif value.for_in.ifs and self.outlives_request(target, value):
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


def _loop_source(loop: cst.For) -> cst.BaseExpression:
    """The list a loop walks: ``m`` of ``m``, ``m[:-4]``, ``enumerate(m)``, ``reversed(m)``."""
    source = loop.iter
    if isinstance(source, cst.Subscript):
        source = source.value
    if isinstance(source, cst.Call) and source.args:
        source = source.args[0].value
    return source


class _ToolMention(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found = False

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        if string_value(node) in _TOOL_ROLES:
            self.found = True

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in ("ToolMessage", "FunctionMessage"):
            self.found = True

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value.lower() in _TOOL_ROLES:
            self.found = True


def history_edits(document: PythonDocument) -> list[HistoryEdit]:
    """Edits to conversations that are sent again (PFX501, PFX502, PFX504), found once."""
    found = document.derived.get("history")
    if found is None:
        fraction = document.ctx.option(SLIDING_WINDOW, "min-cut-fraction")
        analysis = Analysis.of(document)
        found = document.derived["history"] = HistoryAnalysis(document, analysis, fraction).edits()
    return found
