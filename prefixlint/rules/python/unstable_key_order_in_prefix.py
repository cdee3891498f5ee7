"""PFX202 in Python: a dict is serialised into prompt text without a stable key order."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from prefixlint.codes import KEY_ORDER
from prefixlint.context import RuleContext
from prefixlint.pyflow.analysis import Reach
from prefixlint.pyflow.document import PythonDocument
from prefixlint.pyflow.fixers import sort_keys
from prefixlint.pyflow.report import prefix_diagnostics
from prefixlint.registry import register
from prefixlint.types import Diagnostic, Fix


def _fix(document: PythonDocument, reach: Reach) -> Fix | None:
    call = reach.origin.node
    if isinstance(call, ast.Call) and "json.dumps" in document.qualified_names(call.func):
        return sort_keys(document, call)
    return None


# How the value this rule finds changes, in its message.
CHANGE = "writes keys in whatever order the dict was built"


@register(KEY_ORDER, "python")
def check(document: PythonDocument, ctx: RuleContext) -> Iterator[Diagnostic]:
    return prefix_diagnostics(document, KEY_ORDER, CHANGE, lambda reach: _fix(document, reach))
