"""Cheap depth and size guards, run on the text before a parser that could crash or hang on it.

Parsers recurse once per nesting level (libcst's native parser and ``ast`` crash outright on a
few thousand nested brackets; ``tomllib`` raises ``RecursionError``), and a chain of ten
thousand ``+`` terms nests as deeply as ten thousand brackets. These scans are linear, stop at
the first excess, and raise :class:`~prefixlint.context.SourceError` at its line and column,
naming the limit (see :mod:`prefixlint.limits`).
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import replace
from itertools import accumulate, repeat

from prefixlint.context import SourceError
from prefixlint.limits import DEFAULT_LIMITS, Limits
from prefixlint.lines import python_lines

_CHAIN_OPERATORS = frozenset(
    {"+", "-", "*", "/", "//", "%", "@", "**", "<<", ">>", "&", "|", "^", "~", "<", ">"}
    | {"<=", ">=", "==", "!=", ".", "and", "or", "not", "in", "is", "if", "else"}
)
_CHAIN_BREAKS = frozenset({",", ";", ":", "=", ":=", "->"})
_TRAILER_AFTER = frozenset({tokenize.NAME, tokenize.STRING, tokenize.NUMBER})
_OPENERS, _CLOSERS = "([{", ")]}"
_SKIPPED = frozenset({tokenize.NL, tokenize.COMMENT})
_STATEMENT_STARTS = frozenset({tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT})


def _too_deep(limit: int, line: int, column: int) -> SourceError:
    return SourceError(
        f"nested too deeply to check: over {limit} levels (limit max-depth)", line, column
    )


def _too_long(limit: int, line: int, column: int) -> SourceError:
    return SourceError(
        f"expression too long to check: over {limit} operators, literals or elifs in a row"
        " (limit max-python-chain)",
        line,
        column,
    )


def _chains(token: tokenize.TokenInfo, previous: tokenize.TokenInfo | None) -> bool:
    """Whether ``token`` adds a level to the expression it continues: an operator, a call or
    subscript trailer, or a string literal right after another."""
    if token.type == tokenize.OP and token.string in _OPENERS:
        return previous is not None and (
            previous.type in _TRAILER_AFTER or previous.string in _CLOSERS
        )
    if token.type == tokenize.STRING:
        return previous is not None and previous.type == tokenize.STRING
    return token.string in _CHAIN_OPERATORS and token.type in (tokenize.OP, tokenize.NAME)


def fstring_depth(literal: str) -> int:
    """How deeply brackets nest inside the replacement fields of an f-string literal."""
    depth = deepest = 0
    position = 0
    while position < len(literal):
        char = literal[position]
        if depth == 0 and char == "{" and literal.startswith("{{", position):
            position += 2
            continue
        if char in _OPENERS and (depth or char == "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif char in _CLOSERS and depth:
            depth -= 1
        position += 1
    return deepest


class _PythonScan:
    """The state of :func:`guard_python`: per open bracket, the chain length and the lambdas
    nested since the bracket opened (``lambda: lambda: ...`` nests without brackets)."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.chains = [0]
        self.lambdas = [0]
        self.indent = 0
        self.elifs: dict[int, int] = {}  # per indentation: ``elif`` clauses in a row (they nest)
        self.previous: tokenize.TokenInfo | None = None

    def depth(self) -> int:
        return len(self.chains) - 1 + self.indent + sum(self.lambdas)

    def _continues_elifs(self, token: tokenize.TokenInfo) -> bool:
        """Count an ``elif`` that starts a statement; reset on other statements there."""
        starts = self.previous is None or self.previous.type in _STATEMENT_STARTS
        if not starts or token.type in _SKIPPED or token.type in _STATEMENT_STARTS:
            return False
        if token.string == "elif":
            self.elifs[self.indent] = self.elifs.get(self.indent, 0) + 1
            self.chains[-1] = self.elifs[self.indent] - 1
            return True
        if token.string != "else":
            self.elifs[self.indent] = 0
        return False

    def feed(self, token: tokenize.TokenInfo) -> None:
        kind, value = token.type, token.string
        line, column = token.start[0], token.start[1] + 1
        limits = self.limits
        in_elif_run = self._continues_elifs(token)  # first: it also resets the run
        if in_elif_run or _chains(token, self.previous):
            self.chains[-1] += 1
            if self.chains[-1] > limits.max_python_chain:
                raise _too_long(limits.max_python_chain, line, column)
        if kind == tokenize.OP and value in _OPENERS:
            self.chains.append(0)
            self.lambdas.append(0)
        elif kind == tokenize.OP and value in _CLOSERS and len(self.chains) > 1:
            self.chains.pop()
            self.lambdas.pop()
        elif kind == tokenize.NAME and value == "lambda":
            self.lambdas[-1] += 1
        elif value in _CHAIN_BREAKS or kind == tokenize.NEWLINE:
            self.chains[-1] = 0
            if value != ":":
                self.lambdas[-1] = 0
        elif kind == tokenize.INDENT:
            self.indent += 1
        elif kind == tokenize.DEDENT:
            self.indent -= 1
        inner = 0
        is_fstring = kind == tokenize.STRING and "f" in value[: value.find(value[-1])].lower()
        if is_fstring and sum(map(value.count, _OPENERS)) > limits.max_depth - self.depth():
            inner = fstring_depth(value)
        if self.depth() + inner > limits.max_depth:
            raise _too_deep(limits.max_depth, line, column)
        if kind not in _SKIPPED:
            self.previous = token


def within_python_limits(text: str, tree: ast.Module, limits: Limits) -> bool:
    """Whether ``text``, which parsed as ``tree``, cannot go over the limits that
    :func:`guard_python` enforces, by bounds that are cheap to take and never too low.

    Brackets close within a statement, so the brackets open at any point are at most the
    openers on the lines of one statement (those in comments and f-strings counted too, and
    where that is over the limit, those in the plain string literals of a simple statement
    left out); the block levels around a statement are at most the characters that indent its
    first line; each term of a chain takes a character of its statement outside string
    literals, or a quote of one, and is at most one of its operator, bracket and quote
    characters or keyword words (:func:`_chain_terms`); an ``elif`` run adds its length to the
    chain of its condition. A text these bounds do not
    clear is scanned by :func:`guard_python`.
    """
    lines = python_lines(text)
    # Running sums over the lines (a statement's share is a difference): what can open a
    # nesting level (brackets and lambdas), and characters.
    parts = (_counts(lines, part) for part in _NESTING_PARTS)
    nesting = _running(map(sum, zip(*parts, strict=True)))
    sizes = _running(map(len, lines))
    elifs = text.count("elif")
    chain = limits.max_python_chain - elifs  # what a statement may chain after an elif run
    if chain < 0:
        return False
    for statement, first, last in _statement_lines(tree):
        if not 0 < first <= last <= len(lines):
            return False
        opening = lines[first - 1]
        indent = len(opening) - len(opening.lstrip(" \t"))
        depth = indent + nesting[last] - nesting[first - 1]
        if depth > limits.max_depth and statement is not None:
            depth -= _string_openers(statement, lines)
        if depth > limits.max_depth:
            return False
        size = full = sizes[last] - sizes[first - 1]
        if size > chain:
            size = _chain_terms("\n".join(lines[first - 1 : last]))
        if size > chain and statement is not None:
            size = min(size, full - _string_text(statement, lines))
        if size > chain:
            return False
    return True


# What every term of a chain has among its characters (:func:`_chains`): an operator or
# ``.``, a bracket opening a trailer, or a string literal's quote; or it is a keyword word.
_CHAIN_CHARACTERS = "+-*/%@<>&|^~.!=([{'\""
_CHAIN_WORDS = re.compile(r"(?<![A-Za-z_])(?:and|or|not|in|is|if|else)(?![A-Za-z0-9_])")


def _chain_terms(source: str) -> int:
    """At most the terms any chain of operators, trailers or literals in ``source`` has."""
    return sum(map(source.count, _CHAIN_CHARACTERS)) + len(_CHAIN_WORDS.findall(source))


def _counts(lines: list[str], part: str) -> Iterator[int]:
    """How often ``part`` occurs on each line."""
    return map(str.count, lines, repeat(part))


def _running(values: Iterable[int]) -> list[int]:
    """``[0, v0, v0 + v1, ...]``."""
    return list(accumulate(values, initial=0))


def _string_text(statement: ast.stmt, lines: list[str]) -> int:
    """The characters of ``statement``'s string literals that are not quotes (at most; the
    quotes stay counted: implicitly joined literals chain one term each)."""
    return sum(
        len(source) - source.count('"') - source.count("'")
        for source in _literals(statement, lines, formatted=True)
    )


def _string_openers(statement: ast.stmt, lines: list[str]) -> int:
    """The brackets and ``lambda`` words inside ``statement``'s plain string literals (and the
    comments between the pieces of an implicit concatenation): the scan counts neither. An
    f-string's are left in, as the scan counts those in its replacement fields."""
    return sum(
        source.count(part)
        for source in _literals(statement, lines, formatted=False)
        for part in _NESTING_PARTS
    )


_NESTING_PARTS = ("(", "[", "{", "lambda")


def _literals(statement: ast.stmt, lines: list[str], formatted: bool) -> Iterator[str]:
    """The source of each outermost string literal of ``statement``; f-strings too where
    ``formatted`` (their pieces have no reliable positions before Python 3.12)."""
    stack: list[ast.AST] = [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.JoinedStr):
            if not formatted:
                continue
        elif not (isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes))):
            stack.extend(ast.iter_child_nodes(node))
            continue
        if node.end_lineno is None or node.end_col_offset is None:
            continue
        yield _source(lines, node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def _source(lines: list[str], line: int, column: int, end_line: int, end_column: int) -> str:
    """The text between two ``ast`` positions (columns in UTF-8 bytes)."""
    if line == end_line:
        return lines[line - 1].encode()[column:end_column].decode(errors="replace")
    first = lines[line - 1].encode()[column:].decode(errors="replace")
    last = lines[end_line - 1].encode()[:end_column].decode(errors="replace")
    return "\n".join([first, *lines[line : end_line - 1], last])


_SIMPLE_STATEMENTS = (
    ast.Assign, ast.Expr, ast.Return, ast.AugAssign, ast.AnnAssign, ast.Raise, ast.Assert,
    ast.Import, ast.ImportFrom, ast.Delete, ast.Pass, ast.Break, ast.Continue, ast.Global,
    ast.Nonlocal,
)  # fmt: skip


def _statement_lines(tree: ast.Module) -> Iterator[tuple[ast.stmt | None, int, int]]:
    """Each statement's own text as ``(the statement if simple, first line, last line)``: a
    simple statement whole, a compound one from its first decorator to the line before its
    body (or its header line), and each ``except`` clause and ``case`` pattern."""
    stack: list[ast.stmt | ast.excepthandler] = list(tree.body)
    while stack:
        node = stack.pop()
        start = node.lineno
        if isinstance(node, _SIMPLE_STATEMENTS):  # most are: no decorators, no body
            yield node, start, node.end_lineno or start
            continue
        decorators = getattr(node, "decorator_list", None)
        if decorators:
            start = min(start, *(d.lineno for d in decorators))
        inner: list[ast.stmt | ast.excepthandler] = [
            child
            for name in ("body", "orelse", "finalbody", "handlers")
            for child in getattr(node, name, None) or []
        ]
        cases = getattr(node, "cases", None) or []
        if not inner and not cases and isinstance(node, ast.stmt):
            yield node, start, node.end_lineno or start
            continue
        for case in cases:
            inner.extend(case.body)
            for part in (case.pattern, case.guard):
                if part is not None:
                    yield None, part.lineno, part.end_lineno or part.lineno
        body_start = min((child.lineno for child in inner), default=start)
        yield None, start, max(start, body_start - 1)
        stack.extend(inner)


def guard_python(text: str, limits: Limits) -> None:
    """Raise :class:`SourceError` where ``text`` nests brackets, blocks, lambdas or f-string
    fields deeper than ``limits.max_depth`` or chains more than ``limits.max_python_chain``
    terms.

    Code the tokenizer rejects is left for the parser to report.
    """
    scan = _PythonScan(limits)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            scan.feed(token)
    except (tokenize.TokenError, SyntaxError):
        return


_JSON_TOKENS = re.compile(r'"(?:[^"\\\n]|\\.)*"|[\[\]{},\n]')
_TOML_TOKENS = re.compile(
    r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{},\n]',
    re.DOTALL,
)


def guard_brackets(text: str, limits: Limits, toml: bool = False) -> None:
    """Raise :class:`SourceError` where JSON (or TOML) ``text`` nests arrays and objects
    deeper than ``limits.max_depth`` or holds more than ``limits.max_nodes`` values.

    Strings (and TOML comments) are skipped; a text with too few brackets and commas to go
    over either limit is not scanned at all.
    """
    openers = text.count("[") + text.count("{")
    if openers <= limits.max_depth and openers + text.count(",") < limits.max_nodes:
        return
    depth = values = 0
    line, line_start = 1, 0
    for match in (_TOML_TOKENS if toml else _JSON_TOKENS).finditer(text):
        token = match.group()
        if token == "\n":
            line, line_start = line + 1, match.end()
        elif token in "[{":
            depth += 1
            values += 1
            if depth > limits.max_depth:
                raise _too_deep(limits.max_depth, line, match.start() - line_start + 1)
        elif token in "]}":
            depth -= 1
        elif token == ",":
            values += 1
        else:
            line += token.count("\n")
            if "\n" in token:
                line_start = match.start() + token.rindex("\n") + 1
        if values > limits.max_nodes:
            column = match.start() - line_start + 1
            raise SourceError(
                f"too many values to check: over {limits.max_nodes} (limit max-nodes)",
                line,
                column,
            )


JINJA_MAX_DEPTH = 40
"""Jinja's parser recurses about a dozen frames per bracket: deeper expressions overflow."""
JINJA_MAX_CHAIN = 200
JINJA_MAX_BLOCKS = 40
"""Compiled templates indent once or twice per block: Python refuses 100 levels."""
_JINJA_TAG = re.compile(r"\{\{(.*?)\}\}|\{%(.*?)%\}", re.DOTALL)
_JINJA_BLOCK = re.compile(r"[-+]?\s*(for|if|macro|call|filter|with|block|generation|set)\b([^=]*)$")
_JINJA_END = re.compile(r"[-+]?\s*end")


def _block_change(statement: str) -> int:
    """+1 for a tag that opens a block (``{% set x %}`` without ``=`` included), -1 for an end."""
    opened = _JINJA_BLOCK.match(statement)
    if opened and (opened.group(1) != "set" or "=" not in statement):
        return 1
    return -1 if _JINJA_END.match(statement) else 0


def guard_jinja(text: str, limits: Limits = DEFAULT_LIMITS) -> None:
    """Raise :class:`SourceError` where an expression in a Jinja tag of ``text`` nests
    brackets or chains operators beyond what Jinja's parser and compiler can recurse through
    (the smaller of ``limits`` and :data:`JINJA_MAX_DEPTH` / :data:`JINJA_MAX_CHAIN`)."""
    bounded = replace(
        limits,
        max_depth=min(limits.max_depth, JINJA_MAX_DEPTH),
        max_python_chain=min(limits.max_python_chain, JINJA_MAX_CHAIN),
    )
    shortest = min(bounded.max_depth, bounded.max_python_chain)
    blocks = 0
    for match in _JINJA_TAG.finditer(text):
        group = 1 if match.group(1) is not None else 2
        inner = match.group(group)
        if group == 2:
            blocks += _block_change(inner)
            if blocks > JINJA_MAX_BLOCKS:
                line = text.count("\n", 0, match.start()) + 1
                column = match.start() - text.rfind("\n", 0, match.start())
                raise SourceError(
                    f"blocks nested too deeply to check: over {JINJA_MAX_BLOCKS} levels",
                    line,
                    column,
                )
        if len(inner) <= shortest:
            continue
        lines = inner.strip("-+").split("\n")
        try:
            guard_python("\n".join(line.lstrip() for line in lines), bounded)
        except SourceError as exc:
            start = match.start(group)
            line = text.count("\n", 0, start) + exc.line
            column = exc.column + (start - text.rfind("\n", 0, start) if exc.line == 1 else 0)
            raise SourceError(exc.message, line, column) from None


def too_long_number(text: str, error: ValueError) -> SourceError:
    """The :class:`SourceError` for a parser's ``ValueError`` on an integer literal longer
    than Python converts (``sys.get_int_max_str_digits()``), at the first such literal."""
    digits = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 4300
    found = re.search(rf"\d{{{digits + 1},}}", text)
    if found is None:
        return SourceError(f"value cannot be read: {error}")
    line = text.count("\n", 0, found.start()) + 1
    column = found.start() - text.rfind("\n", 0, found.start())
    return SourceError(f"number too long to check: over {digits} digits", line, column)
