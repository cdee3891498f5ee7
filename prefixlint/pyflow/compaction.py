"""The shapes of a conversation compacted: a summary joined to its recent messages, a
computed selection of them, a call that cuts it, or a fetch of only its newest messages
(``HistoryAnalysis._compactions``, ``_summarized_splits`` and ``_fetched_windows``, and the
screen that lets a file through to them)."""

from __future__ import annotations

import ast

from prefixlint.pyflow.syntax import leaf
from prefixlint.vocabulary import split_words

# Callees that summarise a conversation, or cut it by a size given with it.
SUMMARY_CALL_WORDS = frozenset({"compress", "summarize", "summarise", "condense", "compact"})
CUT_CALL_WORDS = frozenset({"split", "trim", "truncate", "fit", "prune", "filter"})
# Words naming a summary of older messages, and a selection of messages to keep.
_SUMMARY_NAMES = frozenset({"summary", "summaries", "summarized", "summarised", "condensed"})
_KEEP_WORDS = frozenset({"keep", "kept", "retain", "retained", "preserve", "preserved", "selected"})
# The exchanges of a conversation (``self.runs``), and the words of a class that keeps them.
EXCHANGE_WORDS = frozenset({"runs", "rounds", "turns", "exchanges", "interactions"})
CONVERSATION_CLASS_WORDS = frozenset(
    {"conversation", "chat", "memory", "history", "dialog", "dialogue"}
)
# Words of a callee that fetches a stored conversation, and of a keyword that caps how many of
# its newest messages come back (``get_messages(limit=20)``, ``load_history(last_n=5)``).
_FETCHED_WORDS = frozenset({"messages", "msgs", "history", "conversation", "turns"})
_COUNT_WORDS = frozenset({"limit", "last", "num", "n", "k", "recent", "max", "window"})


def added(node: ast.BinOp) -> list[ast.expr]:
    """The operands of a chain of ``+``."""
    if not isinstance(node.op, ast.Add):
        return []
    out = []
    for side in (node.left, node.right):
        out += added(side) if isinstance(side, ast.BinOp) else [side]
    return out


def names_summary(node: ast.expr) -> bool:
    """A name or attribute named like a summary (``summary``), or a short list display holding
    one or a message made of one (``[summary_msg]``, ``[m[0], {"role": "user", "content":
    summary}]``)."""
    if isinstance(node, ast.List):
        return len(node.elts) <= 3 and any(_summary_item(e) for e in node.elts)
    return _named_summary(node)


def _summary_item(node: ast.expr) -> bool:
    """``summary_msg``, or a message dict or constructor whose content is a summary."""
    if isinstance(node, ast.Dict):
        contents = [v for k, v in zip(node.keys, node.values, strict=True) if _is_content(k)]
    elif isinstance(node, ast.Call):
        contents = [k.value for k in node.keywords if k.arg == "content"]
    else:
        return _named_summary(node)
    return any(_named_summary(part) for value in contents for part in _text_parts(value))


def _is_content(key: ast.expr | None) -> bool:
    return isinstance(key, ast.Constant) and key.value == "content"


def _text_parts(value: ast.expr) -> list[ast.expr]:
    """The value, or the fields of an f-string."""
    if isinstance(value, ast.JoinedStr):
        return [v.value for v in value.values if isinstance(v, ast.FormattedValue)]
    return [value]


def _named_summary(node: ast.expr) -> bool:
    name = leaf(node)
    return name is not None and bool(_SUMMARY_NAMES.intersection(split_words(name)))


def selects(test: ast.expr) -> bool:
    """``id(m) in kept_ids``, ``i in keep_indices`` or ``sorted(keep)``: a membership test in,
    or the items of, a collection named as what to keep."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.In):
        test = test.comparators[0]
    if isinstance(test, ast.Call) and leaf(test.func) == "sorted" and test.args:
        test = test.args[0]
    name = leaf(test)
    return name is not None and bool(_KEEP_WORDS.intersection(split_words(name)))


def cuts_conversation(call: ast.expr) -> bool:
    """A call (awaited or not) whose callee says it summarises or cuts (``trim(...)``)."""
    if isinstance(call, ast.Await):
        call = call.value
    if not isinstance(call, ast.Call):
        return False
    name = leaf(call.func)
    words = set(split_words(name)) if name else set()
    return bool(words & (SUMMARY_CALL_WORDS | CUT_CALL_WORDS))


def fetch_cap(call: ast.expr) -> str | None:
    """The keyword that caps a fetch of a stored conversation's newest messages
    (``session.get_messages(limit=n)``: ``"limit"``), if ``call`` (awaited or not) is one."""
    if isinstance(call, ast.Await):
        call = call.value
    if not isinstance(call, ast.Call):
        return None
    name = leaf(call.func)
    if not name or not _FETCHED_WORDS.intersection(split_words(name)):
        return None
    for keyword in call.keywords:
        given = not (isinstance(keyword.value, ast.Constant) and keyword.value.value is None)
        if keyword.arg and given and _COUNT_WORDS.intersection(split_words(keyword.arg)):
            return keyword.arg
    return None
