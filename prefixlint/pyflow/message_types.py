"""Which names hold chat messages by their definition: a type annotation or a copy of a list.

``def f(memory: list[Message])`` and ``history = chat_history.copy()`` say what a list holds
whatever it is called; the history rules use this beside names and appended role dicts.
"""

from __future__ import annotations

import ast

from prefixlint.pyflow.syntax import leaf, string_value
from prefixlint.vocabulary import split_words

_CONTAINERS = frozenset({"list", "List", "Sequence", "MutableSequence", "Iterable", "deque"})
# Words that make a list of messages, or a message class, something other than a conversation
# with a model (``error_messages``, ``EmailMessage``, ``UIMessage``).
NOT_CHAT_WORDS = frozenset(
    {
        "by", "error", "errors", "warning", "warnings", "log", "logs", "validation", "status",
        "commit", "git", "debug", "email", "queue", "kafka", "flash", "pending", "unread", "ui",
    }
)  # fmt: skip
_MESSAGE_SUFFIXES = ("Message", "MessageParam", "MessageDict")
_COPY_METHODS = frozenset({"copy", "deepcopy"})
_COPY_CALLS = frozenset({"list", "copy", "deepcopy"})


def is_message_class(node: ast.expr) -> bool:
    """A class spelled like a chat message (``UserMessage``, ``llm.ChatMessage``), not like
    another kind (``EmailMessage``, ``UIMessage``)."""
    name = leaf(node)
    if name is None or not name.endswith(_MESSAGE_SUFFIXES):
        return False
    return NOT_CHAT_WORDS.isdisjoint(split_words(name))


def builds_message(value: ast.AST) -> bool:
    """A message object or role dict: ``Message(...)``, ``make(role=...)``, ``{"role": ...}``."""
    if isinstance(value, ast.Call):
        return is_message_class(value.func) or any(k.arg == "role" for k in value.keywords)
    return isinstance(value, ast.Dict) and any(
        key is not None and string_value(key) == "role" for key in value.keys
    )


def builds_messages(value: ast.AST) -> bool:
    """A message, or a list display or comprehension that makes messages (``[{"role": ...}]``,
    ``[{"role": m["role"], ...} for m in messages]``)."""
    if isinstance(value, ast.List):
        return any(builds_message(e) for e in value.elts)
    if isinstance(value, ast.ListComp):
        return builds_message(value.elt)
    return builds_message(value)


def holds_messages(annotation: ast.expr | None) -> bool:
    """``list[Message]``, ``List[ChatMessage]``, ``Sequence["BaseMessage"]`` and the like."""
    if isinstance(annotation, ast.Subscript) and leaf(annotation.value) in _CONTAINERS:
        item = annotation.slice
        if isinstance(item, (ast.Tuple, ast.Slice)):
            return False
        if isinstance(item, ast.Constant):
            return isinstance(item.value, str) and item.value.endswith(_MESSAGE_SUFFIXES)
        return is_message_class(item)
    if isinstance(annotation, ast.BinOp):  # list[Message] | None
        return holds_messages(annotation.left) or holds_messages(annotation.right)
    return False


def copied_list(value: ast.expr) -> ast.expr | None:
    """The list that ``value`` copies: ``x.copy()``, ``list(x)``, ``x[:]``, ``copy.deepcopy(x)``."""
    if isinstance(value, ast.Call):
        func = value.func
        given = [a.value if isinstance(a, ast.Starred) else a for a in value.args]
        given += [k.value for k in value.keywords]
        if isinstance(func, ast.Attribute) and func.attr in _COPY_METHODS and not given:
            return func.value
        if leaf(func) in _COPY_CALLS and len(given) == 1:
            return given[0]
        return None
    if isinstance(value, ast.Subscript):
        window = value.slice
        if isinstance(window, ast.Slice) and window.lower is None and window.upper is None:
            return value.value
    return None


def spliced_parts(node: ast.AST) -> list[tuple[bool, ast.expr]]:
    """The items of a list built by a display or ``+`` (``[system, *history, user]``,
    ``[system] + history``), in order, each marked whether it splices in a whole list."""
    if isinstance(node, ast.List):
        return [(True, e.value) if isinstance(e, ast.Starred) else (False, e) for e in node.elts]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return spliced_parts(node.left) + spliced_parts(node.right)
    return [(True, node)] if isinstance(node, ast.expr) else []


def is_tool_definition(node: ast.AST | None) -> bool:
    """Whether ``node`` spells out a tool for a model, whatever request it joins later: an
    OpenAI tool (``{"type": "function", "function": {...}}``), a function's schema (``name``,
    ``description`` and ``parameters``, or Anthropic's ``input_schema``), as a dict display,
    ``dict(...)`` or a typed param (``ChatCompletionToolParam(...)``)."""
    fields: dict[str | None, ast.expr]
    if isinstance(node, ast.Dict):
        fields = {string_value(k): v for k, v in zip(node.keys, node.values, strict=True) if k}
    elif isinstance(node, ast.Call) and _tool_maker(leaf(node.func) or ""):
        fields = {k.arg: k.value for k in node.keywords if k.arg}
    else:
        return False
    inner = fields.get("function")
    if string_value(fields.get("type")) == "function" and inner is not None:
        return is_tool_definition(inner) or _described(inner)  # not a ``tool_choice``
    return {"name", "description"} <= fields.keys() and bool(
        {"parameters", "input_schema"} & fields.keys()
    )


def _described(node: ast.expr) -> bool:
    """A function's spec with a description (``{"name": ..., "description": ...}``)."""
    if isinstance(node, ast.Dict):
        return "description" in {string_value(k) for k in node.keys if k}
    if isinstance(node, ast.Call):
        return any(k.arg == "description" for k in node.keywords)
    return False


def _tool_maker(name: str) -> bool:
    return name == "dict" or name.endswith("ToolParam")
