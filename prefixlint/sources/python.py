"""Python source that builds prompts: screened and analysed on the stdlib ``ast`` tree.

A cheap text test (:func:`~prefixlint.pyflow.sinks.may_hold_prompt`) skips files that cannot
hold a prompt (no call, role, keyword or name a sink needs outside doctest examples, and no
edit of a message list).
The rest are parsed once with :func:`ast.parse`, and a syntactic screen over that tree
(:func:`~prefixlint.pyflow.screen.may_need_analysis`) skips files with no request part that a
volatile value could reach and no conversation edited in place. What is left is walked into a
:class:`~prefixlint.pyflow.document.PythonDocument` (parents, scopes, qualified names) and
handed to every enabled checker registered for ``"python"``. Code ``ast`` rejects is reported
at the compiler's position. libcst is imported only to render a fix.
"""

from __future__ import annotations

import ast
import re
import sys
import warnings
from typing import TYPE_CHECKING

from prefixlint import registry
from prefixlint.collector import paced_collector
from prefixlint.context import RuleContext, SourceError
from prefixlint.pyflow.importers import sending_importers
from prefixlint.pyflow.prompt_words import may_hold_prompt
from prefixlint.pyflow.screen import may_need_analysis
from prefixlint.sources.nesting import guard_python, within_python_limits
from prefixlint.types import Diagnostic

if TYPE_CHECKING:
    from prefixlint.pyflow.document import PythonDocument

SOURCE_KIND = "python"


def parse(text: str, ctx: RuleContext) -> PythonDocument:
    """``text`` parsed into a document; :class:`SourceError` at the position if not Python."""
    return _document(text, ctx, _guarded_tree(text, ctx))


def _guarded_tree(text: str, ctx: RuleContext) -> ast.Module | None:
    """``text``'s stdlib tree (``None`` where it does not parse), once the nesting guard has
    scanned it where bounds taken from the tree do not show that the limits hold."""
    tree = parsed_quietly(text)
    if tree is None or not within_python_limits(text, tree, ctx.limits):
        guard_python(text, ctx.limits)
    return tree


def _document(text: str, ctx: RuleContext, tree: ast.Module | None) -> PythonDocument:
    """The document of ``text`` (the nesting guard has run), parsed as ``tree``; imported here,
    so that a run whose files all stop at the screen never loads the python rules."""
    from prefixlint.pyflow.document import PythonDocument

    if tree is None:
        line, column, message = _syntax_error(text)
        raise SourceError(f"{ctx.path}:{line}:{column}: not valid Python: {message}", line, column)
    try:
        return PythonDocument(text, tree, ctx)
    except RecursionError:
        raise SourceError(f"{ctx.path}: too deeply nested to analyse") from None


def _syntax_error(text: str) -> tuple[int, int, str]:
    """Where and why the compiler rejects ``text``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compile(text, "<prompt source>", "exec", ast.PyCF_ONLY_AST)
    except SyntaxError as error:
        line = error.lineno or 1
        message = (error.msg or "syntax error") + _newer_syntax_hint(error.msg, error.text)
        return line, max(error.offset or 1, 1), message
    except (ValueError, RecursionError, MemoryError) as error:
        return 1, 1, str(error) or type(error).__name__
    return 1, 1, "syntax error"


def parsed_quietly(text: str) -> ast.Module | None:
    """``text`` parsed by the stdlib; ``None`` where it raises (:func:`parse` says why). The
    compiler's warnings about the user's code (an invalid escape such as ``"\\:"``) are
    not prefixlint's output, so they are silenced."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def check(text: str, ctx: RuleContext) -> list[Diagnostic]:
    """Diagnostics of the enabled python rules for ``text``."""
    if not may_hold_prompt(text) and not sending_importers(ctx.path, text):
        return []
    with paced_collector():  # the tree and the document's maps live while more are made
        return _checked(text, ctx)


def _checked(text: str, ctx: RuleContext) -> list[Diagnostic]:
    """:func:`check` of a text the prefilter lets through."""
    try:
        tree = _guarded_tree(text, ctx)
    except SourceError:
        if not registry.checkers(SOURCE_KIND, ctx.enabled):
            return []
        raise
    if tree is not None and not may_need_analysis(text, tree, ctx):
        return []
    enabled = registry.checkers(SOURCE_KIND, ctx.enabled)
    if not enabled:
        return []
    document = _document(text, ctx, tree)
    found: list[Diagnostic] = []
    for _code, checker in enabled:
        found.extend(checker(document, ctx))
    return found


# Syntax that Python 3.12 added (PEP 701 f-strings, PEP 695 type parameters and ``type``).
_PEP_695_LINE = re.compile(
    r"\s*(?:type\s+\w+\s*(?:\[.*\])?\s*=|(?:async\s+)?def\s+\w+\s*\[|class\s+\w+\s*\[)"
)


def _newer_syntax_hint(message: str | None, line_text: str | None) -> str:
    """A note when the error is syntax a newer Python accepts, on an older one."""
    if sys.version_info >= (3, 12):
        return ""
    if (message or "").startswith("f-string") or _PEP_695_LINE.match(line_text or ""):
        return " (valid in Python 3.12 and newer: run prefixlint on that Python to check it)"
    return ""
