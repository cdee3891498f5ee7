"""Prompt templates: plain text, Markdown and Jinja/mustache/``str.format`` templates.

A template is parsed into a :class:`TemplateDocument`: its placeholders (with the names,
calls and filters they use), its block and comment tags, a source map from the template to
its static text (placeholders and tags removed) and a source map from the template to the
file that holds it. The template is never rendered: Jinja expressions are parsed by a
sandboxed environment's parser only.

Placeholder syntaxes: Jinja ``{{ expr }}``, mustache ``{{x}}`` ``{{{x}}}`` ``{{#s}}``
(handlebars' ``{{else}}`` is a block tag; and Semantic Kernel's ``{{$x}}``, ``{{time.now}}``;
a placeholder of several words is read by its words, ``{{directory listing}}``),
``str.format`` ``{x}`` ``{x.y!r:>3}`` (``{{`` is an escaped brace, and a brace that does not
open an identifier, as in a JSON example, is text),
``%(x)s``, ``${x}`` (and a JavaScript call, ``${cwd.toPosix()}``, read by its name) and
``$x`` (lower case, ``$@``, the arguments a shell wrapper passes, or an environment variable's
``$APP_CONTEXT``, upper case with an underscore, as ``envsubst`` fills it; not in Markdown
code: ``$HOME``, ``$X`` and ``$var`` in a shell or pattern example are text), a VS Code prompt
file's ``${input:name}`` (``${input:name:hint}``), what the user types when the prompt runs,
and a command file's ``!`git status` ``, the command's output inlined when it runs (not in a
fenced example), read by its command. A field that is part of a pattern or code the prompt
shows (in a URL, an HTTP route or a link, an unquoted attribute of a markup tag as JSX writes
them, glued to other text in Markdown code) is text too, and so is a brace tag of a
``{example}...{/example}`` pair.
A placeholder in a code span of a paragraph that documents the template syntax (one that also
shows a literal, ``{{ true }}``) is an example, not a value. ``${x}``, ``$x`` and ``%(x)s`` on
a line of example code pasted without a fence (a Dockerfile's ``FROM golang:${GO_VERSION}``,
Python's ``format='%(message)s'``) are the code's.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import PurePath
from typing import TypeVar, cast

from jinja2 import nodes
from jinja2.exceptions import TemplateSyntaxError
from jinja2.sandbox import SandboxedEnvironment

from prefixlint import registry
from prefixlint.codes import LINE_ENDINGS
from prefixlint.context import RuleContext, SourceError
from prefixlint.lines import LineIndex
from prefixlint.sourcemap import SourceMap, SourceMapBuilder
from prefixlint.sources import JINJA_SUFFIXES, MARKDOWN_SUFFIXES, MUSTACHE_SUFFIXES
from prefixlint.sources.code_lines import in_unfenced_code
from prefixlint.sources.nesting import guard_jinja
from prefixlint.sources.syntax_examples import example_spans
from prefixlint.tokenizers import Tokenizer
from prefixlint.types import Applicability, Diagnostic, Edit, Fix, Span
from prefixlint.vocabulary import is_request_input

_T = TypeVar("_T")

JINJA = "jinja"
MUSTACHE = "mustache"
FORMAT = "format"

PLACEHOLDER = "placeholder"
BLOCK = "block"
COMMENT = "comment"

_MUSTACHE_MARKERS = re.compile(r"\{\{[#^/]\s*[\w.]|\{\{\{\s*[\w.]|\{\{\s*\$\w")
# (``${{ secrets.TOKEN }}`` is a GitHub Actions expression, shown in a workflow example.)
_JINJA_MARKERS = re.compile(
    r"\{%|(?<!\$)\{\{-?\s*[A-Za-z_][\w.-]*(?:[ \t]+[A-Za-z_][\w.]*)*\s*(?:\||\(|\[|-?\}\})"
)
_JINJA_OPEN = re.compile(r"\{([{%#])")
_JINJA_TAG_BODY = re.compile(
    r"""'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|(\}\}|%\})|[^'"}%]+|.""", re.DOTALL
)
_MAX_TAG_LENGTH = 20_000  # an opener without a close this near is text, not a tag
_JINJA_ENDRAW = re.compile(r"\{%[-+]?\s*endraw\s*[-+]?%\}")
_JINJA_OPENERS = frozenset(
    {"if", "for", "macro", "block", "call", "filter", "with", "raw", "trans", "autoescape"}
)
_JINJA_ALIAS = re.compile(
    r"^(?:for\s+([\w\s,()]+?)\s+in\s+(.+?)(?:\s+if\s+.*|\s+recursive)?|set\s+(\w+)\s*=\s*(.+))$",
    re.DOTALL,
)
_MUSTACHE_TAG = re.compile(
    r"\{\{\{\s*([^{}]{1,200}?)\s*\}\}\}|\{\{([#^/!>&]?)\s*([^{}]{0,200}?)\s*\}\}"
    # a comment of any length (``{{!-- ... --}}`` may hold braces): it renders nothing
    r"|(?P<comment>\{\{!--[\s\S]{0,20000}?--\}\}|\{\{![^{}]{0,20000}\}\})"
)
_MUSTACHE_ELSE = re.compile(r"~?\s*else(?:\s+if\b.*)?~?", re.DOTALL)
_FORMAT_FIELD = re.compile(
    r"\{\{|\}\}|\$\{([A-Za-z_][\w.]*)(?:\([^(){}\n]{0,50}\)(?:\.[A-Za-z_]\w*(?:\([^(){}\n]{0,50}\))?)*)?\}"
    r"|\{([A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[[^\[\]{}]{1,50}\])*)(?:![rsa])?(?::[^{}]{0,50})?\}"
    r"|%\(([A-Za-z_]\w*)\)[-#0 +]*\d*(?:\.\d+)?[sdrifeEgGxXoc]"
    # (a slash command's ``$ARGUMENTS``, a shell wrapper's ``$@``; an environment variable's
    # ``$APP_CONTEXT``, as ``envsubst`` fills it: upper case with an underscore)
    r"|\$\$|(?<![\w$\\])\$([a-z_]\w*|ARGUMENTS\b|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|@(?![\w.-]))"
    # a VS Code prompt file's ``${input:name}`` or ``${input:name:hint}``: asked for each run
    r"|\$\{input:([A-Za-z_][\w-]*)(?::[^{}\n]{0,200})?\}"
    # a command file's ``!`git status` ``: the command's output, inlined when it runs
    r"|(?<![^\s:(>*-])!`([A-Za-z_.~/][^`\n]{0,200})`"
)
_BACKTICK = re.compile(r"(?<!\\)`")
_RUN_BEFORE = re.compile(r"\S*\Z")
_RUN_AFTER = re.compile(r"\S*")
# A URL up to the field (its other fields may hold spaces: ``/{background color}/``), an HTTP
# route (``GET /v1/users/{id}``, or ``"get /users/{id}"`` starting an attribute), a query
# parameter's value (``?text=``, ``&id=``), or a Markdown link's destination (``](<...``).
_URL_BEFORE = re.compile(
    r"(?:(?:\b[A-Za-z][\w+.-]*://|\b[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}/"
    r"|(?:\b(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)|[\"'](?i:get|post|put|patch|delete))"
    r"[ \t]+/[\w.-]+/)"
    r"(?:[^\s'\"<>()`{}]|\{[^{}\n]{0,80}\})*|[?&][\w.-]+=|\]\(<?[^\s()<>]*)\Z"
)
# An unquoted attribute value in a markup tag (``<Input onChange={handle} />``): JSX, not a field.
_ATTRIBUTE_BEFORE = re.compile(r"[\s\"'][A-Za-z_][\w:.-]*=\Z")
_TAG_EDGE = re.compile(r"<(?=[A-Za-z])|&lt;(?=[A-Za-z])|>|&gt;")
_TAG_WINDOW = 600  # characters back to look for the ``<`` of a tag that spans lines
_NAMED_AS_TAG = re.compile(r"[ \t]+(?:tags?|elements?)\b")
# The rest of a file's path after a field that starts it (``/.claude/settings.json``).
_FILE_PATH_AFTER = re.compile(r"(?:/[\w.-]+)*/[\w-]*\.[A-Za-z]\w{0,9}(?![\w/-])")
_GLUED_BEFORE = re.compile(r"[\w.:/-]+\Z")
_GLUED_AFTER = re.compile(r"[\w.:/-]+")
# Words that introduce code as an example of what to write (``For example: `cd {dir}` ``).
_EXAMPLE_BEFORE = re.compile(
    r"(?:\be\.g\.|\bfor\s+(?:example|instance)|\bexamples?(?:\s*\([^()\n]{0,30}\))?|\bsuch\s+as)"
    r"\s*[:,]?[\s*]*\Z",
    re.IGNORECASE,
)
# The closing tag of a brace-delimited markup pair (``{example}...{/example}``).
_BRACE_CLOSER = re.compile(r"\{/([A-Za-z_][\w-]*)\}")
_BRACE_OPENER = re.compile(r"\{([A-Za-z_][\w-]*)(?=[\s}])")
_BRACE_OR_NEWLINE = re.compile(r"[{}\n]")
# What follows the name is an object or a style rule, not a format spec: a space and a word or
# quote (``{key: value}``, not ``{x: >10}``), a word (``{type:self_hosted}``, not ``{x:.2f}``),
# a semicolon or a comma list (``{font:600 13px;color:#111}``, ``{a:1, b:2}``).
_OBJECT_SPEC = re.compile(r":(?:\s+[\w'\"<]|[A-Za-z_]{2,}\w*\}|[^{}]*(?:;|,\s))")
# A fence line, indented or not (prompts indent code inside lists and tag blocks).
_FENCE_LINE = re.compile(r"^[ \t]*(`{3,}|~{3,})(.*)$", re.MULTILINE)
# What a template may hold in braces: fields, escaped braces, and the objects of a JSON or
# placeholder example (``{"a": 1}``, ``{<name>}``). Code that opens other braces (``f() {``,
# ``({ src })``, ``{state && (``) is a program's, not a template's.
_TEMPLATE_BRACES = re.compile(r"\{\{|\}\}|\$?\{[A-Za-z_][\w.\[\]'\"]*(?:![rsa])?(?::[^{}\n]*)?\}")
_CODE_BRACE = re.compile(r"\{(?![ \t]*[\"'<\[])")
_INDENT_LIKE = " \t\ufeff\u200b\u200c\u200d\u2060\u00ad"
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_DELIMITERS = re.compile(r"\{\{|\}\}|\{%|%\}|\{#|#\}|\$\{|\{(?=[A-Za-z_])|\}")
_ESCAPE_BEFORE = re.compile(r"\\[A-Za-z]*$")
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# ``{{user-name}}``: one kebab-case name (as handlebars reads it), not a subtraction.
_KEBAB = re.compile(r"[A-Za-z_]\w*(?:-[A-Za-z_]\w*)+(?:\.[A-Za-z_][\w-]*)*")
# A piece of a handlebars expression: a parenthesis, a string, a ``key=value`` or a name
# (``$input``: a Semantic Kernel variable given to a function, ``{{memory.recall $input}}``).
_HANDLEBARS_PIECE = re.compile(
    r"""[()]|"[^"]*"|'[^']*'|[\w.@-]+=(?:"[^"]*"|'[^']*'|\$?[\w.@-]+)|\$?[\w.@-]+"""
)
_JINJA_CONSTANTS = frozenset({"true", "false", "none", "True", "False", "None"})
_USER_SECTION = re.compile(
    r"^[ \t]*(?:(?:#{1,6}|\*\*|\[)[ \t]*)?(?:user|human|input|user input|user message|"
    r"user prompt|user query)[ \t]*(?:\*\*|\])?[ \t]*:?[ \t]*(?:\*\*)?[ \t]*\r?$"
    r"|^[ \t]*(?:<\|im_start\|>user|<\|user\|>|<user>|<human>)"
    r"|^[ \t]*\{\{[#~]?\s*role\s+[\"']user[\"']\s*~?\}\}",
    re.IGNORECASE | re.MULTILINE,
)

_SYSTEM_SECTION = re.compile(
    r"^[ \t]*(?:(?:#{1,6}|\*\*|\[)[ \t]*)?(?:system|system prompt|system message)"
    r"[ \t]*(?:\*\*|\])?[ \t]*:?[ \t]*(?:\*\*)?[ \t]*\r?$"
    r"|^[ \t]*(?:<\|im_start\|>system|<\|system\|>|<system>)"
    r"|^[ \t]*\{\{[#~]?\s*role\s+[\"']system[\"']\s*~?\}\}",
    re.IGNORECASE | re.MULTILINE,
)

_MAPPING_VIEWS = frozenset({"values", "items", "keys"})

_ENV = SandboxedEnvironment()
_JINJA_INNER = re.compile(r"\{[{%][-+]?\s*(.*?)\s*[-+]?[}%]\}\Z", re.DOTALL)
_MUSTACHE_INNER = re.compile(r"\{\{[#^&]?~?\s*(.*?)\s*~?\}\}\Z", re.DOTALL)
_FOR = re.compile(r"for\s+[\w\s,()]+?\s+in\s+(.+?)(?:\s+if\s+.*|\s+recursive)?\Z", re.DOTALL)
_SET = re.compile(r"set\s+\w+\s*=\s*(.+)\Z", re.DOTALL)


@dataclass(frozen=True)
class Placeholder:
    """A place where a value is substituted, at ``text[start:end]`` of its template."""

    start: int
    end: int
    syntax: str
    expression: str
    paths: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    filters: tuple[str, ...] = ()
    command: str = ""
    """The shell command whose output it inlines (a command file's ``!`git status` ``)."""

    @property
    def name(self) -> str:
        """The main dotted name (or callee) it substitutes, for messages."""
        return (self.paths or self.calls or (self.expression,))[0]


@dataclass(frozen=True)
class Tag:
    """A Jinja block or comment tag, or a mustache section/partial/comment tag."""

    start: int
    end: int
    kind: str
    word: str


@dataclass(frozen=True)
class ParsedTemplate:
    syntax: str
    placeholders: tuple[Placeholder, ...]
    tags: tuple[Tag, ...]
    static: SourceMap


@dataclass
class TemplateDocument:
    """One template, where it sits in its file, and what rules need to know about it.

    ``text`` is the template (the whole file for a template file, the decoded string for a
    value in a YAML/JSON/TOML prompt file); ``host`` maps ``text`` offsets to file offsets.
    ``prefix_end`` is where the part of the prompt that should stay stable ends: the end of
    the template, a user-section marker, or 0 for a value that is itself a user turn.
    ``encode`` turns replacement text into its form in the file (``None``: it cannot be
    written there safely); ``verify(changes, file_edits)``, where set, confirms that the
    edited file still holds the edited template. In an ``indentation_sensitive`` template
    (a YAML block), no fix may start a line with whitespace: together with another fix on
    an earlier line, it could change the block's indentation. ``stable_chain`` lists, in
    order, the values of a prompt file that are stable throughout (its system prompt, tools
    and earlier messages, this one among them): one stable part, rendered one after another.
    ``framework_follows`` says a framework renders its own fixed text after the stable part
    (a crewAI agent's tools and answer format after its role, goal and backstory).
    """

    path: str
    file_text: str
    text: str
    parsed: ParsedTemplate
    host: SourceMap
    prefix_end: int
    encode: Callable[[str], str | None] = lambda replacement: replacement
    verify: Callable[[list[tuple[int, int, str]], list[Edit]], bool] | None = None
    indentation_sensitive: bool = False
    file_lines: LineIndex | None = None
    label: str = ""
    stable_chain: tuple[TemplateDocument, ...] = field(default=(), repr=False, compare=False)
    framework_follows: bool = False
    _token_spans: tuple[list[int], list[int]] | None = field(default=None, init=False, repr=False)
    memo: dict[str, object] = field(default_factory=dict, init=False, repr=False)
    """Results that several rules share, computed once per document (by the first to ask)."""

    def shared(self, key: str, compute: Callable[[], _T]) -> _T:
        """``compute()``'s result, computed once per document under ``key`` (the one function
        that computes it is the only one to use ``key``)."""
        if key not in self.memo:
            self.memo[key] = compute()
        return cast("_T", self.memo[key])

    @property
    def placeholders(self) -> tuple[Placeholder, ...]:
        return self.parsed.placeholders

    @property
    def static_text(self) -> str:
        """The template without its placeholders and tags."""
        return self.parsed.static.rendered

    @cached_property
    def lines(self) -> LineIndex:
        return LineIndex(self.text)

    @cached_property
    def _file_index(self) -> LineIndex:
        return self.file_lines or LineIndex(self.file_text)

    def span(self, start: int, end: int) -> Span:
        """The file span of ``text[start:end]``."""
        source_start, source_end = self.host.source_range(start, max(end, start))
        line, column = self._file_index.position(source_start)
        end_line, end_column = self._file_index.position(max(source_end, source_start))
        return Span(self.path, line, column, end_line, end_column)

    def fix(
        self, changes: Iterable[tuple[int, int, str]], applicability: Applicability, message: str
    ) -> Fix | None:
        """A fix of the file that replaces ``text[start:end]`` for each change.

        ``None`` when a replacement cannot be written in the file's syntax, or when ``verify``
        finds that the edited file would not hold the edited template.
        """
        changes = sorted(changes)
        if not all(_seams_intact(self.text, *change) for change in _touching_merged(changes)):
            return None
        if self.indentation_sensitive and any(_indents(self.text, *c) for c in changes):
            return None
        edits = []
        for start, end, replacement in changes:
            encoded = self.encode(replacement)
            if encoded is None:
                return None
            # Both ends map to where a rendered character starts, so an edit that ends at a
            # line start also takes that line's indentation in a YAML block, as joining must.
            edits.append(Edit(self.host.to_source(start), self.host.to_source(end), encoded))
        if self.verify is not None and not self.verify(changes, edits):
            return None
        return Fix(tuple(edits), applicability, message)

    def line_bounds(self, offset: int) -> tuple[int, int]:
        """Start of the template line holding ``offset``, and the end after its newline."""
        start = self.text.rfind("\n", 0, offset) + 1
        newline = self.text.find("\n", offset)
        return start, len(self.text) if newline == -1 else newline + 1

    def block_depth(self, offset: int) -> int:
        """How many blocks (``{% if %}``, ``{{#section}}``, ...) are open at ``offset``."""
        starts, depths = self._depth_index
        index = bisect.bisect_right(starts, offset) - 1
        return depths[index] if index >= 0 else 0

    @cached_property
    def _depth_index(self) -> tuple[list[int], list[int]]:
        starts, depths, depth = [], [], 0
        for tag in self.parsed.tags:
            if tag.kind != BLOCK:
                continue
            if tag.word.startswith(("end", "/")):
                depth = max(depth - 1, 0)
                starts.append(tag.start)
            elif tag.word in _JINJA_OPENERS or tag.word in {"#", "^"}:
                starts.append(tag.end)
                depth += 1
            else:
                continue
            depths.append(depth)
        return starts, depths

    @cached_property
    def iterations(self) -> list[tuple[int, int, str, bool]]:
        """``(start, end, expression, is_loop)`` of each loop, ``set`` tag and placeholder,
        in order."""
        found = []
        mustache = self.parsed.syntax != JINJA
        for tag in self.parsed.tags:
            text = self.text[tag.start : tag.end]
            if tag.kind != BLOCK:
                continue
            if mustache:
                inner = _MUSTACHE_INNER.match(text)
                if tag.word == "#" and inner:
                    found.append((tag.start, tag.end, inner.group(1), True))
                continue
            inner = _JINJA_INNER.match(text)
            body = inner.group(1) if inner else ""
            statement = _FOR.match(body) or _SET.match(body)
            if statement:
                found.append((tag.start, tag.end, statement.group(1), body.startswith("for")))
        found += ((p.start, p.end, p.expression, False) for p in self.placeholders)
        return sorted(found)

    def iterated(self, expression: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The names an expression of :attr:`iterations` iterates, and the filters, helpers
        and calls it applies."""
        if self.parsed.syntax == JINJA:
            paths, calls, filters = analyse_expression(expression)
            return paths, (*filters, *calls)
        helpers, arguments = handlebars_call(expression)
        if helpers:
            return arguments, helpers[1:] if helpers[0] in ("each", "with") else helpers
        words = expression.split()
        if len(words) == 2 and words[0] == "each":
            return (words[1],), ()
        return (words[0],) if len(words) == 1 and _DOTTED.fullmatch(words[0]) else (), ()

    def tags_between(self, start: int, end: int) -> list[Tag]:
        return [t for t in self.parsed.tags if start <= t.start < end]

    def placeholders_between(self, start: int, end: int) -> list[Placeholder]:
        return [p for p in self.placeholders if start <= p.start < end]

    def static_between(self, start: int, end: int) -> str:
        """Static text of ``text[start:end]``."""
        static = self.parsed.static
        return static.rendered[static.to_rendered(start) : static.to_rendered(end)]

    def static_tokens(self, start: int, end: int, ctx: RuleContext) -> int:
        """Tokens of static text in ``text[start:end]`` (the template is tokenized once)."""
        if self._token_spans is None:
            ends = token_ends(ctx.tokenizer, self.static_text)
            self._token_spans = ([0, *ends[:-1]], ends)
        starts, ends = self._token_spans
        static = self.parsed.static
        low, high = static.to_rendered(start), static.to_rendered(end)
        if high <= low:
            return 0
        return max(bisect.bisect_right(ends, high) - bisect.bisect_left(starts, low), 0)

    def chain_tokens(self, ctx: RuleContext) -> tuple[int, int]:
        """Static tokens of the values of ``stable_chain`` rendered before this one, and after."""
        index = next((i for i, d in enumerate(self.stable_chain) if d is self), 0)
        counts = [d.static_tokens(0, len(d.text), ctx) for d in self.stable_chain]
        return sum(counts[:index]), sum(counts[index + 1 :])

    def first_input(self, extra_input_names: Iterable[str] = ()) -> Placeholder | None:
        """The first placeholder that substitutes per-request input (a question, a task)."""
        names = tuple(extra_input_names)
        for placeholder in self.placeholders:
            if any(is_request_input(p, names) for p in placeholder.paths):
                return placeholder
        return None


def tokens(count: int, kind: str = "") -> str:
    """``count`` with the word token, singular for one (``1 token``, ``5 static tokens``)."""
    noun = "token" if count == 1 else "tokens"
    return f"{count} {kind} {noun}" if kind else f"{count} {noun}"


def token_ends(tokenizer: Tokenizer, text: str) -> list[int]:
    """Character offset where each token of ``text`` ends, without a per-character loop."""
    if not text:
        return []
    token_bytes = getattr(tokenizer, "token_bytes", None)
    if token_bytes is None:
        return [end for _, end in tokenizer.offsets(text)]
    ends, total = [], 0
    for piece in token_bytes(tokenizer.encode(text)):
        total += len(piece)
        ends.append(total)
    if text.isascii():
        return ends
    # Byte offsets to character offsets: subtract the extra bytes of the characters before; a
    # token that ends inside a character ends where that character starts.
    byte_starts, byte_ends, char_starts, extra_before, extra = [], [], [], [], 0
    for char in _NON_ASCII.finditer(text):
        byte_starts.append(char.start() + extra)
        extra += len(char.group(0).encode("utf-8")) - 1
        byte_ends.append(char.end() + extra)
        char_starts.append(char.start())
        extra_before.append(extra)
    result = []
    for end in ends:
        index = bisect.bisect_right(byte_ends, end) - 1
        if index + 1 < len(byte_starts) and byte_starts[index + 1] < end:
            result.append(char_starts[index + 1])
        else:
            result.append(end - (extra_before[index] if index >= 0 else 0))
    return result


def _indents(text: str, start: int, end: int, replacement: str) -> bool:
    """Whether a change starts a line with whitespace that did not start it before (after
    only whitespace and invisible characters, which other fixes may remove)."""
    line_start = text.rfind("\n", 0, start) + 1
    at_line_start = not text[line_start:start].strip(_INDENT_LIKE)
    was_indented = text[start:end].startswith((" ", "\t"))
    if at_line_start and replacement.startswith((" ", "\t")) and not was_indented:
        return True
    return re.search(r"\n[ \t]", replacement) is not None


def _touching_merged(changes: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Sorted ``changes`` with each run of changes that touch (one ends where the next
    starts) as one change: two invisible characters removed between ``{`` and ``#`` open a
    comment together, though neither does alone."""
    merged: list[tuple[int, int, str]] = []
    for start, end, replacement in changes:
        if merged and merged[-1][1] == start:
            first_start, _, first_replacement = merged[-1]
            merged[-1] = (first_start, end, first_replacement + replacement)
        else:
            merged.append((start, end, replacement))
    return merged


def _seams_intact(text: str, start: int, end: int, replacement: str) -> bool:
    """Whether replacing ``text[start:end]`` keeps the tag delimiters next to it as they are
    (removing an invisible character between ``{`` and ``#`` would open a comment)."""
    left, right = text[max(start - 2, 0) : start], text[end : end + 2]
    return _edge_delimiters(left, text[start:end], right) == _edge_delimiters(
        left, replacement, right
    )


def _edge_delimiters(left: str, middle: str, right: str) -> list[tuple[str, int, str]]:
    """Delimiters in ``left + middle + right`` that are not inside ``middle``, by place."""
    found = []
    middle_end = len(left) + len(middle)
    for match in _DELIMITERS.finditer(left + middle + right):
        if match.end() <= len(left):
            found.append(("left", match.start(), match.group(0)))
        elif match.start() >= middle_end:
            found.append(("right", match.start() - middle_end, match.group(0)))
        elif match.start() < len(left) or match.end() > middle_end:
            found.append(("seam", 0, match.group(0)))
    return found


def apply_changes(text: str, changes: Iterable[tuple[int, int, str]]) -> str:
    """``text`` with non-overlapping ``(start, end, replacement)`` changes made."""
    pieces, cursor = [], 0
    for start, end, replacement in sorted(changes):
        pieces += [text[cursor:start], replacement]
        cursor = end
    return "".join(pieces) + text[cursor:]


def syntax_for(path: str, text: str) -> str:
    """The placeholder syntax of a template: by suffix, else by what the text contains."""
    suffix = PurePath(path).suffix.lower()
    if suffix in JINJA_SUFFIXES:
        return JINJA
    if suffix in MUSTACHE_SUFFIXES or _MUSTACHE_MARKERS.search(text):
        return MUSTACHE
    if _JINJA_MARKERS.search(text):
        return JINJA
    return FORMAT


def parse_template(text: str, syntax: str, *, strict: bool = False) -> ParsedTemplate:
    """Split ``text`` into static text, placeholders and tags.

    With ``strict`` (a Jinja file), Jinja syntax errors raise :class:`SourceError`; otherwise
    a template that Jinja cannot parse as a whole is still scanned tag by tag.
    """
    if syntax == JINJA:
        if strict:
            _validate_jinja(text)
        return _scan_jinja(text, strict=strict)
    if syntax == MUSTACHE:
        return _scan_mustache(text)
    return _scan_format(text)


def _validate_jinja(text: str) -> None:
    guard_jinja(text)
    try:
        _ENV.parse(text)
    except TemplateSyntaxError as exc:
        raise SourceError(f"Jinja syntax error: {exc.message}", exc.lineno or 1) from None


def _scan_jinja(text: str, *, strict: bool) -> ParsedTemplate:
    builder = SourceMapBuilder(text)
    placeholders: list[Placeholder] = []
    tags: list[Tag] = []
    aliases: dict[str, tuple[str, ...]] = {}
    examples = [] if strict else example_spans(text)
    position = 0
    while (match := _JINJA_OPEN.search(text, position)) is not None:
        start, opener = match.start(), match.group(1)
        end = _jinja_tag_end(text, match.end(), opener)
        if end is None:
            if strict:
                line = text.count("\n", 0, start) + 1
                raise SourceError("Jinja syntax error: unclosed tag", line)
            position = match.end()
            continue
        if opener == "{" and _inside(examples, start):
            position = end
            continue  # ``{{ user.name }}`` shown as an example of the syntax: text
        builder.literal(start)
        inner = text[match.end() : end - 2].strip("-+ \t\r\n")
        if opener == "#":
            builder.other(COMMENT, end)
            tags.append(Tag(start, end, COMMENT, "#"))
        elif opener == "{":
            builder.other(PLACEHOLDER, end)
            placeholders.append(_jinja_placeholder(start, end, inner, aliases))
        else:
            word = inner.split(None, 1)[0] if inner.split() else ""
            builder.other(BLOCK, end)
            tags.append(Tag(start, end, BLOCK, word))
            _record_alias(inner, aliases)
            if word == "raw" and (close := _JINJA_ENDRAW.search(text, end)):
                builder.literal(close.start())
                builder.other(BLOCK, close.end())
                tags.append(Tag(close.start(), close.end(), BLOCK, "endraw"))
                end = close.end()
        position = end
    builder.literal(len(text))
    return ParsedTemplate(JINJA, tuple(placeholders), tuple(tags), builder.build())


def _jinja_tag_end(text: str, position: int, opener: str) -> int | None:
    """Offset just past the tag that opened before ``position`` (strings may hold ``}}``)."""
    if opener == "#":
        close = text.find("#}", position)
        return None if close == -1 else close + 2
    wanted = "}}" if opener == "{" else "%}"
    limit = min(len(text), position + _MAX_TAG_LENGTH)
    for token in _JINJA_TAG_BODY.finditer(text, position, limit):
        if token.group(1) == wanted:
            return token.end()
        if "{{" in token.group(0) or "{%" in token.group(0):
            return None  # a new tag opens first: the opener was text
    return None


def _record_alias(inner: str, aliases: dict[str, tuple[str, ...]]) -> None:
    """Remember what ``{% for x in expr %}`` / ``{% set x = expr %}`` bind, by variable."""
    match = _JINJA_ALIAS.match(inner)
    if not match:
        return
    targets, expression = (
        (match.group(1), match.group(2))
        if match.group(1)
        else (
            match.group(3),
            match.group(4),
        )
    )
    paths, calls, _ = analyse_expression(expression)
    # ``for a in agents.values()``: ``a`` is one of ``agents``, not of a method's result.
    calls = tuple(c for c in calls if c.rpartition(".")[2] not in _MAPPING_VIEWS)
    for target in re.findall(r"\w+", targets or ""):
        aliases[target] = tuple(dict.fromkeys(paths + calls))


def _jinja_placeholder(
    start: int, end: int, inner: str, aliases: dict[str, tuple[str, ...]]
) -> Placeholder:
    paths, calls, filters = analyse_expression(inner)
    resolved: list[str] = []
    for path in paths:
        root, _, rest = path.partition(".")
        if root not in aliases:
            resolved.append(path)
            continue
        resolved.extend(f"{alias}.{rest}" if rest else alias for alias in aliases[root])
    return Placeholder(start, end, JINJA, inner, tuple(resolved), calls, filters)


@lru_cache(maxsize=4096)
def analyse_expression(
    expression: str,
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Dotted names, callees and filters used by a Jinja expression (parsed, never run)."""
    plain = expression.strip()
    if _DOTTED.fullmatch(plain) and plain not in _JINJA_CONSTANTS:
        return (plain,), (), ()  # what parsing finds, without its cost (files of many names)
    if _KEBAB.fullmatch(plain):
        return (plain,), (), ()
    try:
        tree = _ENV.parse("{{ " + expression + " }}")
    except (TemplateSyntaxError, RecursionError):
        return _words_path(expression), (), ()
    paths: list[str] = []
    calls: list[str] = []
    filters: list[str] = []

    def visit(node: nodes.Node) -> None:
        if isinstance(node, nodes.Filter):
            filters.append(node.name)
        elif isinstance(node, nodes.Call):
            callee = _dotted(node.node)
            if callee:
                calls.append(callee)
                owner = callee.rpartition(".")[0]
                if owner:
                    paths.append(owner)
                for child in (*node.args, *node.kwargs):
                    visit(child)
                return
        elif isinstance(node, nodes.Name | nodes.Getattr | nodes.Getitem):
            dotted = _dotted(node)
            if dotted:
                paths.append(dotted)
                return
        for child in node.iter_child_nodes():
            visit(child)

    visit(tree)
    return tuple(paths), tuple(calls), tuple(filters)


def _words_path(expression: str) -> tuple[str, ...]:
    """An expression that is not Jinja (``directory listing``) read as one name of its words."""
    words = _DOTTED.findall(expression)
    return ("_".join(words),) if words else ()


def _dotted(node: nodes.Node) -> str | None:
    if isinstance(node, nodes.Name):
        return node.name
    if isinstance(node, nodes.Getattr):
        base = _dotted(node.node)
        return f"{base}.{node.attr}" if base else None
    if isinstance(node, nodes.Getitem):
        base = _dotted(node.node)
        if base and isinstance(node.arg, nodes.Const):
            key = node.arg.value
            return f"{base}.{key}" if isinstance(key, str) else base
        return base
    return None


def _scan_mustache(text: str) -> ParsedTemplate:
    builder = SourceMapBuilder(text)
    placeholders: list[Placeholder] = []
    tags: list[Tag] = []
    contexts: list[str | None] = []  # the section names a bare name is looked up in
    examples = example_spans(text)
    for match in _MUSTACHE_TAG.finditer(text):
        if match.group("comment"):
            builder.literal(match.start())
            builder.other(COMMENT, match.end())
            tags.append(Tag(match.start(), match.end(), COMMENT, "!"))
            continue
        sigil = match.group(2) or ""
        if sigil in ("", "&") and _inside(examples, match.start()):
            continue  # ``{{ user.name }}`` shown as an example of the syntax: text
        builder.literal(match.start())
        name = match.group(1) if match.group(1) is not None else match.group(3)
        if sigil == "" and _MUSTACHE_ELSE.fullmatch(name):
            builder.other(BLOCK, match.end())  # ``{{else}}`` of a handlebars section
            tags.append(Tag(match.start(), match.end(), BLOCK, "else"))
        elif sigil in ("", "&"):
            builder.other(PLACEHOLDER, match.end())
            paths, calls = ((name,), ()) if _DOTTED.fullmatch(name) else _mustache_expression(name)
            paths = _in_contexts(paths, [c for c in contexts if c])
            placeholders.append(
                Placeholder(match.start(), match.end(), MUSTACHE, name, paths, calls)
            )
        else:
            kind = COMMENT if sigil == "!" else BLOCK
            builder.other(kind, match.end())
            tags.append(Tag(match.start(), match.end(), kind, sigil))
            if sigil in ("#", "^"):
                contexts.append(_section_context(name) if sigil == "#" else None)
            elif sigil == "/" and contexts:
                contexts.pop()
    builder.literal(len(text))
    return ParsedTemplate(MUSTACHE, tuple(placeholders), tuple(tags), builder.build())


def _mustache_expression(expression: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Dotted names and callees of a mustache tag's expression: a Jinja-like one as Jinja
    reads it; a handlebars helper call (``formatDate now "YYYY"``, ``each (shuffle tips)``)
    also names its helpers as callees and its arguments as names."""
    paths, calls, _ = analyse_expression(expression)
    helpers, arguments = handlebars_call(expression)
    return tuple(dict.fromkeys((*paths, *arguments))), tuple(dict.fromkeys((*calls, *helpers)))


def handlebars_call(expression: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The helpers and the name arguments of a handlebars call with arguments (``formatDate
    now "YYYY"``: ``formatDate``; ``now``), subexpressions included (``each (shuffle tips)``:
    ``each``, ``shuffle``; ``tips``); ``((), ())`` for anything else."""
    pieces = _HANDLEBARS_PIECE.findall(expression.strip("~ \t\r\n"))
    if "".join(pieces).replace(" ", "") != re.sub(r"\s", "", expression.strip("~ \t\r\n")):
        return (), ()
    helpers: list[str] = []
    arguments: list[str] = []
    opens = True
    for piece in pieces:
        if piece == "(":
            opens = True
            continue
        if piece == ")" or piece[0] in "\"'" or piece[0].isdigit():
            opens = False
            continue
        value = (piece.partition("=")[2] or piece).removeprefix("$")
        if not _DOTTED.fullmatch(value) or value in _JINJA_CONSTANTS:
            opens = False
            continue
        (helpers if opens else arguments).append(value)
        opens = False
    if len(helpers) + len(arguments) < 2:
        return (), ()
    return tuple(helpers), tuple(arguments)


def _section_context(name: str) -> str | None:
    """The name a section makes the context: ``{{#user}}``, ``{{#each users}}``,
    ``{{#with user}}``; a condition (``{{#if x}}``) keeps the context it is in."""
    words = name.split()
    if not words or words[0] in ("if", "unless"):
        return None
    found = _DOTTED.match(words[1] if words[0] in ("each", "with") and len(words) > 1 else words[0])
    return found.group(0) if found else None


def _in_contexts(paths: tuple[str, ...], contexts: list[str]) -> tuple[str, ...]:
    """``paths`` read inside mustache sections: ``{{name}}`` in ``{{#user}}`` is also
    ``user.name``, ``{{this.email}}`` in ``{{#each users}}`` also ``users.email``."""
    if not contexts:
        return paths
    scope = ".".join(contexts)
    qualified = []
    for path in paths:
        inner = path.removeprefix("this").lstrip(".")
        qualified.append(f"{scope}.{inner}" if inner else scope)
    return tuple(dict.fromkeys((*paths, *qualified)))


def _scan_format(text: str) -> ParsedTemplate:
    builder = SourceMapBuilder(text)
    placeholders: list[Placeholder] = []
    fences = fence_blocks(text) if "```" in text or "~~~" in text else []
    programs = {block for block in fences if _own_braces(text[block[0] : block[1]])}
    brace_tags = _brace_tags(text)
    fields: list[tuple[re.Match[str], str]] = []
    shown: set[tuple[str, str, str] | str] = set()  # the patterns the prompt shows, and fields
    for match in _FORMAT_FIELD.finditer(text):
        if match.group(5) or match.group(6):
            if match.group(5) or fence_at(fences, match.start()) is None:
                fields.append((match, match.group(5) or match.group(6)))
            continue  # (a command shown in a fenced example does not run)
        name = match.group(1) or match.group(2) or match.group(3) or match.group(4)
        if name is None or _ESCAPE_BEFORE.search(text, max(match.start() - 30, 0), match.start()):
            continue  # an escaped brace, or a LaTeX/regex argument like ``\p{L}``
        if _inside(brace_tags, match.start()):
            continue  # ``{user}`` of ``{user}...{/user}``: a markup tag, not a field
        if (match.group(4) or match.group(1)) and _in_code(text, match.start(), fences):
            continue  # ``$HOME`` or ``${name}`` in a shell or JavaScript example is text
        if not match.group(2) and in_unfenced_code(text, match.start()):
            continue  # ``${GO_VERSION}`` of a Dockerfile, ``%(message)s`` of Python, unfenced
        braced = match.group(1) or match.group(2)
        if braced and _described(text, match.start(), match.end(), fences, programs):
            if pattern := _glued_pattern(text, match.start(), match.end()):
                shown.update((pattern, match.group(0)))
            continue  # ``/v1/sessions/{session_id}``: a pattern the prompt describes
        if match.group(2) and _OBJECT_SPEC.match(match.group(0), len(match.group(2)) + 1):
            continue  # ``{previous_message_id: null}``: an object literal, not a field
        fields.append((match, name))
    for match, name in fields:
        if _glued_pattern(text, match.start(), match.end()) in shown:
            continue  # ``c-{ramp}`` in prose, where the code shows ``class="c-{ramp}"``
        if match.group(0) in shown and _in_code(text, match.start(), fences):
            continue  # ```{workspace}``` naming a part of the URL pattern it is in
        builder.literal(match.start())
        builder.other(PLACEHOLDER, match.end())
        if match.group(5):  # what the user types when the prompt runs: its input
            placeholders.append(Placeholder(match.start(), match.end(), FORMAT, name, ("input",)))
            continue
        if match.group(6):
            placeholders.append(Placeholder(match.start(), match.end(), FORMAT, name, command=name))
            continue
        if name == "@":  # the arguments a shell wrapper passes on
            name = "arguments"
        dotted = re.sub(r"\[['\"]?([^\]'\"]*)['\"]?\]", r".\1", name)
        placeholders.append(Placeholder(match.start(), match.end(), FORMAT, name, (dotted,)))
    builder.literal(len(text))
    return ParsedTemplate(FORMAT, tuple(placeholders), (), builder.build())


def _glued_pattern(text: str, start: int, end: int) -> tuple[str, str, str] | None:
    """The field ``text[start:end]`` with the word characters glued to it on its line
    (``("c-", "{ramp}", "")``), or ``None`` when nothing is glued to it. A field the prompt
    shows as a pattern in code is the same pattern where its prose names it again."""
    before = _GLUED_BEFORE.search(text, max(start - 40, 0), start)
    after = _GLUED_AFTER.match(text, end, end + 40)
    left, right = before.group(0) if before else "", after.group(0) if after else ""
    return (left, text[start:end], right) if left or right else None


def _brace_tags(text: str) -> list[tuple[int, int]]:
    """Where the brace tags of ``{name ...}...{/name}`` pairs are (their closers and the
    openers before them, each to its matching brace), sorted and without overlaps."""
    if "{/" not in text:
        return []
    last_closer: dict[str, int] = {}
    spans = []
    for closer in _BRACE_CLOSER.finditer(text):
        spans.append(closer.span())
        last_closer[closer.group(1)] = closer.start()
    matching = _matching_braces(text)
    for opener in _BRACE_OPENER.finditer(text):
        closes = last_closer.get(opener.group(1))
        end = matching.get(opener.start())
        if closes is not None and opener.start() < closes and end is not None:
            spans.append((opener.start(), end))
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _matching_braces(text: str) -> dict[int, int]:
    """For each ``{`` closed on its line, the offset just past its ``}`` (one pass)."""
    matching: dict[int, int] = {}
    open_at: list[int] = []
    for brace in _BRACE_OR_NEWLINE.finditer(text):
        char = brace.group(0)
        if char == "\n":
            open_at.clear()
        elif char == "{":
            open_at.append(brace.start())
        elif open_at:
            matching[open_at.pop()] = brace.end()
    return matching


def _inside(spans: list[tuple[int, int]], offset: int) -> bool:
    """Whether ``offset`` is inside one of the sorted, disjoint ``spans``."""
    index = bisect.bisect_right(spans, offset, key=lambda span: span[0]) - 1
    return index >= 0 and spans[index][0] <= offset < spans[index][1]


def _in_markup_attribute(text: str, start: int) -> bool:
    """Whether the field at ``start`` is an unquoted attribute value inside a markup tag,
    ``<Input value={text}`` (the tag may span lines): JSX or a template language's own
    expression, shown as code."""
    if not _ATTRIBUTE_BEFORE.search(text, max(start - 80, 0), start):
        return False
    edges = list(_TAG_EDGE.finditer(text, max(start - _TAG_WINDOW, 0), start))
    return bool(edges) and edges[-1].group(0) in ("<", "&lt;")


def fence_blocks(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each fenced code block, from its opening fence line to the end of
    its closing one (or of the text). A fence closes at a bare fence line of its character,
    at least as long, so a shorter or labelled fence inside it (```` ```` ``` ````) is code."""
    blocks, opener = [], None
    for line in _FENCE_LINE.finditer(text):
        run = line.group(1)
        if opener is None:
            opener = (line.start(), run)
        elif run[0] == opener[1][0] and len(run) >= len(opener[1]) and not line.group(2).strip():
            blocks.append((opener[0], line.end()))
            opener = None
    if opener is not None:
        blocks.append((opener[0], len(text)))
    return blocks


def fence_at(fences: list[tuple[int, int]], offset: int) -> tuple[int, int] | None:
    """The fenced block (of ``fence_blocks``) holding ``offset``, if any."""
    index = bisect.bisect_right(fences, offset, key=lambda block: block[0]) - 1
    if index >= 0 and offset < fences[index][1]:
        return fences[index]
    return None


def _in_code(text: str, offset: int, fences: list[tuple[int, int]]) -> bool:
    """Whether ``offset`` is inside Markdown code: a fenced block, a backtick span, or text
    glued between backticks on both sides (code that nests backticks, ``updateTag(`user-$id`)``
    written in a span, pairs the backticks the wrong way)."""
    if fence_at(fences, offset) is not None or _code_span(text, offset) is not None:
        return True
    before = _RUN_BEFORE.search(text, max(offset - 200, 0), offset)
    after = _RUN_AFTER.match(text, offset, offset + 200)
    return bool(
        before and after and _BACKTICK.search(before.group(0)) and _BACKTICK.search(after.group(0))
    )


def _own_braces(code: str) -> bool:
    """Whether ``code`` opens braces that are neither template fields nor a JSON example
    (``if (x) {``): a program, whose fields are its own."""
    return _CODE_BRACE.search(_TEMPLATE_BRACES.sub("", code)) is not None


def _code_span(text: str, offset: int) -> tuple[int, int] | None:
    """The inline code span (``text[start:end]`` between its backticks) holding ``offset``, if
    any; an escaped backtick (``\\```) opens no span."""
    line_start = text.rfind("\n", 0, offset) + 1
    line_end = text.find("\n", offset)
    line_end = len(text) if line_end == -1 else line_end
    before = [m.end() for m in _BACKTICK.finditer(text, line_start, offset)]
    if len(before) % 2 == 0:
        return None
    after = _BACKTICK.search(text, offset, line_end)
    return (before[-1], after.start()) if after else None


def _described(
    text: str,
    start: int,
    end: int,
    fences: list[tuple[int, int]],
    programs: set[tuple[int, int]],
) -> bool:
    """Whether the field ``text[start:end]`` is part of a pattern or code the prompt shows
    rather than a value it is given: inside a URL (a query value, a link's destination), an
    unquoted attribute of a markup tag (``<Input value={text}``), a tag's name (``{context}
    tags``), the start of a file's path (``{home}/.config/app.json``), or glued to other text in
    Markdown code (``devin/{timestamp}-{name}``, ``updated_at='{updated_at}'`` in a span,
    ``f"id-{i}"`` in a fenced block), anywhere in a fenced block of a program (one of
    ``programs``) or in code given as an example (after ``For example:``). A field that is
    the span, or a word of its own in the code (```cd {cwd}```, ``{code}`` alone on a fenced
    line), is still substituted."""
    if _URL_BEFORE.search(text, max(start - 300, 0), start) or _in_markup_attribute(text, start):
        return True
    if _NAMED_AS_TAG.match(text, end):
        return True  # ``wrapped in {document_context} tags``: the name of a tag, not a value
    if _FILE_PATH_AFTER.match(text, end):
        return True  # ``{working_directory}/.claude/settings.json``: where a file lives
    block = fence_at(fences, start)
    if block is not None:
        if block in programs:
            return True  # ``{state.message}`` in a block of JSX: the code's own braces
        line_start = text.rfind("\n", 0, start) + 1
        line_end = text.find("\n", end)
        span = (line_start, len(text) if line_end == -1 else line_end)
        code_start = block[0]
    else:
        code_span = _code_span(text, start)
        if code_span is None:
            return False
        span, code_start = code_span, code_span[0] - 1
    if _EXAMPLE_BEFORE.search(text, max(code_start - 80, 0), code_start):
        return True  # ``For example: `cd {project_dir} && make` ``: code to write, not filled
    glued_before = start > span[0] and not text[start - 1].isspace()
    glued_after = end < span[1] and not text[end].isspace()
    return glued_before or glued_after


def user_section_start(text: str) -> int:
    """Where a plain template's user section begins (``User:``, ``# INPUT``), else its end.

    A user section that a system section follows (a request written down user message first,
    ``# User Message`` ... ``# System Prompt``) does not end the system text after it: the
    first user section after the last system section counts."""
    systems = list(_SYSTEM_SECTION.finditer(text))
    match = _USER_SECTION.search(text, systems[-1].end() if systems else 0)
    return match.start() if match else len(text)


# YAML front matter at the top of a file (Prompty's and Dotprompt's settings, a Markdown page's
# metadata): read by the tool that loads the file, never rendered into the prompt.
_FRONT_MATTER = re.compile(r"---[ \t]*\r?\n(?:.*?\r?\n)?---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_FRONT_MATTER_SUFFIXES = frozenset({".prompty", ".prompt"}) | MARKDOWN_SUFFIXES


def check(text: str, ctx: RuleContext) -> list[Diagnostic]:
    """Diagnostics for a template file (its front matter left out: it is not prompt text)."""
    suffix = PurePath(ctx.path).suffix.lower()
    front = _FRONT_MATTER.match(text) if suffix in _FRONT_MATTER_SUFFIXES else None
    start = front.end() if front else 0
    body = text[start:]
    syntax = syntax_for(ctx.path, body)
    parsed = parse_template(body, syntax, strict=suffix in JINJA_SUFFIXES)
    document = TemplateDocument(
        path=ctx.path,
        file_text=text,
        text=body,
        parsed=parsed,
        host=SourceMap.identity(body, start),
        prefix_end=user_section_start(body),
    )
    if not start:
        return run_checkers([document], ctx)
    # Line endings are the whole file's: its front matter is checked out with the rest.
    whole = TemplateDocument(
        path=ctx.path,
        file_text=text,
        text=text,
        parsed=literal_template(text),
        host=SourceMap.identity(text),
        prefix_end=len(text),
    )
    found = run_checkers([whole], ctx, {LINE_ENDINGS})
    return found + run_checkers([document], ctx, set(ctx.enabled) - {LINE_ENDINGS})


def literal_template(text: str) -> ParsedTemplate:
    """``text`` as a template without placeholders or tags."""
    return ParsedTemplate(FORMAT, (), (), SourceMap.identity(text))


def run_checkers(
    documents: Iterable[TemplateDocument], ctx: RuleContext, codes: set[str] | None = None
) -> list[Diagnostic]:
    """Run every enabled template checker (of ``codes``, if given) over ``documents``."""
    found: list[Diagnostic] = []
    enabled = ctx.enabled if codes is None else ctx.enabled & codes
    checkers = registry.checkers("template", enabled)
    for document in documents:
        for _, checker in checkers:
            found.extend(checker(document, ctx))
    return found
