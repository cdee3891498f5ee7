"""Where prompt text goes: the parts of LLM requests whose changes end prefix-cache reuse.

A :class:`Sink` is an expression that becomes part of a request, with the ``region`` it lands
in. The request prefix is ``tools`` and ``system`` (in a provider's order) followed by the
messages; everything up to the last user turn is reused by the next request, so a value that
differs per call in any of ``SYSTEM``, ``TOOLS`` or ``EARLY`` (a message before the last user
turn) costs every token after it. ``LAST`` is the last user turn, where per-call values belong.
``PROMPT`` is text known only by its name (``SYSTEM_PROMPT``, ``build_prompt()``).

Recognised: OpenAI chat completions and Responses, Anthropic Messages, LiteLLM, LangChain
message and prompt classes, LlamaIndex ``ChatMessage``, pydantic-ai ``Agent`` and its
``@agent.system_prompt`` / ``@agent.instructions`` functions, role dicts anywhere, keyword
arguments named like a system prompt, and names that say prompt, system, instructions,
preamble or tools.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TypedDict, Unpack

from prefixlint.codes import SYSTEM_ROLES
from prefixlint.pyflow.document import FUNCTIONS, Function, PythonDocument
from prefixlint.pyflow.message_types import is_tool_definition
from prefixlint.pyflow.prompt_words import (
    AGENT_PACKAGES,
    API_METHODS,
    CHAT_LISTS,
    CHAT_ROLES,
    CONVERSE_METHODS,
    EARLY,
    FRAMEWORKS,
    KEYWORD_SYSTEM,
    LAST,
    MESSAGE_CLASSES,
    MESSAGE_MAKER,
    POSITIONAL_SYSTEM,
    PROMPT,
    RESPONSE_WRAPPERS,
    SYSTEM,
    SYSTEM_CALLEE,
    SYSTEM_DECORATORS,
    SYSTEM_KEYWORDS,
    TELEMETRY_PARTS,
    TOOL_FIELDS,
    TOOL_KEYWORDS,
    TOOLS,
    USER_ROLES,
    name_region,
    text_region,
)
from prefixlint.pyflow.scopes import Assignment
from prefixlint.pyflow.syntax import callee as _callee
from prefixlint.pyflow.syntax import dotted as _dotted
from prefixlint.pyflow.syntax import index_of, integer, string_value
from prefixlint.pyflow.syntax import keyword as _keyword
from prefixlint.pyflow.syntax import positional_at as _positional
from prefixlint.vocabulary import split_words

_LITELLM = frozenset({"litellm.completion", "litellm.acompletion", "litellm.text_completion"})
_SYSTEM_CLASSES = frozenset({"SystemMessage", "SystemMessagePromptTemplate"})
_TEMPLATE_CLASSES = frozenset({"PromptTemplate", "ChatPromptTemplate"})

# Methods of a LangChain chat model (a runnable) that send the messages they are given.
_INVOKE_METHODS = frozenset({"invoke", "ainvoke", "stream", "astream"})
# Keywords that carry a message's text in message-making calls.
_TEXT_KEYWORDS = ("content", "message", "text", "prompt", "msg")
_TOOL_OWNERS = ("tool", "schema", "function")
# Calls that copy an object, and the words that name one message.
_COPY_CALLS = frozenset({"model_copy", "copy", "deepcopy"})
_MESSAGE_WORDS = frozenset({"message", "msg"})
# The last word of calls that show text to a person or write it out, not to a model.
_SHOWN_BY = frozenset({"print", "input", "write", "echo", "secho", "getpass"})


@dataclass(frozen=True, eq=False)
class Sink:
    """``expr`` becomes part of a request in ``region``; ``description`` says where."""

    expr: ast.expr
    region: str
    description: str
    call: ast.Call | None = None
    last_user: ast.expr | None = None
    named: ast.AST | None = None


def _mentions(node: ast.AST, name: str) -> bool:
    """Whether ``name`` is read anywhere in ``node``."""
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


def _role_name(node: ast.expr | None) -> str | None:
    """``"system"`` of a literal, ``SYSTEM`` of ``Role.SYSTEM``."""
    text = string_value(node)
    if text is None and isinstance(node, ast.Attribute):
        text = node.attr
    return text


class _SinkParts(TypedDict, total=False):
    """The optional fields of a :class:`Sink`, as :meth:`_Finder._add` passes them on."""

    call: ast.Call | None
    last_user: ast.expr | None


class _Finder:
    def __init__(self, document: PythonDocument) -> None:
        self.document = document
        self.sinks: list[Sink] = []
        self.named: list[Sink] = []
        self._claimed: set[int] = set()
        self._frameworks = any(name in document.text for name in FRAMEWORKS)
        self._agents = any(name in document.text for name in AGENT_PACKAGES)
        self._dspy = "dspy" in document.text
        self.message_lists: list[ast.expr] = []
        self.template_lists: list[ast.expr] = []

    def _add(
        self,
        expr: ast.expr | None,
        region: str,
        description: str,
        **more: Unpack[_SinkParts],
    ) -> None:
        if expr is not None and id(expr) not in self._claimed:
            self._claimed.add(id(expr))
            self.sinks.append(Sink(expr, region, description, **more))

    def _framework_class(self, func: ast.expr) -> str | None:
        if not self._frameworks:
            return None
        for name in self.document.qualified_names(func):
            if name.split(".")[0] in FRAMEWORKS:
                parts = name.split(".")
                owner = parts[-2] in _TEMPLATE_CLASSES or parts[-2] in _SYSTEM_CLASSES
                return ".".join(parts[-2:]) if owner else parts[-1]
        return None

    # -- calls ------------------------------------------------------------------------------

    def call(self, node: ast.Call) -> None:
        dotted = _dotted(node.func) or " ".join(self.document.code(node.func).split())
        api = self._api(node, dotted)
        if api is not None:
            self._api_call(node, dotted, api)
        framework = self._framework_class(node.func)
        if framework is not None:
            self._framework_call(node, framework)
        if self._frameworks and _callee(node.func) in _INVOKE_METHODS:
            self._invoked_messages(node, dotted)
        for argument in node.keywords:
            keyword = argument.arg
            if keyword in SYSTEM_KEYWORDS:
                self._add(argument.value, SYSTEM, f"the {keyword} of {dotted}", call=node)
            elif keyword in TOOL_KEYWORDS and (api is not None or self._agent_call(node)):
                self._add(argument.value, TOOLS, f"the tool definitions of {dotted}", call=node)
        index = self._positional_system(node)
        if index is not None:
            self._add(_positional(node, index), SYSTEM, f"the system message of {dotted}")
        for keyword in self._system_keywords(node):
            self._add(_keyword(node, keyword), SYSTEM, f"the {keyword} of {dotted}", call=node)
        if isinstance(node.func, ast.Attribute) and node.func.attr == "bind_tools":
            self._add(_positional(node, 0), TOOLS, f"the tool definitions of {dotted}")
        self._system_builder(node, dotted)

    def _invoked_messages(self, node: ast.Call, dotted: str) -> None:
        """``llm.invoke([SystemMessage(...), *history, HumanMessage(q)])``: a chat model
        (a LangChain runnable) called with the messages of a request, a system one first."""
        messages = _positional(node, 0)
        if messages is None:
            return
        elements = self._elements(messages, depth=0)
        if not elements or self._named_role(elements[0]) not in SYSTEM_ROLES:
            return
        self.message_lists.append(messages)
        self._message_list(messages, dotted, node)

    def _named_role(self, element: ast.expr) -> str | None:
        """The role of a message, or of the one message a name is bound to."""
        if not isinstance(element, ast.Name):
            return self._role(element)
        values = [self._assigned_value(a) for a in self.document.assignments(element)]
        roles = {self._role(v) for v in values if v is not None}
        return roles.pop() if len(roles) == 1 else None

    def _system_builder(self, node: ast.Call, dotted: str) -> None:
        """A message made by a call with a system role: ``make_message(role="system",
        message=text)`` or ``create_chat_message("system", text)``, whatever it is called."""
        if SYSTEM_CALLEE.match(_callee(node.func)):
            text = next((_keyword(node, k) for k in _TEXT_KEYWORDS if _keyword(node, k)), None)
            text = text if text is not None else _positional(node, 0)
            if text is not None:
                self._add(text, SYSTEM, f"the system message of {dotted}", call=node)
            return
        role = _keyword(node, "role")
        text = None
        if role is not None:
            text = next(
                (_keyword(node, k) for k in _TEXT_KEYWORDS if _keyword(node, k) is not None),
                None,
            )
            if text is None:
                text = _positional(node, 0)
        elif len(node.args) >= 2 and MESSAGE_MAKER.search(_callee(node.func)):
            role, text = _positional(node, 0), _positional(node, 1)
        spelled = string_value(role) or (role.attr if isinstance(role, ast.Attribute) else "")
        if text is None or spelled.lower() not in SYSTEM_ROLES:
            return
        self._add(text, SYSTEM, f"the system message made by {dotted}", call=node)

    def _positional_system(self, node: ast.Call) -> int | None:
        """The index of the system message among an agent constructor's positional arguments."""
        if not self._agents or not node.args:
            return None
        for name in self.document.qualified_names(node.func):
            parts = name.split(".")
            index = POSITIONAL_SYSTEM.get((parts[0], parts[-1]))
            if index is not None:
                return index
        return None

    def _system_keywords(self, node: ast.Call) -> tuple[str, ...]:
        """The keywords an agent constructor makes its system prompt from (crewAI's ``role``,
        ``goal`` and ``backstory``)."""
        if not self._agents or not node.keywords:
            return ()
        for name in self.document.qualified_names(node.func):
            parts = name.split(".")
            keywords = KEYWORD_SYSTEM.get((parts[0], parts[-1]))
            if keywords is not None:
                return keywords
        return ()

    def _agent_call(self, node: ast.Call) -> bool:
        """A call into an LLM framework (an agent or model constructor that takes tools), not
        one of its telemetry records (:data:`TELEMETRY_PARTS`)."""
        if not self._agents:
            return False
        names = [name.split(".") for name in self.document.qualified_names(node.func)]
        if any(parts[-1].endswith("Event") or TELEMETRY_PARTS & set(parts) for parts in names):
            return False
        return any(parts[0] in AGENT_PACKAGES for parts in names)

    def _api(self, node: ast.Call, dotted: str) -> str | None:
        parts = [p for p in dotted.split(".") if p not in RESPONSE_WRAPPERS]
        if parts[-1].endswith("completion") and self.document.qualified_names(node.func) & _LITELLM:
            return "litellm"
        keywords = {k.arg for k in node.keywords if k.arg is not None}
        if len(parts) >= 2 and parts[-1] in CONVERSE_METHODS and "modelId" in keywords:
            return "converse"
        if len(parts) < 2 or parts[-1] not in API_METHODS:
            return None
        if not keywords & {"model", "messages", "system", "input"}:
            return None
        resource = parts[-2]
        if resource == "completions":
            return "chat" if "chat" in parts else "completions"
        if resource in ("messages", "responses"):
            return resource
        return None

    def _api_call(self, node: ast.Call, dotted: str, api: str) -> None:
        messages = _keyword(node, "messages")
        if api == "litellm" and messages is None:
            messages = _positional(node, 1)
        if api == "responses":
            value = _keyword(node, "input")
            if isinstance(value, (ast.List, ast.Name, ast.BinOp)):
                messages = value
        if api == "completions":
            self._add(_keyword(node, "prompt"), PROMPT, f"the prompt of {dotted}", call=node)
        last_user = None
        if messages is not None:
            self.message_lists.append(messages)
            last_user = self._message_list(messages, dotted, node)
        self._add(
            _keyword(node, "system"),
            SYSTEM,
            f"the system prompt of {dotted}",
            call=node,
            last_user=last_user,
        )

    def _framework_call(self, node: ast.Call, name: str) -> None:
        if name.split(".")[0] in _SYSTEM_CLASSES and name.endswith(".from_template"):
            template = _keyword(node, "template") or _positional(node, 0)
            self._add(template, SYSTEM, f"the template of {name}")
        elif name in _SYSTEM_CLASSES:
            content = _keyword(node, "content") or _keyword(node, "prompt") or _positional(node, 0)
            self._add(content, SYSTEM, f"the {name}")
        elif name.endswith(".from_template") or name in _TEMPLATE_CLASSES:
            template = _keyword(node, "template") or _positional(node, 0)
            if isinstance(template, (ast.List, ast.Tuple)):
                self._message_list(template, name, None)
            elif template is not None:
                self._add(template, PROMPT, f"the template of {name}")
        elif name.endswith(".from_messages"):
            messages = _keyword(node, "messages") or _positional(node, 0)
            if messages is not None:
                self.template_lists.append(messages)
                self._message_list(messages, name, None)
        elif name == "ChatMessage" and self._role(node) in SYSTEM_ROLES:
            self._add(self._content(node), SYSTEM, "a system ChatMessage")

    # -- message lists ----------------------------------------------------------------------

    def _message_list(self, expr: ast.expr, owner: str, call: ast.Call | None) -> ast.expr | None:
        """Register the messages of a list; returns the content of its last user message."""
        elements = self._elements(expr, depth=0)
        if elements is None:
            return None
        if call is not None and isinstance(expr, ast.Name):
            elements = elements + self._appended(expr, call)
        elements = [self._returned_message(e) or e for e in elements]
        roles = [self._role(e) for e in elements]
        users = [i for i, role in enumerate(roles) if role in USER_ROLES]
        last = users[-1] if users else None
        last_content = self._content(elements[last]) if last is not None else None
        spliced = self._spliced_calls(expr)
        for index, (element, role) in enumerate(zip(elements, roles, strict=True)):
            content = self._content(element)
            if id(element) in spliced and last is not None and index < last:
                description = f"the messages {self.document.code(element)} spliced into {owner}"
                self._add(element, EARLY, description, call=call)
            elif role in SYSTEM_ROLES:
                self._add(
                    content,
                    SYSTEM,
                    f"the system message of {owner}",
                    call=call,
                    last_user=last_content,
                )
            elif role in CHAT_ROLES and last is not None and index < last:
                self._add(
                    content,
                    EARLY,
                    f"message {index + 1} of {owner} (before the last user turn)",
                    call=call,
                )
            elif index == last and content is not None and id(content) not in self._claimed:
                self._claimed.add(id(content))
                self.sinks.append(
                    Sink(content, LAST, f"the last user message of {owner}", call=call)
                )
        return last_content

    def _appended(self, name: ast.Name, call: ast.Call) -> list[ast.expr]:
        """The messages added to the list ``name`` in the function of ``call`` before it
        (``messages.append(...)``, ``messages.extend([...])``, ``messages += [...]``)."""
        function = self.document.enclosing_function(call)
        start = max(
            (
                self.document.order(a.node)
                for a in self.document.assignments(name)
                if a.node is not None
                and not isinstance(self.document.parent(a.node), ast.AugAssign)
            ),
            default=-1,
        )
        end = self.document.order(call)
        found: list[tuple[int, list[ast.expr]]] = []
        for node in self.document.nodes(ast.Call, ast.AugAssign):
            if not start < self.document.order(node) < end:
                continue
            if self.document.enclosing_function(node) is not function:
                continue
            added = _added_items(node)
            if added is not None and isinstance(added[0], ast.Name) and added[0].id == name.id:
                found.append((self.document.order(node), added[1]))
        return [item for _, items in sorted(found, key=lambda f: f[0]) for item in items]

    def _returned_message(self, element: ast.expr) -> ast.expr | None:
        """The message a helper of this file returns (``self.files_message()`` returning
        ``{"role": "user", "content": text}``), when it has one return and that is a message."""
        if not isinstance(element, ast.Call):
            return None
        function = self.document.local_function(element.func)
        if function is None:
            return None
        returns = self.document.returns_of(function)
        if len(returns) != 1 or isinstance(returns[0], ast.Call):
            return None
        return returns[0] if self._role(returns[0]) is not None else None

    @staticmethod
    def _spliced_calls(expr: ast.expr) -> set[int]:
        """Calls spliced into a list display (``[system, *examples(), *history, user]``): the
        messages they make are made again for every request, unlike a stored history."""
        if not isinstance(expr, (ast.List, ast.Tuple)):
            return set()
        return {
            id(e.value)
            for e in expr.elts
            if isinstance(e, ast.Starred) and isinstance(e.value, ast.Call)
        }

    def _elements(self, expr: ast.expr, depth: int) -> list[ast.expr] | None:
        """The messages of a list display (through ``+`` and one level of names)."""
        if isinstance(expr, (ast.List, ast.Tuple)):
            return [e.value if isinstance(e, ast.Starred) else e for e in expr.elts]
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            left = self._elements(expr.left, depth) or [expr.left]
            right = self._elements(expr.right, depth) or [expr.right]
            return left + right
        if isinstance(expr, ast.Name) and depth == 0:
            assignments = self.document.assignments(expr)
            if not assignments:
                return None
            values = [self._assigned_value(a) for a in assignments]
            lists = [self._elements(v, 1) for v in values if v is not None]
            lists = [items for items in lists if items]
            return lists[0] if len(lists) == 1 else None
        return None

    def _assigned_value(self, assignment: Assignment) -> ast.expr | None:
        target = assignment.node
        parent = self.document.parent(target) if target is not None else None
        if isinstance(parent, ast.Assign) and target in parent.targets:
            return parent.value
        if isinstance(parent, ast.AnnAssign):
            return parent.value
        return None

    def _role(self, element: ast.expr) -> str | None:
        if isinstance(element, ast.Dict):
            for key, value in zip(element.keys, element.values, strict=True):
                if key is not None and string_value(key) == "role":
                    role = _role_name(value)
                    return role.lower() if role else None
            return None
        if isinstance(element, ast.Tuple) and len(element.elts) == 2:
            role = (string_value(element.elts[0]) or "").lower()
            return role if role in SYSTEM_ROLES or role in CHAT_ROLES else None
        if isinstance(element, ast.Call):
            name = _dotted(element.func) or ""
            short = name.rsplit(".", 1)[-1]
            if MESSAGE_CLASSES.get(short):
                return MESSAGE_CLASSES[short]
            text = _role_name(_keyword(element, "role"))
            return text.lower() if text else None
        return None

    @staticmethod
    def _content(element: ast.expr) -> ast.expr | None:
        if isinstance(element, ast.Dict):
            for key, value in zip(element.keys, element.values, strict=True):
                if key is not None and string_value(key) in ("content", "text"):
                    return value
            return None
        if isinstance(element, ast.Tuple) and len(element.elts) == 2:
            second = element.elts[1]
            return second.value if isinstance(second, ast.Starred) else second
        if isinstance(element, ast.Call):
            return _keyword(element, "content") or _positional(element, 0)
        return None

    def unclaimed(self) -> None:
        """Role dicts, tool definitions and message lists not already seen as part of a
        request."""
        for call in self.document.nodes(ast.Call):
            if is_tool_definition(call) and not is_tool_definition(self.document.parent(call)):
                for part in _tool_parts(call):
                    self._add(part, TOOLS, "a tool definition")
        for node in self.document.nodes(ast.Dict, ast.List):
            if isinstance(node, ast.Dict):
                if self._role(node) in SYSTEM_ROLES:
                    self._add(self._content(node), SYSTEM, "a system message")
                elif is_tool_definition(node) and not is_tool_definition(
                    self.document.parent(node)
                ):
                    self._add(node, TOOLS, "a tool definition")
                continue
            items = [e.value if isinstance(e, ast.Starred) else e for e in node.elts]
            roles = [self._role(e) for e in items]
            # Pairs read as (role, text) only when every item is one: [("repo", path), ...]
            # is not a conversation for holding a ("user", ...) pair.
            pairs = any(isinstance(e, ast.Tuple) for e in items)
            if pairs and None in roles:
                continue
            if sum(role is not None for role in roles) >= 2:
                self._message_list(node, "a message list", None)

    # -- named prompt text ------------------------------------------------------------------

    def _named(self, target: ast.expr, value: ast.expr | None) -> None:
        name = target.id if isinstance(target, ast.Name) else None
        if isinstance(target, ast.Attribute):
            name = target.attr
        region = text_region(name) if name else None
        if region is None or value is None or self._conversation(value):
            return
        if isinstance(target, ast.Name) and self._shown_only(target):
            return
        label = self.document.code(target)
        what = {
            SYSTEM: "system prompt",
            TOOLS: "tool definitions",
            PROMPT: "prompt",
            LAST: "user prompt",
        }[region]
        self.named.append(Sink(value, region, f"the {what} `{label}`", named=target))

    def _shown_only(self, target: ast.Name) -> bool:
        """Whether every read of ``target`` in its function passes it to a terminal or a file
        (``print(prompt)``, ``self._write(prompt)``, ``input(prompt)``): text for a person."""
        function = self.document.enclosing_function(target)
        if function is None:
            return False
        reads = self.document.reads_in(function, target.id)
        for read in reads:
            call = self.document.parent(read)
            if not isinstance(call, ast.Call) or read not in call.args:
                return False
            words = split_words(_callee(call.func))
            if not words or words[-1] not in _SHOWN_BY:
                return False
        return bool(reads)

    def _conversation(self, value: ast.expr) -> bool:
        """A list display of messages up to a user turn, judged as a conversation: each
        message has its own region, so the name it is bound to (``prompt = [system, user]``)
        says nothing more."""
        if not isinstance(value, (ast.List, ast.Tuple)):
            return False
        roles = [self._role(e) for e in self._elements(value, depth=1) or ()]
        return any(r in USER_ROLES for r in roles) and sum(r is not None for r in roles) >= 2

    def assignment(self, node: ast.Assign | ast.AnnAssign | ast.AugAssign) -> None:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            self._named(target, node.value)
            self._tool_field(target, node.value)
            self._content_write(target, node.value)
            self._schema_class_name(target, node.value)
            self._demos(target, node.value)

    def _demos(self, target: ast.expr, value: ast.expr | None) -> None:
        """``predictor.demos = examples`` in DSPy: the demos are sent as the turns before the
        input of every call of the predictor."""
        if value is None or not self._dspy:
            return
        if isinstance(target, ast.Attribute) and target.attr == "demos":
            owner = self.document.code(target.value)
            self._add(value, EARLY, f"the few-shot demos of `{owner}`")

    def _content_write(self, target: ast.expr, value: ast.expr | None) -> None:
        """``messages[0]["content"] += text`` or ``messages[2].content = text``: text written
        into an early message of a conversation (the first one is the system message)."""
        if value is None:
            return
        element: ast.expr | None
        if isinstance(target, ast.Attribute) and target.attr == "content":
            element = target.value
            if isinstance(element, ast.Name) and self._copied_message(element, target):
                self._add(value, EARLY, f"the content of `{element.id}`, a copy of a message")
                return
        elif isinstance(target, ast.Subscript) and not isinstance(target.slice, ast.Tuple):
            index = index_of(target)
            key = string_value(index) if index is not None else None
            element = target.value if key == "content" else None
        else:
            return
        if not isinstance(element, ast.Subscript) or isinstance(element.slice, ast.Tuple):
            return
        position = index_of(element)
        name = _dotted(element.value) or ""
        words = split_words(name.rsplit(".", 1)[-1])
        number = integer(position) if isinstance(position, ast.Constant) else None
        if number is None or not words or words[-1] not in CHAT_LISTS:
            return
        first = number == 0
        region, what = (SYSTEM, "the first message") if first else (EARLY, "an earlier message")
        self._add(value, region, f"{what} of `{name}`")

    def _copied_message(self, name: ast.Name, use: ast.AST) -> bool:
        """Whether ``name`` is bound, in the function around ``use``, to a copy of a message
        (``converted = message.model_copy(deep=True)``, ``copy.deepcopy(msg)``): a message
        rewritten on a copy is rendered again each time the stored one is sent."""
        function = self.document.enclosing_function(use)
        if function is None:
            return False
        for node in self.document.nodes(ast.Assign):
            if self.document.enclosing_function(node) is not function:
                continue
            if not any(isinstance(t, ast.Name) and t.id == name.id for t in node.targets):
                continue
            call = node.value
            if not isinstance(call, ast.Call) or _callee(call.func) not in _COPY_CALLS:
                continue
            copied = call.func.value if isinstance(call.func, ast.Attribute) else None
            if _callee(call.func) in ("copy", "deepcopy") and (call.args or call.keywords):
                first = call.args[0] if call.args else call.keywords[0].value
                copied = first.value if isinstance(first, ast.Starred) else first
            words = split_words(_dotted(copied) or "") if copied is not None else ()
            if words and words[-1] in _MESSAGE_WORDS:
                return True
        return False

    def _tool_field(self, target: ast.expr, value: ast.expr | None) -> None:
        """``schema["function"]["description"] = ...`` and a tool class's ``description``."""
        if value is None:
            return
        if isinstance(target, ast.Subscript) and not isinstance(target.slice, ast.Tuple):
            index = index_of(target)
            key = string_value(index) if index is not None else None
            owner = self.document.code(target.value).lower()
            if key in TOOL_FIELDS and any(word in owner for word in _TOOL_OWNERS):
                self._add(value, TOOLS, f"the {key} in `{self.document.code(target.value)}`")
        elif isinstance(target, ast.Name) and target.id in TOOL_FIELDS:
            tool_class = self._tool_class(target)
            if tool_class is not None and self.document.enclosing_function(target) is None:
                self._add(value, TOOLS, f"the {target.id} of tool {tool_class.name}")
        elif (
            isinstance(target, ast.Attribute)
            and target.attr in TOOL_FIELDS
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        ):
            # Set when the tool is made (``self.inputs = {...}`` in ``__init__``).
            tool_class = self._tool_class(target)
            if tool_class is not None:
                self._add(value, TOOLS, f"the {target.attr} of tool {tool_class.name}")

    def _tool_class(self, node: ast.AST) -> ast.ClassDef | None:
        """The class ``node`` is in, if it is a tool's (named for one, or based on one)."""
        tool_class = self.document.enclosing_class(node)
        if tool_class is None:
            return None
        bases = " ".join(self.document.code(b) for b in tool_class.bases)
        return tool_class if tool_class.name.endswith("Tool") or "Tool" in bases else None

    def _schema_class_name(self, target: ast.expr, value: ast.expr | None) -> None:
        """``_Model.__name__ = f"submit_{task.id}"`` for a class made in a factory function
        with declared fields (a dataclass or model, a tool's argument schema): function-calling
        libraries send the class name as the tool's name, so the name is tool definition."""
        if value is None or not isinstance(target, ast.Attribute):
            return
        if target.attr != "__name__" or not isinstance(target.value, ast.Name):
            return
        factory = self.document.enclosing_function(target)
        if factory is None:
            return
        owner = target.value.id
        for node in self.document.nodes(ast.ClassDef):
            if node.name != owner or self.document.enclosing_function(node) is not factory:
                continue
            if _declares_fields(node):
                self._add(value, TOOLS, f"the name of the schema class {owner}")
            return

    def function(self, node: Function) -> None:
        decorated = any(
            isinstance(d, ast.Attribute) and d.attr in SYSTEM_DECORATORS
            for d in node.decorator_list
        )
        region = SYSTEM if decorated else name_region(node.name)
        if region is None:
            region = self._rewritten_prompt(node)
        if region is None:
            return
        what = {SYSTEM: "system prompt", TOOLS: "tool definitions", PROMPT: "prompt"}[region]
        for value in self.document.returns_of(node):
            sink = Sink(
                value,
                region,
                f"the {what} returned by {node.name}()",
                named=None if decorated else node,
            )
            (self.sinks if decorated else self.named).append(sink)

    def _rewritten_prompt(self, node: Function) -> str | None:
        """The region of a parameter named like prompt text that the function returns, changed
        (``def replace_date_tag(prompt_str): ...; return prompt_str``): its result is one too."""
        params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        for param in params:
            region = name_region(param.arg)
            if region not in (SYSTEM, PROMPT):
                continue
            if any(_mentions(v, param.arg) for v in self.document.returns_of(node)):
                return region
        return None


def _declares_fields(node: ast.ClassDef) -> bool:
    """Whether a class body declares annotated fields (``result: int``), as a dataclass or a
    pydantic model used as an argument schema does."""
    return any(isinstance(statement, ast.AnnAssign) for statement in node.body)


@dataclass
class Sinks:
    """The request parts of a document.

    ``concrete`` are seen at a call or a role; ``named`` are known only by a name that says
    prompt; ``message_lists`` are the ``messages`` arguments of requests, ``template_lists``
    those of chat prompt templates (``ChatPromptTemplate.from_messages``).
    """

    concrete: list[Sink]
    named: list[Sink]
    message_lists: list[ast.expr]
    template_lists: list[ast.expr]


def _tool_parts(call: ast.Call) -> list[ast.expr]:
    """The values a tool's constructor is given (``description=...``, ``parameters=...``),
    inside the constructors of its parts (``function=FunctionChunk(...)``): the call itself is
    unknown code, which would hide what flows through it."""
    found = []
    for keyword in call.keywords:
        value = keyword.value
        if keyword.arg is not None and isinstance(value, ast.Call) and keyword.arg == "function":
            found += _tool_parts(value)
        elif keyword.arg is not None:
            found.append(value)
    return found


def find_sinks(document: PythonDocument) -> Sinks:
    finder = _Finder(document)
    for call in document.nodes(ast.Call):
        finder.call(call)
    finder.unclaimed()
    kinds = (ast.Assign, ast.AnnAssign, ast.AugAssign, *FUNCTIONS)
    for node in sorted((n for kind in kinds for n in document.nodes(kind)), key=document.order):
        if isinstance(node, FUNCTIONS):
            finder.function(node)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            finder.assignment(node)
    return Sinks(finder.sinks, finder.named, finder.message_lists, finder.template_lists)


def _added_items(node: ast.Call | ast.AugAssign) -> tuple[ast.expr, list[ast.expr]] | None:
    """The list a statement adds to and the items it adds: ``x.append(m)``,
    ``x.extend([m, n])``, ``x += [m, n]``."""
    if isinstance(node, ast.AugAssign):
        if isinstance(node.op, ast.Add) and isinstance(node.value, (ast.List, ast.Tuple)):
            return node.target, list(node.value.elts)
        return None
    if not isinstance(node.func, ast.Attribute) or len(node.args) != 1:
        return None
    added = node.args[0]
    if node.func.attr == "append":
        return node.func.value, [added]
    if node.func.attr == "extend" and isinstance(added, (ast.List, ast.Tuple)):
        return node.func.value, list(added.elts)
    return None
