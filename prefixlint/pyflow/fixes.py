"""Fixes built as libcst replacement nodes, one per finding, rendered over the old node's span.

Each function takes the ``ast`` node the analysis found and returns a
:class:`~prefixlint.types.Fix` (or ``None`` when no fix keeps the program's meaning):
``sort_keys=True`` for ``json.dumps``, ``sorted(...)`` around an unordered collection where it
is first iterated, a time coarsened to its date, and the relocation of a volatile line from the
system prompt to the end of the last user message. The node is found again in the document's
:class:`~prefixlint.pyflow.concrete.ConcreteTree`, which keeps the file's formatting.
"""

from __future__ import annotations

import ast
import re

import libcst as cst
from libcst._nodes.internal import CodegenState

from prefixlint.pyflow.concrete import ConcreteTree
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.origins import Origin
from prefixlint.types import Applicability, Edit, Fix

_TIME_PART = re.compile(r"(?:\s*(?:at|,|T|-|:|\.)?\s*%[-_0^#]?[HIMSfpzZXcTRrsLkl])+")
_DATE_DIRECTIVE = re.compile(r"%[-_0^#]?[aAbBdjmyYUWVGuwexFDhC]")
_SORT_KEYS = {"by name": "lambda item: item.name"}
_DATETIMES = frozenset(
    {"datetime.datetime.now", "datetime.datetime.utcnow", "datetime.datetime.today"}
)


def render(tree: ConcreteTree, node: cst.CSTNode, at: cst.CSTNode | None = None) -> str:
    """Source for ``node`` to replace the span of ``at`` (positions exclude parentheses).

    Continuation lines are indented like the blocks around ``at``, as libcst would print them
    in place (``Module.code_for_node`` alone prints them as if at module level).
    """
    if getattr(node, "lpar", None):
        node = node.with_changes(lpar=[], rpar=[])
    module = tree.module
    state = CodegenState(
        default_indent=module.default_indent, default_newline=module.default_newline
    )
    if at is not None:
        blocks = [a for a in tree.ancestors(at) if isinstance(a, cst.IndentedBlock)]
        for block in reversed(blocks):
            state.increase_indent(module.default_indent if block.indent is None else block.indent)
    node._codegen(state)
    return "".join(state.tokens)


def replace_node(tree: ConcreteTree, old: cst.CSTNode, new: cst.CSTNode) -> Edit:
    start, end = tree.offsets(old)
    return Edit(start, end, render(tree, new, at=old))


# -- json.dumps(..., sort_keys=True) -------------------------------------------------------------


def sort_keys(document: PythonDocument, found: ast.Call) -> Fix | None:
    """``json.dumps(x)`` -> ``json.dumps(x, sort_keys=True)``; none when ``**kwargs`` may set it."""
    if any(k.arg is None for k in found.keywords):
        return None
    tree = ConcreteTree.of(document)
    call = tree.node(found, cst.Call) if tree is not None else None
    if tree is None or call is None:
        return None
    flag = cst.Arg(
        value=cst.Name("True"),
        keyword=cst.Name("sort_keys"),
        equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
    )
    args = list(call.args)
    existing = [i for i, a in enumerate(args) if a.keyword and a.keyword.value == "sort_keys"]
    if existing:
        args[existing[0]] = args[existing[0]].with_changes(value=cst.Name("True"))
    elif args:
        last = args[-1]
        separator = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        if len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
            separator = args[-2].comma  # one argument per line stays one per line
        args[-1] = last.with_changes(comma=separator)
        args.append(flag.with_changes(comma=last.comma))
    else:
        args.append(flag)
    edit = replace_node(tree, call, call.with_changes(args=args))
    return Fix((edit,), Applicability.SAFE, "Pass `sort_keys=True` to `json.dumps`")


# -- sorted(...) ---------------------------------------------------------------------------------


def sort_collection(document: PythonDocument, origin: Origin) -> Fix | None:
    """Wrap the collection where it is first iterated in ``sorted(...)``.

    Safe when the output otherwise stays the same (``join``, ``list``, a comprehension or a
    ``for``) and the items are known to sort (strings, paths, numbers) or have a ``.name``;
    unsafe otherwise (``sorted`` may raise on mixed items, or a repr changes from ``{...}``
    to ``[...]``).
    """
    tree = ConcreteTree.of(document)
    consumer = origin.consumer
    if tree is None or not isinstance(consumer, ast.expr):
        return None
    target = tree.expression(consumer)
    if target is None:
        return None
    target_code = render(tree, target)
    if isinstance(target, cst.Await):
        target_code = f"({target_code})"
    key = _SORT_KEYS.get(origin.sort_by)
    arguments = [cst.Arg(cst.parse_expression(target_code))]
    if key:
        arguments.append(
            cst.Arg(
                cst.parse_expression(key),
                keyword=cst.Name("key"),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            )
        )
    wrapped = cst.Call(cst.Name("sorted"), args=arguments)
    safe = origin.exact and origin.sort_by in ("plain", "by name")
    applicability = Applicability.SAFE if safe else Applicability.UNSAFE
    title = f"Sort `{_short(target_code)}`" + (" by name" if key else "")
    return Fix((replace_node(tree, target, wrapped),), applicability, title)


def _short(code: str) -> str:
    code = " ".join(code.split())
    return code if len(code) <= 40 else code[:37] + "..."


# -- datetime.now() -> its date ------------------------------------------------------------------


def date_only_format(fmt: str) -> str | None:
    """``fmt`` without its time-of-day directives, or ``None`` if no date would be left."""
    kept = _TIME_PART.sub("", fmt).rstrip(" ,:-T")
    return kept if _DATE_DIRECTIVE.search(kept) else None


def coarsen_to_date(document: PythonDocument, found: ast.Call) -> Fix | None:
    """Show only the date of ``datetime.now()``: the prefix then changes once a day."""
    if not document.qualified_names(found.func) & _DATETIMES:
        return None
    tree = ConcreteTree.of(document)
    call = tree.node(found, cst.Call) if tree is not None else None
    if tree is None or call is None:
        return None
    parent = tree.parent(call)
    title = f"Keep only the date of `{_short(document.source(found))}`"
    if isinstance(parent, cst.Attribute) and parent.value is call:
        method_call = tree.parent(parent)
        if not isinstance(method_call, cst.Call):
            return None
        if parent.attr.value == "strftime" and method_call.args:
            fmt = method_call.args[0].value
            if not isinstance(fmt, cst.SimpleString) or not isinstance(fmt.evaluated_value, str):
                return None
            kept = date_only_format(fmt.evaluated_value)
            if kept is None or kept == fmt.evaluated_value:
                return None
            fmt_new = fmt.with_changes(value=fmt.prefix + fmt.quote + kept + fmt.quote)
            return Fix((replace_node(tree, fmt, fmt_new),), Applicability.UNSAFE, title)
        if parent.attr.value != "isoformat":
            return None
    elif isinstance(parent, cst.FormattedStringExpression) and parent.format_spec:
        spec = parent.format_spec
        texts = [p for p in spec if isinstance(p, cst.FormattedStringText)]
        if len(texts) != len(spec):
            return None
        text = "".join(p.value for p in texts)
        kept = date_only_format(text)
        if kept is None or kept == text:
            return None
        new = parent.with_changes(format_spec=[cst.FormattedStringText(kept)])
        return Fix((replace_node(tree, parent, new),), Applicability.UNSAFE, title)
    elif not (
        isinstance(parent, cst.FormattedStringExpression)
        or (isinstance(parent, cst.Arg) and _in_str_call(document, found))
    ):
        return None
    dated = cst.Call(cst.Attribute(call.with_changes(lpar=[], rpar=[]), cst.Name("date")))
    return Fix((replace_node(tree, call, dated),), Applicability.UNSAFE, title)


def _in_str_call(document: PythonDocument, node: ast.expr) -> bool:
    """Whether ``node`` is passed to ``str(...)``."""
    parent = document.parent(node)
    if isinstance(parent, ast.keyword):
        parent = document.parent(parent)
    return (
        isinstance(parent, ast.Call)
        and parent.func is not node
        and "builtins.str" in document.qualified_names(parent.func)
    )
