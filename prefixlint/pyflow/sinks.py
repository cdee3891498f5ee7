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

from dataclasses import dataclass
from typing import TypedDict, Unpack

import libcst as cst
from libcst.metadata import BaseAssignment

from prefixlint.codes import SYSTEM_ROLES
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.prompt_words import (
    AGENT_PACKAGES,
    API_METHODS,
    CHAT_LISTS,
    CHAT_ROLES,
    EARLY,
    FRAMEWORKS,
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
    TOOL_FIELDS,
    TOOL_KEYWORDS,
    TOOLS,
    USER_ROLES,
    name_region,
    text_region,
)
from prefixlint.vocabulary import split_words

_LITELLM = frozenset({"litellm.completion", "litellm.acompletion", "litellm.text_completion"})
_SYSTEM_CLASSES = frozenset({"SystemMessage", "SystemMessagePromptTemplate"})
_TEMPLATE_CLASSES = frozenset({"PromptTemplate", "ChatPromptTemplate"})

# Keywords that carry a message's text in message-making calls.
_TEXT_KEYWORDS = ("content", "message", "text", "prompt", "msg")
_TOOL_OWNERS = ("tool", "schema", "function")
# Calls that copy an object, and the words that name one message.
_COPY_CALLS = frozenset({"model_copy", "copy", "deepcopy"})
_MESSAGE_WORDS = frozenset({"message", "msg"})


@dataclass(frozen=True, eq=False)
class Sink:
    """``expr`` becomes part of a request in ``region``; ``description`` says where."""

    expr: cst.BaseExpression
    region: str
    description: str
    call: cst.Call | None = None
    last_user: cst.BaseExpression | None = None
    named: cst.CSTNode | None = None


def string_value(node: cst.CSTNode | None) -> str | None:
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _dotted(node: cst.CSTNode) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    if isinstance(node, cst.Call):
        base = _dotted(node.func)
        return f"{base}()" if base else None
    return None


def _callee(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _mentions(node: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` is read anywhere in ``node``."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name) and current.value == name:
            return True
        stack.extend(current.children)
    return False


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    return next(
        (a.value for a in call.args if a.keyword is not None and a.keyword.value == name), None
    )


def _positional(call: cst.Call, index: int) -> cst.BaseExpression | None:
    args = [a for a in call.args if a.keyword is None and not a.star]
    return args[index].value if len(args) > index else None


class _SinkParts(TypedDict, total=False):
    """The optional fields of a :class:`Sink`, as :meth:`_Finder._add` passes them on."""

    call: cst.Call | None
    last_user: cst.BaseExpression | None


class _Finder:
    def __init__(self, document: PythonDocument) -> None:
        self.document = document
        self.sinks: list[Sink] = []
        self.named: list[Sink] = []
        self._claimed: set[int] = set()
        self._frameworks = any(name in document.text for name in FRAMEWORKS)
        self._agents = any(name in document.text for name in AGENT_PACKAGES)
        self.message_lists: list[cst.BaseExpression] = []

    def _add(
        self,
        expr: cst.BaseExpression | None,
        region: str,
        description: str,
        **more: Unpack[_SinkParts],
    ) -> None:
        if expr is not None and id(expr) not in self._claimed:
            self._claimed.add(id(expr))
            self.sinks.append(Sink(expr, region, description, **more))

    def _framework_class(self, func: cst.BaseExpression) -> str | None:
        if not self._frameworks:
            return None
        for name in self.document.qualified_names(func):
            if name.split(".")[0] in FRAMEWORKS:
                parts = name.split(".")
                owner = parts[-2] in _TEMPLATE_CLASSES or parts[-2] in _SYSTEM_CLASSES
                return ".".join(parts[-2:]) if owner else parts[-1]
        return None

    # -- calls ------------------------------------------------------------------------------

    def call(self, node: cst.Call) -> None:
        dotted = _dotted(node.func) or " ".join(self.document.code(node.func).split())
        api = self._api(node, dotted)
        if api is not None:
            self._api_call(node, dotted, api)
        framework = self._framework_class(node.func)
        if framework is not None:
            self._framework_call(node, framework)
        for argument in node.args:
            keyword = argument.keyword.value if argument.keyword is not None else None
            if keyword in SYSTEM_KEYWORDS:
                self._add(argument.value, SYSTEM, f"the {keyword} of {dotted}", call=node)
            elif keyword in TOOL_KEYWORDS and (api is not None or self._agent_call(node)):
                self._add(argument.value, TOOLS, f"the tool definitions of {dotted}", call=node)
        index = self._positional_system(node)
        if index is not None:
            self._add(_positional(node, index), SYSTEM, f"the system message of {dotted}")
        if isinstance(node.func, cst.Attribute) and node.func.attr.value == "bind_tools":
            self._add(_positional(node, 0), TOOLS, f"the tool definitions of {dotted}")
        self._system_builder(node, dotted)

    def _system_builder(self, node: cst.Call, dotted: str) -> None:
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
        elif len([a for a in node.args if a.keyword is None]) >= 2 and MESSAGE_MAKER.search(
            _callee(node.func)
        ):
            role, text = _positional(node, 0), _positional(node, 1)
        spelled = string_value(role) or (role.attr.value if isinstance(role, cst.Attribute) else "")
        if text is None or spelled.lower() not in SYSTEM_ROLES:
            return
        self._add(text, SYSTEM, f"the system message made by {dotted}", call=node)

    def _positional_system(self, node: cst.Call) -> int | None:
        """The index of the system message among an agent constructor's positional arguments."""
        if not self._agents or not node.args or node.args[0].keyword is not None:
            return None
        for name in self.document.qualified_names(node.func):
            parts = name.split(".")
            index = POSITIONAL_SYSTEM.get((parts[0], parts[-1]))
            if index is not None:
                return index
        return None

    def _agent_call(self, node: cst.Call) -> bool:
        """A call into an LLM framework (an agent or model constructor that takes tools)."""
        if not self._agents:
            return False
        roots = {name.split(".")[0] for name in self.document.qualified_names(node.func)}
        return bool(roots & AGENT_PACKAGES)

    def _api(self, node: cst.Call, dotted: str) -> str | None:
        parts = [p for p in dotted.split(".") if p not in RESPONSE_WRAPPERS]
        if parts[-1].endswith("completion") and self.document.qualified_names(node.func) & _LITELLM:
            return "litellm"
        keywords = {a.keyword.value for a in node.args if a.keyword is not None}
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

    def _api_call(self, node: cst.Call, dotted: str, api: str) -> None:
        messages = _keyword(node, "messages")
        if api == "litellm" and messages is None:
            messages = _positional(node, 1)
        if api == "responses":
            value = _keyword(node, "input")
            if isinstance(value, (cst.List, cst.Name, cst.BinaryOperation)):
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

    def _framework_call(self, node: cst.Call, name: str) -> None:
        if name.split(".")[0] in _SYSTEM_CLASSES and name.endswith(".from_template"):
            template = _keyword(node, "template") or _positional(node, 0)
            self._add(template, SYSTEM, f"the template of {name}")
        elif name in _SYSTEM_CLASSES:
            content = _keyword(node, "content") or _keyword(node, "prompt") or _positional(node, 0)
            self._add(content, SYSTEM, f"the {name}")
        elif name.endswith(".from_template") or name in _TEMPLATE_CLASSES:
            template = _keyword(node, "template") or _positional(node, 0)
            if isinstance(template, (cst.List, cst.Tuple)):
                self._message_list(template, name, None)
            elif template is not None:
                self._add(template, PROMPT, f"the template of {name}")
        elif name.endswith(".from_messages"):
            messages = _keyword(node, "messages") or _positional(node, 0)
            if messages is not None:
                self._message_list(messages, name, None)
        elif name == "ChatMessage" and self._role(node) in SYSTEM_ROLES:
            self._add(self._content(node), SYSTEM, "a system ChatMessage")

    # -- message lists ----------------------------------------------------------------------

    def _message_list(
        self, expr: cst.BaseExpression, owner: str, call: cst.Call | None
    ) -> cst.BaseExpression | None:
        """Register the messages of a list; returns the content of its last user message."""
        elements = self._elements(expr, depth=0)
        if elements is None:
            return None
        roles = [self._role(e) for e in elements]
        users = [i for i, role in enumerate(roles) if role in USER_ROLES]
        last = users[-1] if users else None
        last_content = self._content(elements[last]) if last is not None else None
        for index, (element, role) in enumerate(zip(elements, roles, strict=True)):
            content = self._content(element)
            if role in SYSTEM_ROLES:
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

    def _elements(self, expr: cst.BaseExpression, depth: int) -> list[cst.BaseExpression] | None:
        """The messages of a list display (through ``+`` and one level of names)."""
        if isinstance(expr, (cst.List, cst.Tuple)):
            return [e.value for e in expr.elements]
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            left = self._elements(expr.left, depth) or [expr.left]
            right = self._elements(expr.right, depth) or [expr.right]
            return left + right
        if isinstance(expr, cst.Name) and depth == 0:
            scope = self.document.scopes.get(expr)
            if scope is None or expr.value not in scope:
                return None
            assignments = list(scope[expr.value])
            values = [self._assigned_value(a) for a in assignments]
            lists = [self._elements(v, 1) for v in values if v is not None]
            lists = [items for items in lists if items]
            return lists[0] if len(lists) == 1 else None
        return None

    def _assigned_value(self, assignment: BaseAssignment) -> cst.BaseExpression | None:
        target = getattr(assignment, "node", None)
        parent = self.document.parent(target) if target is not None else None
        if isinstance(parent, cst.AssignTarget):
            statement = self.document.parent(parent)
            return statement.value if isinstance(statement, cst.Assign) else None
        if isinstance(parent, cst.AnnAssign):
            return parent.value
        return None

    def _role(self, element: cst.BaseExpression) -> str | None:
        if isinstance(element, cst.Dict):
            for item in element.elements:
                if isinstance(item, cst.DictElement) and string_value(item.key) == "role":
                    role = string_value(item.value)
                    if role is None and isinstance(item.value, cst.Attribute):
                        role = item.value.attr.value
                    return role.lower() if role else None
            return None
        if isinstance(element, cst.Tuple) and len(element.elements) == 2:
            role = (string_value(element.elements[0].value) or "").lower()
            return role if role in SYSTEM_ROLES or role in CHAT_ROLES else None
        if isinstance(element, cst.Call):
            name = _dotted(element.func) or ""
            short = name.rsplit(".", 1)[-1]
            if MESSAGE_CLASSES.get(short):
                return MESSAGE_CLASSES[short]
            role_arg = _keyword(element, "role")
            text = string_value(role_arg)
            if text is None and isinstance(role_arg, cst.Attribute):
                text = role_arg.attr.value
            return text.lower() if text else None
        return None

    @staticmethod
    def _content(element: cst.BaseExpression) -> cst.BaseExpression | None:
        if isinstance(element, cst.Dict):
            for item in element.elements:
                if isinstance(item, cst.DictElement) and string_value(item.key) in (
                    "content",
                    "text",
                ):
                    return item.value
            return None
        if isinstance(element, cst.Tuple) and len(element.elements) == 2:
            return element.elements[1].value
        if isinstance(element, cst.Call):
            return _keyword(element, "content") or _positional(element, 0)
        return None

    def unclaimed(self) -> None:
        """Role dicts and message lists not already seen as part of a request."""
        for node in self.document.nodes(cst.Dict, cst.List):
            if isinstance(node, cst.Dict):
                if self._role(node) in SYSTEM_ROLES:
                    self._add(self._content(node), SYSTEM, "a system message")
                continue
            roles = [self._role(e.value) for e in node.elements]
            # Pairs read as (role, text) only when every item is one: [("repo", path), ...]
            # is not a conversation for holding a ("user", ...) pair.
            pairs = any(isinstance(e.value, cst.Tuple) for e in node.elements)
            if pairs and None in roles:
                continue
            if sum(role is not None for role in roles) >= 2:
                self._message_list(node, "a message list", None)

    # -- named prompt text ------------------------------------------------------------------

    def _named(
        self, target: cst.CSTNode, value: cst.BaseExpression | None, statement: cst.CSTNode
    ) -> None:
        name = target.value if isinstance(target, cst.Name) else None
        if isinstance(target, cst.Attribute):
            name = target.attr.value
        region = text_region(name) if name else None
        if region is not None and value is not None:
            label = self.document.code(target)
            what = {
                SYSTEM: "system prompt",
                TOOLS: "tool definitions",
                PROMPT: "prompt",
                LAST: "user prompt",
            }[region]
            self.named.append(Sink(value, region, f"the {what} `{label}`", named=target))

    def assignment(self, node: cst.Assign | cst.AnnAssign | cst.AugAssign) -> None:
        targets = (
            [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
        )
        for target in targets:
            self._named(target, node.value, node)
            self._tool_field(target, node.value)
            self._content_write(target, node.value)
            self._schema_class_name(target, node.value)

    def _content_write(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        """``messages[0]["content"] += text`` or ``messages[2].content = text``: text written
        into an early message of a conversation (the first one is the system message)."""
        if value is None:
            return
        if isinstance(target, cst.Attribute) and target.attr.value == "content":
            element: cst.BaseExpression | None = target.value
            if isinstance(element, cst.Name) and self._copied_message(element, target):
                self._add(value, EARLY, f"the content of `{element.value}`, a copy of a message")
                return
        elif isinstance(target, cst.Subscript) and len(target.slice) == 1:
            index = target.slice[0].slice
            key = string_value(index.value) if isinstance(index, cst.Index) else None
            element = target.value if key == "content" else None
        else:
            return
        if not isinstance(element, cst.Subscript) or len(element.slice) != 1:
            return
        index = element.slice[0].slice
        position = index.value if isinstance(index, cst.Index) else None
        name = _dotted(element.value) or ""
        words = split_words(name.rsplit(".", 1)[-1])
        if not isinstance(position, cst.Integer) or not words or words[-1] not in CHAT_LISTS:
            return
        first = int(position.value, 0) == 0
        region, what = (SYSTEM, "the first message") if first else (EARLY, "an earlier message")
        self._add(value, region, f"{what} of `{name}`")

    def _copied_message(self, name: cst.Name, use: cst.CSTNode) -> bool:
        """Whether ``name`` is bound, in the function around ``use``, to a copy of a message
        (``converted = message.model_copy(deep=True)``, ``copy.deepcopy(msg)``): a message
        rewritten on a copy is rendered again each time the stored one is sent."""
        function = self.document.enclosing_function(use)
        if function is None:
            return False
        for node in self.document.nodes(cst.Assign):
            if self.document.enclosing_function(node) is not function:
                continue
            if not any(
                isinstance(t.target, cst.Name) and t.target.value == name.value
                for t in node.targets
            ):
                continue
            call = node.value
            if not isinstance(call, cst.Call) or _callee(call.func) not in _COPY_CALLS:
                continue
            copied = call.func.value if isinstance(call.func, cst.Attribute) else None
            if _callee(call.func) in ("copy", "deepcopy") and call.args:
                copied = call.args[0].value
            words = split_words(_dotted(copied) or "") if copied is not None else ()
            if words and words[-1] in _MESSAGE_WORDS:
                return True
        return False

    def _tool_field(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        """``schema["function"]["description"] = ...`` and a tool class's ``description``."""
        if value is None:
            return
        if isinstance(target, cst.Subscript) and len(target.slice) == 1:
            index = target.slice[0].slice
            key = string_value(index.value) if isinstance(index, cst.Index) else None
            owner = self.document.code(target.value).lower()
            if key in TOOL_FIELDS and any(word in owner for word in _TOOL_OWNERS):
                self._add(value, TOOLS, f"the {key} in `{self.document.code(target.value)}`")
        elif isinstance(target, cst.Name) and target.value in TOOL_FIELDS:
            tool_class = self.document.enclosing_class(target)
            if tool_class is not None and self.document.enclosing_function(target) is None:
                bases = " ".join(self.document.code(b.value) for b in tool_class.bases)
                if tool_class.name.value.endswith("Tool") or "Tool" in bases:
                    self._add(value, TOOLS, f"the {target.value} of tool {tool_class.name.value}")

    def _schema_class_name(
        self, target: cst.BaseAssignTargetExpression, value: cst.BaseExpression | None
    ) -> None:
        """``_Model.__name__ = f"submit_{task.id}"`` for a class made in a factory function
        with declared fields (a dataclass or model, a tool's argument schema): function-calling
        libraries send the class name as the tool's name, so the name is tool definition."""
        if value is None or not isinstance(target, cst.Attribute):
            return
        if target.attr.value != "__name__" or not isinstance(target.value, cst.Name):
            return
        factory = self.document.enclosing_function(target)
        if factory is None:
            return
        owner = target.value.value
        for node in self.document.nodes(cst.ClassDef):
            if node.name.value != owner or self.document.enclosing_function(node) is not factory:
                continue
            if _declares_fields(node):
                self._add(value, TOOLS, f"the name of the schema class {owner}")
            return

    def function(self, node: cst.FunctionDef) -> None:
        decorated = any(
            isinstance(d.decorator, cst.Attribute) and d.decorator.attr.value in SYSTEM_DECORATORS
            for d in node.decorators
        )
        region = SYSTEM if decorated else name_region(node.name.value)
        if region is None:
            region = self._rewritten_prompt(node)
        if region is None:
            return
        what = {SYSTEM: "system prompt", TOOLS: "tool definitions", PROMPT: "prompt"}[region]
        for value in self.document.returns_of(node):
            sink = Sink(
                value,
                region,
                f"the {what} returned by {node.name.value}()",
                named=None if decorated else node,
            )
            (self.sinks if decorated else self.named).append(sink)

    def _rewritten_prompt(self, node: cst.FunctionDef) -> str | None:
        """The region of a parameter named like prompt text that the function returns, changed
        (``def replace_date_tag(prompt_str): ...; return prompt_str``): its result is one too."""
        params = [*node.params.posonly_params, *node.params.params, *node.params.kwonly_params]
        for param in params:
            region = name_region(param.name.value)
            if region not in (SYSTEM, PROMPT):
                continue
            if any(_mentions(v, param.name.value) for v in self.document.returns_of(node)):
                return region
        return None


def _declares_fields(node: cst.ClassDef) -> bool:
    """Whether a class body declares annotated fields (``result: int``), as a dataclass or a
    pydantic model used as an argument schema does."""
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return any(
        isinstance(statement, cst.SimpleStatementLine)
        and any(isinstance(small, cst.AnnAssign) for small in statement.body)
        for statement in body
    )


@dataclass
class Sinks:
    """The request parts of a document.

    ``concrete`` are seen at a call or a role; ``named`` are known only by a name that says
    prompt; ``message_lists`` are the ``messages`` arguments of requests.
    """

    concrete: list[Sink]
    named: list[Sink]
    message_lists: list[cst.BaseExpression]


def find_sinks(document: PythonDocument) -> Sinks:
    finder = _Finder(document)
    for call in document.nodes(cst.Call):
        finder.call(call)
    finder.unclaimed()
    for node in document.nodes(cst.Assign, cst.AnnAssign, cst.AugAssign, cst.FunctionDef):
        if isinstance(node, cst.FunctionDef):
            finder.function(node)
        else:
            finder.assignment(node)
    return Sinks(finder.sinks, finder.named, finder.message_lists)
