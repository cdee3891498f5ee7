"""``str.format`` templates in Python string literals: their fields, and where one is written."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from prefixlint.pyflow.syntax import string_value
from prefixlint.types import Span

# A replacement field: ``{question}``, ``{doc.title!r}``, ``{n:>4}`` (``{{`` is a brace).
FIELD = re.compile(r"\{([A-Za-z_][\w.]*)(?:![rsa])?(?::[^{}]*)?\}")


def masked(text: str) -> str:
    """``text`` with escaped braces (``{{``, ``}}``) blanked, so they never read as fields."""
    return text.replace("{{", "\0\0").replace("}}", "\0\0")


def template_fields(text: str) -> list[str]:
    """The field names of a template, in order."""
    return [match.group(1) for match in FIELD.finditer(masked(text))]


def static_part(text: str) -> str:
    """The text of a template piece without its fields."""
    return FIELD.sub("", text).replace("\0", "")


def span_within(whole: Span, raw: str, piece: str) -> Span:
    """Where ``piece`` is first written in ``raw``, the source of the literal at ``whole``."""
    index = raw.find(piece)
    if index < 0:
        return whole
    line_start = raw.rfind("\n", 0, index) + 1
    line = whole.line + raw.count("\n", 0, index)
    column = index - line_start + 1 + (whole.column - 1 if line == whole.line else 0)
    return Span(whole.path, line, column, line, column + len(piece))


def written_as_sent(node: ast.expr, parent_of: Callable[[ast.AST], ast.AST | None]) -> bool:
    """Whether the string ``node`` is the content of a message written out in place: a value of
    a ``{"role": ..., "content": ...}`` literal or the content of a message class
    (``SystemMessage(content=...)``), with no template maker (``PromptTemplate``,
    ``from_messages``) or ``.format`` around it. Such text is sent as written, so its braces
    are text, not fields."""
    parent = parent_of(node)
    if isinstance(parent, ast.keyword):
        call = parent_of(parent)
        return parent.arg == "content" and isinstance(call, ast.Call) and _message_class(call)
    if isinstance(parent, ast.Call):
        return node in parent.args and _message_class(parent)
    if not (isinstance(parent, ast.Dict) and node in parent.values):
        return False
    keys = {string_value(key) for key in parent.keys if key is not None}
    if not {"role", "content"} <= keys:
        return False
    above = parent_of(parent)
    while isinstance(above, (ast.List, ast.Tuple, ast.Starred)):
        above = parent_of(above)
    return not (isinstance(above, ast.Call) and template_maker(above.func))


def _callee_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _message_class(call: ast.Call) -> bool:
    name = _callee_name(call.func)
    return name.endswith("Message") and not template_maker(call.func)


def template_maker(func: ast.expr) -> bool:
    name = _callee_name(func).lower()
    return "template" in name or "prompt" in name or name in ("from_messages", "format")
