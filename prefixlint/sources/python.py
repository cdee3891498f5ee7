"""Python source that builds prompts: screened with ``ast``, analysed with libcst.

A cheap text test (:func:`~prefixlint.pyflow.sinks.may_hold_prompt`) skips files that cannot
hold a prompt (no call, role, keyword or name a sink needs, and no edit of a message list).
The rest are parsed with :func:`ast.parse`, and a syntactic screen over that tree
(:func:`~prefixlint.pyflow.screen.may_need_analysis`) skips files with no request part that a
volatile value could reach and no conversation edited in place. Only what is left is parsed
with libcst, wrapped with its scope, qualified name, parent and position metadata
(:class:`~prefixlint.pyflow.document.PythonDocument`), and handed to every enabled checker
registered for ``"python"``. Code ``ast`` rejects goes straight to libcst, which reports it.
"""

from __future__ import annotations

import ast
import warnings
from typing import TYPE_CHECKING

from prefixlint import registry
from prefixlint.context import RuleContext, SourceError
from prefixlint.pyflow.prompt_words import may_hold_prompt
from prefixlint.pyflow.screen import may_need_analysis
from prefixlint.sources.nesting import guard_python
from prefixlint.types import Diagnostic

if TYPE_CHECKING:
    import libcst as cst

    from prefixlint.pyflow.document import PythonDocument

SOURCE_KIND = "python"


def parse(text: str, ctx: RuleContext) -> PythonDocument:
    """``text`` parsed into a document; :class:`SourceError` at the position if not Python."""
    guard_python(text, ctx.limits)
    return _document(text, ctx)


def _document(text: str, ctx: RuleContext) -> PythonDocument:
    """``text`` parsed by libcst (the nesting guard has run); imported here, so that a run
    whose files all stop at the screen never loads libcst or the python rules."""
    import libcst as cst

    from prefixlint.pyflow.document import PythonDocument

    path = ctx.path
    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        line, column = _error_position(text, exc)
        message = exc.message.splitlines()[0] if exc.message else "syntax error"
        raise SourceError(
            f"{path}:{line}:{column}: not valid Python: {message}", line, column
        ) from None
    try:
        return PythonDocument(text, module, ctx)
    except RecursionError:
        raise SourceError(f"{path}: too deeply nested to analyse") from None


def _error_position(text: str, exc: cst.ParserSyntaxError) -> tuple[int, int]:
    """Where the syntax error is: CPython's compiler places tokenizer errors better than libcst."""
    try:
        compile(text, "<prompt source>", "exec", ast.PyCF_ONLY_AST)
    except SyntaxError as error:
        if error.lineno:
            return error.lineno, max(error.offset or 1, 1)
    except (ValueError, RecursionError, MemoryError):
        pass
    return exc.raw_line, exc.raw_column + 1


def parsed_quietly(text: str) -> ast.Module | None:
    """``text`` parsed by the stdlib; ``None`` where it raises (libcst then reports why). The
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
    if not may_hold_prompt(text):
        return []
    try:
        guard_python(text, ctx.limits)
    except SourceError:
        if not registry.checkers(SOURCE_KIND, ctx.enabled):
            return []
        raise
    tree = parsed_quietly(text)
    if tree is not None and not may_need_analysis(text, tree, ctx):
        return []
    enabled = registry.checkers(SOURCE_KIND, ctx.enabled)
    if not enabled:
        return []
    document = _document(text, ctx)
    found: list[Diagnostic] = []
    for _code, checker in enabled:
        found.extend(checker(document, ctx))
    return found
