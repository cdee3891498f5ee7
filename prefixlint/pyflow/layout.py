"""Per-request input placed before a large static block in the same prompt text (PFX301).

A prefix cache keeps what comes before the first difference. ``f"Question: {q}\n{DOCUMENT}"``
puts the question first, so the document's tokens are computed again for every question;
``f"{DOCUMENT}\nQuestion: {q}"`` lets every request reuse them (and is the order that long-
context guidance recommends: task, document, then the question).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace

from prefixlint.pyflow import tables as t
from prefixlint.pyflow.analysis import Analysis
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.message_types import spliced_parts
from prefixlint.pyflow.scopes import BUILTIN, MODULE
from prefixlint.pyflow.sinks import Sink
from prefixlint.pyflow.syntax import arguments, integer, leaf, string_value
from prefixlint.pyflow.templates import (
    FIELD,
    masked,
    span_within,
    static_part,
    template_fields,
    template_maker,
    written_as_sent,
)
from prefixlint.types import Span
from prefixlint.vocabulary import is_request_input, is_turn_input, names_lookup, names_turn_context


@dataclass(frozen=True)
class Misplaced:
    """The per-request value ``node`` (or its ``field`` inside a template literal) comes before
    ``static``, the fixed text after it, and ``document``, the code reading a fixed file's text
    there (of a size known only when the program runs), or ``conversation``, the code of the
    earlier messages spliced in after it, when ``node`` is made from ``turn``, this turn's
    input."""

    node: ast.AST
    label: str
    before: str
    static: str
    sink: Sink
    field: str = ""
    document: str = ""
    conversation: str = ""
    turn: str = ""

    def span(self, document: PythonDocument) -> Span:
        """Where the finding points (positions are resolved only for a finding)."""
        whole = document.span(self.node)
        if not self.field:
            return whole
        return span_within(whole, document.source(self.node), self.field)


def _content(message: ast.expr) -> ast.expr | None:
    """The content of ``{"role": ..., "content": ...}`` or ``SomeMessage(content=...)``."""
    if isinstance(message, ast.Dict):
        keys = [string_value(k) if k is not None else None for k in message.keys]
        return message.values[keys.index("content")] if "content" in keys else None
    if isinstance(message, ast.Call):
        given = [k.value for k in message.keywords if k.arg == "content"] + message.args[:1]
        return given[0] if given else None
    return None


def _history_placeholder(element: ast.expr) -> bool:
    """``MessagesPlaceholder("chat_history")`` or ``("placeholder", "{chat_history}")``."""
    if isinstance(element, ast.Call):
        return leaf(element.func) == "MessagesPlaceholder"
    return (
        isinstance(element, ast.Tuple)
        and len(element.elts) == 2
        and string_value(element.elts[0]) == "placeholder"
    )


def _is_concatenation(node: ast.AST) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)


class Layout:
    """Static text resolution and the search for input-before-static layouts."""

    def __init__(self, document: PythonDocument, input_names: Iterable[str] = ()) -> None:
        self.document = document
        self.analysis = Analysis.of(document)
        self.input_names = tuple(input_names)

    def static_text(self, node: ast.AST, depth: int = 0) -> str | None:
        """The fixed text ``node`` always evaluates to, if it is one."""
        if depth > 4:
            return None
        value = string_value(node)
        if value is not None:
            return value
        if isinstance(node, ast.JoinedStr):
            texts = [string_value(p) for p in node.values]
            if all(text is not None for text in texts):
                return "".join(text for text in texts if text is not None)
            return None
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Add):
                left = self.static_text(node.left, depth + 1)
                right = self.static_text(node.right, depth + 1)
                return left + right if left is not None and right is not None else None
            count = integer(node.right) if isinstance(node.right, ast.Constant) else None
            if isinstance(node.op, ast.Mult) and count is not None:
                left = self.static_text(node.left, depth + 1)
                return left * min(count, 10_000) if left is not None else None
        if isinstance(node, ast.Name):
            values = [
                b.value
                for a in self.analysis.bindings.reaching(node)
                for b in self.analysis.bindings.values_of(a)
            ]
            if len(values) == 1:
                return self.static_text(values[0], depth + 1)
        return None

    def _segments(self, node: ast.expr) -> Iterator[tuple[str, str | ast.expr]]:
        """("text", str) and ("value", expression) pieces of a text, in order."""
        if isinstance(node, ast.JoinedStr):
            for part in node.values:
                text = string_value(part)
                if text is not None:
                    yield "text", text
                elif isinstance(part, ast.FormattedValue):
                    static = self.static_text(part.value)
                    if static is not None:
                        yield "text", static
                    else:
                        yield "value", part.value
            return
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            yield from self._segments(node.left)
            yield from self._segments(node.right)
            return
        static = self.static_text(node)
        yield ("text", static) if static is not None else ("value", node)

    def misplaced(self, min_chars: int) -> Iterator[Misplaced]:
        if not self.analysis.flow.roots:
            return  # nothing reaches a request
        inner: set[int] = set()
        for node in self.document.nodes(ast.JoinedStr, ast.BinOp, ast.Constant):
            if isinstance(node, ast.BinOp) and not _is_concatenation(node):
                continue
            if isinstance(node, ast.Constant) and not isinstance(node.value, str):
                continue
            if id(node) in inner:
                continue
            if isinstance(node, ast.BinOp):
                self._mark_inner(node, inner)
            sink = self.analysis.sink_of(node)
            if sink is None:
                continue
            if isinstance(node, ast.Constant):
                found = self._template_misplaced(node, min_chars, sink)
            else:
                found = self._first_misplaced(node, min_chars, sink)
            if found is None and isinstance(node, ast.BinOp):
                # ``"Question: {q}\n" + RULES`` in a template: a field of the joined text.
                found = self._template_misplaced(node, min_chars, sink)
            if found is not None:
                yield found

    def misplaced_across(self, min_chars: int) -> Iterator[Misplaced]:
        """Input in one message of a list sent as ``messages`` and, in a later message, a block
        of static text or a fixed file's text (``[..., user(question), user(manual), ...]``)."""
        if not self.analysis.flow.roots:
            return
        seen: set[int] = set()
        for sent in self.analysis.message_lists:
            for display in self._displays(sent):
                if id(display) in seen:
                    continue
                seen.add(id(display))
                found = self._across(display, min_chars)
                if found is not None:
                    yield found

    def ahead_of_history(self) -> Iterator[Misplaced]:
        """This turn's input, or what is looked up with it, in a message placed before the
        conversation spliced into the same list (``[system(docs), *history, user(question)]``):
        every earlier turn then follows text that changes every turn, and none is reused."""
        if not self.analysis.flow.roots:
            return
        seen: set[int] = set()
        for sent in self.analysis.message_lists:
            for parts in self._sequences(sent):
                if id(parts[0][1]) in seen:
                    continue
                seen.add(id(parts[0][1]))
                found = self._before_conversation(parts)
                if found is not None:
                    yield found

    def template_ahead_of_history(self) -> Iterator[Misplaced]:
        """A chat prompt template's field for this turn's input or the documents found for it
        in a message before a placeholder for the conversation (``MessagesPlaceholder(...)``,
        ``("placeholder", "{chat_history}")``) that this turn's input follows."""
        for messages in self.analysis.template_lists:
            elements = self._written(messages)[0]
            if not isinstance(elements, (ast.List, ast.Tuple)):
                continue
            texts = [self._template_text(e) for e in elements.elts]
            holders = [i for i, e in enumerate(elements.elts) if _history_placeholder(e)]
            if not holders:
                continue
            later = [t for t in texts[holders[0] + 1 :] if t is not None]
            if not any(is_turn_input(f) for _, text in later for f in template_fields(text)):
                continue
            for element, found in zip(elements.elts[: holders[0]], texts, strict=False):
                misplaced = found and self._field_for_turn(found[0], found[1], element)
                if misplaced:
                    holder = self.document.code(elements.elts[holders[0]])
                    yield replace(misplaced, conversation=" ".join(holder.split()))
                    break

    def _template_text(self, element: ast.expr) -> tuple[ast.expr, str] | None:
        """The text node of a ``(role, text)`` message of a template and its text."""
        if not (isinstance(element, ast.Tuple) and len(element.elts) == 2):
            return None
        node = self._written(element.elts[1])[0]
        text = self.static_text(node)
        return (node, text) if text is not None else None

    def _field_for_turn(self, node: ast.expr, text: str, element: ast.expr) -> Misplaced | None:
        template = masked(text)
        for field in FIELD.finditer(template):
            name = field.group(1)
            if names_turn_context(name):
                sink = self.analysis.sink_of(node) or self.analysis.sink_of(element)
                if sink is None:
                    return None
                before = static_part(template[: field.start()])
                turn = name if is_turn_input(name) else ""
                return Misplaced(node, field.group(0), before, "", sink, field.group(0), turn=turn)
        return None

    def _sequences(self, node: ast.AST) -> list[list[tuple[bool, ast.expr]]]:
        """The messages of each list ``node`` is built as, in order, each marked whether it
        splices in a whole list (``*history``, ``[system] + history``)."""
        if isinstance(node, ast.Name):
            bindings = self.analysis.bindings
            values = [b.value for a in bindings.reaching(node) for b in bindings.values_of(a)]
            return [
                s
                for v in values
                if isinstance(v, (ast.List, ast.BinOp))
                for s in self._sequences(v)
            ]
        parts = spliced_parts(node)
        return [parts] if parts and any(spliced for spliced, _ in parts) else []

    def _before_conversation(self, parts: list[tuple[bool, ast.expr]]) -> Misplaced | None:
        for index, (spliced, conversation) in enumerate(parts):
            if not spliced:
                continue
            after = [_content(self._written(m)[0]) for s, m in parts[index + 1 :] if not s]
            turn = {label for c in after if c is not None for label in self.analysis.inputs_of(c)}
            turn = {label for label in turn if is_turn_input(label)}
            made = turn & self.analysis.inputs_of(conversation)
            if not turn or (made and not self._appended_to(conversation, turn)):
                continue  # no turn after it, or the spliced list is made from this turn
            messages = [self._written(m)[0] for s, m in parts[:index] if not s]
            contents = [c for m in messages if (c := _content(m)) is not None]
            for content in [text for c in contents for text in self._written(c)]:
                before: list[str] = []
                for _kind, piece in self._segments(content):
                    if isinstance(piece, str):
                        before.append(piece)
                        continue
                    inputs = self.analysis.inputs_of(piece)
                    if not inputs & turn and not any(map(names_lookup, inputs)):
                        continue
                    sink = self.analysis.sink_of(piece)
                    if sink is None:
                        return None
                    code = self.document.code
                    return Misplaced(
                        piece,
                        " ".join(code(piece).split()),
                        "".join(before),
                        "",
                        sink,
                        conversation=" ".join(code(conversation).split()),
                        turn=min(inputs & turn, default=""),
                    )
            return None
        return None

    def _appended_to(self, conversation: ast.expr, turn: set[str]) -> bool:
        """``self.history``, an object's conversation, that this turn's input reaches only by
        being appended to it (each assignment of it is made without it): it holds the earlier
        turns."""
        if not (isinstance(conversation, ast.Attribute) and leaf(conversation.value) == "self"):
            return False
        for node in self.document.nodes(ast.Assign):
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr == conversation.attr
                    and leaf(target.value) == "self"
                    and turn & self.analysis.inputs_of(node.value)
                ):
                    return False
        return True

    def _written(self, node: ast.expr, depth: int = 0) -> list[ast.expr]:
        """What a name holds where it is written (``system = f"..."`` read as ``system``), so
        that a finding points at the value inside it; ``node`` itself when that is not known."""
        if not isinstance(node, ast.Name) or depth > 2:
            return [node]
        bindings = self.analysis.bindings
        values = [b.value for a in bindings.reaching(node) for b in bindings.values_of(a)]
        if not values or any(v is None for v in values):
            return [node]
        return [w for v in values for w in self._written(v, depth + 1)]

    def _displays(self, node: ast.AST) -> list[ast.List]:
        if isinstance(node, ast.List):
            return [node]
        if not isinstance(node, ast.Name):
            return []
        bindings = self.analysis.bindings
        values = [b.value for a in bindings.reaching(node) for b in bindings.values_of(a)]
        return [v for v in values if isinstance(v, ast.List)]

    def _across(self, display: ast.List, min_chars: int) -> Misplaced | None:
        first: tuple[ast.expr, str, str] | None = None
        for element in display.elts:
            content = _content(element)
            if content is None:
                continue
            if first is None:
                first = self._first_input(content)
                continue
            static = self.static_text(content)
            document = ""
            if static is None:
                pieces = [p for _, p in self._segments(content)]
                static = "".join(p for p in pieces if isinstance(p, str))
                files = [p for p in pieces if not isinstance(p, str) and self.file_text(p)]
                document = " ".join(self.document.code(files[0]).split()) if files else ""
            if len(static) < min_chars and not document:
                continue
            value, label, before = first
            sink = self.analysis.sink_of(value)
            if sink is None:
                return None
            return Misplaced(value, label, before, static, sink, document=document)
        return None

    def _first_input(self, content: ast.expr) -> tuple[ast.expr, str, str] | None:
        """The first input value of a message's content, its label and the text before it."""
        before: list[str] = []
        for _kind, piece in self._segments(content):
            if isinstance(piece, str):
                before.append(piece)
                continue
            label = self._variable(piece)
            if label is not None:
                return piece, label, "".join(before)
        return None

    @staticmethod
    def _mark_inner(node: ast.BinOp, inner: set[int]) -> None:
        for side in (node.left, node.right):
            if isinstance(side, (ast.BinOp, ast.Constant)):
                inner.add(id(side))
                if isinstance(side, ast.BinOp):
                    Layout._mark_inner(side, inner)

    def _first_misplaced(self, node: ast.expr, min_chars: int, sink: Sink) -> Misplaced | None:
        """The first input value followed by ``min_chars`` or more of static text."""
        before: list[str] = []
        after: list[str] = []
        document = ""
        first: tuple[ast.expr, str] | None = None
        for _kind, piece in self._segments(node):
            if first is not None:
                if isinstance(piece, str):  # a "text" segment
                    after.append(piece)
                elif not document and self.file_text(piece):
                    document = " ".join(self.document.code(piece).split())
                continue
            if isinstance(piece, str):
                before.append(piece)
                continue
            label = self._variable(piece)
            if label is not None:
                first = (piece, label)
        if first is None or (sum(map(len, after)) < min_chars and not document):
            return None
        value, label = first
        return Misplaced(value, label, "".join(before), "".join(after), sink, document=document)

    def file_text(self, node: ast.expr, depth: int = 0) -> bool:
        """Whether ``node`` is the whole text of a fixed file: ``PATH.read_text()`` or
        ``open(PATH).read()`` of names bound at module level, a module constant holding one,
        or a call without arguments of a function defined here that returns one."""
        if depth > 3:
            return False
        if isinstance(node, ast.Attribute) and leaf(node.value) == "self":
            # Read once when the object is made: the same text for every request it sends.
            stored = self.analysis.bindings.attribute_values(node)
            return bool(stored) and all(self._read_when_made(b.value, b.target) for b in stored)
        if isinstance(node, ast.Name):
            values = [
                b.value
                for a in self.analysis.bindings.reaching(node)
                for b in self.analysis.bindings.values_of(a)
            ]
            return len(values) == 1 and self.file_text(values[0], depth + 1)
        if not isinstance(node, ast.Call):
            return False
        function = self.document.local_function(node.func)
        if function is not None:
            returns = self.analysis.bindings.returns_of(function)
            return (
                not arguments(node)
                and bool(returns)
                and all(self.file_text(r, depth + 1) for r in returns)
            )
        func = node.func
        if not isinstance(func, ast.Attribute) or func.attr not in ("read", "read_text"):
            return False
        opened = isinstance(func.value, ast.Call) and leaf(func.value.func) == "open"
        if func.attr == "read" and not opened:
            return False  # a stream (``sys.stdin.read()``, a response), not a file
        return all(self._fixed_name(name) for name in ast.walk(node) if isinstance(name, ast.Name))

    def _read_when_made(self, value: ast.expr, target: ast.AST | None) -> bool:
        """``self.text = path.read_text()`` in ``__init__``: a file's text, whatever the path."""
        function = self.document.enclosing_function(target) if target is not None else None
        if function is None or function.name != "__init__" or not isinstance(value, ast.Call):
            return False
        func = value.func
        if not isinstance(func, ast.Attribute) or func.attr not in ("read", "read_text"):
            return False
        return func.attr == "read_text" or (
            isinstance(func.value, ast.Call) and leaf(func.value.func) == "open"
        )

    def _fixed_name(self, name: ast.Name) -> bool:
        """Bound only at module level (a constant, an import) or a builtin (``open``)."""
        found = self.analysis.bindings.reaching(name)
        return all(a.scope.kind in (MODULE, BUILTIN) for a in found)

    def _template_misplaced(
        self, node: ast.Constant | ast.BinOp, min_chars: int, sink: Sink
    ) -> Misplaced | None:
        """A ``str.format`` template (a literal, or a concatenation of fixed texts) whose first
        input field comes before the static text."""
        text = self.static_text(node)
        if not text or "{" not in text or written_as_sent(node, self.document.parent):
            return None
        if self._used_as_text(node, sink):
            return None
        template = masked(text)
        fields = list(FIELD.finditer(template))
        first = next((f for f in fields if is_request_input(f.group(1), self.input_names)), None)
        if first is None:
            return None
        after = static_part(template[first.end() :])
        later = [f.group(1) for f in fields if f.start() > first.start()]
        document = self._filled_by_file(node, later)
        if len(after) < min_chars and not document:
            return None
        before = static_part(template[: first.start()])
        field = first.group(0)
        return Misplaced(node, field, before, after, sink, field=field, document=document)

    def _used_as_text(self, node: ast.expr, sink: Sink) -> bool:
        """Whether the braces of ``node`` are text: it is known only by a name that says
        prompt (``SHELL_PROMPTS = {...}``), used here (``SHELL_PROMPTS.get(name) + content``)
        but neither made into a template (``TextPrompt("...")``) nor filled. A module's
        constant this module never reads is given the benefit of the doubt: another module
        may fill it."""
        named = sink.named
        if named is None:
            return False
        exported = (
            isinstance(named, ast.Name)
            and self.document.enclosing_function(named) is None
            and not self.document.reads_in(self.document.module, named.id)
        )
        if exported:
            return False
        parent = self.document.parent(node)
        if isinstance(parent, ast.Call) and node in parent.args and template_maker(parent.func):
            return False
        return not self.analysis.flow.formatted(node)

    def _filled_by_file(self, node: ast.Constant | ast.BinOp, fields: list[str]) -> str:
        """The code that fills one of ``fields`` of the template ``node`` with a fixed file's
        text wherever it is filled (``chain.invoke({"handbook": HANDBOOK})``), if any."""
        if not isinstance(node, ast.Constant):
            return ""
        filled = self.analysis.flow.filled(node, formats=True)
        for field in fields:
            values = filled.get(field, [])
            if values and all(self.file_text(v) for v in values):
                return " ".join(self.document.code(values[0]).split())
        return ""

    def _variable(self, node: ast.expr) -> str | None:
        for origin in self.analysis.flow.origins(node):
            # Dates, ids and per-user values are reported by PFX101-PFX104 wherever they are.
            if origin.code == t.REQUEST_INPUT and is_request_input(origin.label, self.input_names):
                return " ".join(self.document.code(node).split())
        return None
