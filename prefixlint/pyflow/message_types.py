"""Which names hold chat messages by their definition: a type annotation or a copy of a list.

``def f(memory: list[Message])`` and ``history = chat_history.copy()`` say what a list holds
whatever it is called; the history rules use this beside names and appended role dicts.
"""

from __future__ import annotations

import libcst as cst

_CONTAINERS = frozenset({"list", "List", "Sequence", "MutableSequence", "Iterable", "deque"})
_MESSAGE_SUFFIXES = ("Message", "MessageParam", "MessageDict")
_COPY_METHODS = frozenset({"copy", "deepcopy"})
_COPY_CALLS = frozenset({"list", "copy", "deepcopy"})


def _leaf(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def is_message_class(node: cst.BaseExpression) -> bool:
    """A class spelled like a chat message (``UserMessage``, ``llm.ChatMessage``)."""
    name = _leaf(node)
    return name is not None and name.endswith(_MESSAGE_SUFFIXES)


def holds_messages(annotation: cst.BaseExpression | None) -> bool:
    """``list[Message]``, ``List[ChatMessage]``, ``Sequence["BaseMessage"]`` and the like."""
    if isinstance(annotation, cst.Subscript) and _leaf(annotation.value) in _CONTAINERS:
        if len(annotation.slice) != 1 or not isinstance(annotation.slice[0].slice, cst.Index):
            return False
        item = annotation.slice[0].slice.value
        if isinstance(item, cst.SimpleString):
            text = item.evaluated_value
            return isinstance(text, str) and text.endswith(_MESSAGE_SUFFIXES)
        return is_message_class(item)
    if isinstance(annotation, cst.BinaryOperation):  # list[Message] | None
        return holds_messages(annotation.left) or holds_messages(annotation.right)
    return False


def copied_list(value: cst.BaseExpression) -> cst.BaseExpression | None:
    """The list that ``value`` copies: ``x.copy()``, ``list(x)``, ``x[:]``, ``copy.deepcopy(x)``."""
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Attribute) and func.attr.value in _COPY_METHODS and not value.args:
            return func.value
        if _leaf(func) in _COPY_CALLS and len(value.args) == 1:
            return value.args[0].value
        return None
    if isinstance(value, cst.Subscript) and len(value.slice) == 1:
        window = value.slice[0].slice
        if isinstance(window, cst.Slice) and window.lower is None and window.upper is None:
            return value.value
    return None
