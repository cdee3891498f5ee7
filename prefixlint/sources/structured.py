"""Prompt files in YAML, JSON or TOML: each prompt string is checked as a template.

A file is a prompt file when it has prompt keys (``system``, ``system_prompt``, ``messages``,
``tools``, ``prompt``, ``instructions``, ``template``, ``*_prompt``, ``*_template``; this
covers LangChain prompt files, ``_type: prompt`` with a ``template``) or tool descriptions
(a ``description`` beside ``parameters`` or ``input_schema``, as in a bare list of tools);
other YAML/JSON/TOML files (a Semantic Kernel ``config.json``) give no findings. A prompt
file's line endings (PFX401) and byte-order mark (PFX403) are checked on the file itself; a
JSON or TOML file that starts with a byte-order mark is read like one without.

Every string under such a key becomes a
:class:`~prefixlint.sources.templates.TemplateDocument` whose source map points into the
file, through YAML block indentation, line folding and escapes, JSON escapes and TOML string
forms, so findings land on the real line and fixes are written back in the file's own syntax.
Where a string's layout cannot be mapped exactly (YAML folded ``>`` blocks), its findings
point at the string's first line and carry no fix.

What part of the prompt should stay stable depends on the key: system prompts, instructions,
tool descriptions and all but the last message are stable throughout; a value whose key says
it is a user turn (``instance_template``, ``next_step_template``, ``user``, ``task``, ...)
is not; any other prompt value is stable up to its user-section marker, like a template file.
The values that are stable throughout are one stable part, in the file's order: a volatile
value in one costs the rest of it and every such value after it, and later volatile values
fold into its finding.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import yaml

from prefixlint import codes

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

from prefixlint.context import RuleContext, SourceError
from prefixlint.limits import DEFAULT_LIMITS, Limits
from prefixlint.lines import LineIndex
from prefixlint.sourcemap import Slice, SourceMap, SourceMapBuilder
from prefixlint.sources.nesting import guard_brackets, too_long_number
from prefixlint.sources.templates import (
    TemplateDocument,
    apply_changes,
    literal_template,
    parse_template,
    run_checkers,
    syntax_for,
    user_section_start,
)
from prefixlint.sources.yaml_limits import bounded_loader
from prefixlint.types import Diagnostic, Edit
from prefixlint.vocabulary import split_words

BOM = "\ufeff"
Encoder = Callable[[str], "str | None"]
Path = tuple[Any, ...]

_PROMPT_WORDS = frozenset(
    {
        "system",
        "prompt",
        "prompts",
        "instructions",
        "instruction",
        "template",
        "templates",
        "messages",
        "tools",
        "preamble",
        "persona",
    }
)
_STABLE_WORDS = frozenset(
    {"system", "instructions", "instruction", "preamble", "persona", "tools", "tool"}
)
# The last word of a key whose value is a name, a reference or a setting, not prompt text.
_NOT_TEXT_WORDS = frozenset(
    {
        "name", "names", "id", "type", "command", "cmd", "script", "url", "uri", "path",
        "file", "filename", "dir", "model", "matcher", "pattern", "regex", "icon", "color",
        "version", "timeout", "event", "hook",
    }
)  # fmt: skip
_PROMPT_FILE_WORDS = frozenset({"prompt", "prompts"})
# The texts of a crewAI agent's definition (``agents.yaml``).
_AGENT_FIELDS = frozenset({"role", "goal", "backstory"})
_RUN_TOGETHER_PROMPT = re.compile(r"prompt|instruction", re.IGNORECASE)
_TOOL_SCHEMA_KEYS = frozenset({"parameters", "input_schema", "inputSchema", "args_schema"})
_USER_WORDS = frozenset(
    {
        "user",
        "human",
        "instance",
        "next",
        "step",
        "observation",
        "input",
        "query",
        "question",
        "demonstration",
        "demonstrations",
        "error",
        "planning",
        "plan",
        "final",
        "answer",
        "task",
        "update",
        "feedback",
        "followup",
        "retry",
    }
)


@dataclass(frozen=True)
class PromptString:
    """A string value of a prompt file: where it is, what it says, how to write into it."""

    path: Path
    value: str
    host: SourceMap
    encode: Encoder
    stable: str  # "all", "none" or "marker"
    verify: Verifier | None = None
    framework_follows: bool = False


def _unwritable(_: str) -> None:
    return None


def _json_escape(replacement: str) -> str:
    return json.dumps(replacement, ensure_ascii=False)[1:-1]


def _opaque(value: str, start: int, end: int) -> tuple[SourceMap, Encoder]:
    """A map that points every offset of ``value`` at the start of its source range."""
    return SourceMap([Slice("opaque", start, end, 0, len(value))], value), _unwritable


def _clip(source_map: SourceMap, length: int) -> SourceMap:
    """``source_map`` cut to its first ``length`` rendered characters."""
    slices = []
    for piece in source_map.slices:
        if piece.rendered_start >= length and piece.rendered_end > piece.rendered_start:
            break
        if piece.rendered_end > length:
            cut = length - piece.rendered_start
            piece = Slice(
                piece.kind,
                piece.source_start,
                piece.source_start + cut,
                piece.rendered_start,
                length,
            )
        slices.append(piece)
    return SourceMap(slices, source_map.rendered[:length])


# ---------------------------------------------------------------------------------------------
# Roles of prompt strings


def _key_words(key: Any) -> set[str]:
    return set(split_words(key)) if isinstance(key, str) else set()


def is_prompt_path(path: Path) -> bool:
    """Whether a key on ``path`` says prompt: by its words, or run together (``preprompt``,
    ``SYSPROMPT``). A string whose own key names something other than text (``command``,
    ``prompt_name``, ``template_path``) is not one, whatever its section is called
    (``UserPromptSubmit: [{command: ...}]``)."""
    leaf = next((key for key in reversed(path) if isinstance(key, str)), "")
    if not _NOT_TEXT_WORDS.isdisjoint(split_words(leaf)[-1:]):
        return False
    return any(
        _key_words(key) & _PROMPT_WORDS or _RUN_TOGETHER_PROMPT.search(key)
        for key in path
        if isinstance(key, str)
    )


def _file_says_prompts(path: str) -> bool:
    """Whether the file's name says it holds prompts (``prompts.yaml``, ``ops_prompts.json``;
    not ``stack_template.yaml``, which may be a deployment's)."""
    return bool(set(split_words(PurePath(path).stem)) & _PROMPT_FILE_WORDS)


def _named_prompt(path: Path, value: str) -> bool:
    """Whether a string of a file of prompts is one: a text of several lines under a name
    (``incident_summary: |``), where one-line values are settings (``model: gpt-4o``)."""
    return "\n" in value.strip() and all(isinstance(key, str) for key in path)


def stable_owner(path: Path) -> Path:
    """The keys above the first that names a stable part (``system``, ``tools``, ``messages``),
    less a trailing group of prompts (``templates:``): the prompt that part belongs to. A file
    of several named prompts (``planner: {system: ...}``, ``executor: {system: ...}``) holds
    one stable part per prompt."""
    end = next(
        (i for i, key in enumerate(path) if key == "messages" or _key_words(key) & _STABLE_WORDS),
        len(path) - 1,
    )
    while end > 0 and _key_words(path[end - 1]) & _PROMPT_WORDS:
        end -= 1
    return path[:end]


def _is_tool_description(path: Path, data: Any) -> bool:
    """Whether ``path`` is the description of a tool: beside its parameter schema, in a file
    that lists tools without a ``tools`` key."""
    if path[-1:] != ("description",):
        return False
    owner = _lookup(data, path[:-1])
    return isinstance(owner, dict) and not _TOOL_SCHEMA_KEYS.isdisjoint(owner)


def _is_agent_field(path: Path, data: Any) -> bool:
    """Whether ``path`` is a text of an agent's definition that its system prompt is made of:
    a crewAI ``agents.yaml`` entry's ``role``, ``goal`` or ``backstory``, beside at least one
    more of them (crewAI renders "You are {role}. {backstory} Your personal goal is: {goal}")."""
    if not path or path[-1] not in _AGENT_FIELDS:
        return False
    owner = _lookup(data, path[:-1])
    return isinstance(owner, dict) and len(_AGENT_FIELDS.intersection(owner)) >= 2


def stability(path: Path, message_role: str | None, is_last_message: bool) -> str:
    """How much of a string stays stable: ``all``, ``none`` or up to a ``marker``."""
    if message_role is not None:
        if message_role in ("system", "developer") or not is_last_message:
            return "all"
        return "none"
    for key in reversed(path):
        words = _key_words(key)
        if words & _STABLE_WORDS:
            return "all"
        if words & _USER_WORDS:
            return "none"
    return "marker"


def _message_context(path: Path, root: Any) -> tuple[str | None, bool]:
    """The role of the message a string belongs to (``messages[i]...``) and if it is last."""
    node = root
    for index, key in enumerate(path[:-1]):
        try:
            node = node[key]
        except (KeyError, IndexError, TypeError):
            return None, False
        nxt = path[index + 1]
        if key == "messages" and isinstance(node, list) and isinstance(nxt, int):
            message = node[nxt]
            role = message.get("role") if isinstance(message, dict) else None
            return (role if isinstance(role, str) else "user"), nxt == len(node) - 1
    return None, False


# ---------------------------------------------------------------------------------------------
# YAML


def _yaml_strings(text: str, limits: Limits) -> Iterator[tuple[Path, yaml.ScalarNode]]:
    try:
        documents = list(yaml.compose_all(text, Loader=bounded_loader(limits)))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise SourceError(f"YAML syntax error: {problem}", line, column) from None
    for document in documents:
        if document is not None:
            yield from _walk_yaml(document, ())


def _walk_yaml(node: yaml.Node, path: Path) -> Iterator[tuple[Path, yaml.ScalarNode]]:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from _walk_yaml(value, (*path, key.value))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _walk_yaml(item, (*path, index))
    elif isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:str":
        yield path, node


Change = tuple[int, int, str]
Verifier = Callable[[list[Change], list[Edit]], bool]


def _block_verifier(value: str) -> Verifier:
    """Check an edited literal block: YAML takes its indentation from the first non-blank
    line and its chomping from the trailing line breaks, so those must stay as they were.
    Only a change near the block's start or end can alter them."""
    trailing = len(value) - len(value.rstrip("\n"))
    head_end = value.find("\n", len(value) - len(value.lstrip()))
    head_end = len(value) if head_end == -1 else head_end
    tail_start = len(value) - trailing - 1

    def verify(changes: list[Change], _: list[Edit]) -> bool:
        if all(head_end < start and end < tail_start for start, end, _ in changes):
            return True
        new_value = apply_changes(value, changes)
        lines = new_value.split("\n")
        first = next((index for index, line in enumerate(lines) if line.strip()), len(lines))
        return (
            (first == len(lines) or not lines[first].startswith((" ", "\t")))
            and all(line == "" for line in lines[:first])
            and (len(new_value) - len(new_value.rstrip("\n")) == trailing)
        )

    return verify


def _flow_verifier(text: str, start: int, end: int, value: str) -> Verifier:
    """Check an edited plain or quoted scalar by parsing its new source on its own."""

    def verify(changes: list[Change], edits: list[Edit]) -> bool:
        local = [(e.start - start, e.end - start, e.replacement) for e in edits]
        source = apply_changes(text[start:end], local)
        try:
            parsed = yaml.safe_load("x: " + source)
        except yaml.YAMLError:
            return False
        expected = apply_changes(value, changes)
        return isinstance(parsed, dict) and parsed.get("x") == expected

    return verify


def _yaml_map(text: str, node: yaml.ScalarNode) -> tuple[SourceMap, Encoder, Verifier | None]:
    start, end = node.start_mark.index, node.end_mark.index
    if node.style == "|":
        built = _yaml_literal_block(text, start, end)
    elif node.style in ('"', "'", None):
        built = _yaml_flow_scalar(text, start, end, node.style)
    else:
        built = None
    if built is None or not built.rendered.startswith(node.value):
        return (*_opaque(node.value, start, end), None)
    if len(built.rendered) > len(node.value):
        built = _clip(built, len(node.value))
    if node.style == "|":
        indent = " " * _block_indent(text, start, end)
        return built, _block_encoder(indent), _block_verifier(node.value)
    return built, _yaml_flow_encoder(node.style), _flow_verifier(text, start, end, node.value)


def _block_indent(text: str, start: int, end: int) -> int:
    """Indentation of a block scalar's content: that of its first non-blank line."""
    lines = text[text.find("\n", start) + 1 : end].split("\n")
    return next((len(line) - len(line.lstrip(" ")) for line in lines if line.strip()), 0)


def _yaml_literal_block(text: str, start: int, end: int) -> SourceMap | None:
    header_end = text.find("\n", start)
    if header_end == -1 or header_end >= end:
        return None
    lines_start = header_end + 1
    indent = _block_indent(text, start, end)
    header = text[start:header_end].split("#", 1)[0]
    if indent == 0 or any(c.isdigit() for c in header):
        return None  # an explicit indentation indicator: left unmapped
    builder = SourceMapBuilder(text, lines_start)
    position = lines_start
    while position < end:
        newline = text.find("\n", position, end)
        line_end = end if newline == -1 else newline
        content = min(position + indent, line_end)
        builder.other("indent", content)
        if newline != -1 and line_end > content and text[line_end - 1] == "\r":
            builder.literal(line_end - 1)
            builder.other("line-ending", line_end)  # YAML reads a CRLF as "\n"
        builder.literal(line_end + 1 if newline != -1 else line_end)
        position = line_end + 1
    return builder.build()


def _block_encoder(indent: str) -> Encoder:
    """Line breaks inserted in a literal block continue at the block's indentation."""

    def encode(replacement: str) -> str | None:
        if "\r" in replacement:
            return None
        return replacement.replace("\n", "\n" + indent)

    return encode


_DOUBLE_QUOTED_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_LENGTH = {"x": 2, "u": 4, "U": 8}


def _yaml_flow_scalar(text: str, start: int, end: int, style: str | None) -> SourceMap | None:
    """Decode a plain or quoted scalar's source, folding lines as YAML does."""
    quoted = style in ('"', "'")
    body_start, body_end = (start + 1, end - 1) if quoted else (start, end)
    builder = SourceMapBuilder(text, body_start)
    position = body_start
    while position < body_end:
        char = text[position]
        if char in " \t\n":
            run_end = position
            while run_end < body_end and text[run_end] in " \t":
                run_end += 1
            if run_end < body_end and text[run_end] == "\n":
                builder.literal(position)
                position = _fold(text, builder, run_end, body_end)
                continue
            builder.literal(run_end)
            position = run_end
        elif style == '"' and char == "\\":
            position = _double_quoted_escape(text, builder, position, body_end)
            if position < 0:
                return None
        elif style == "'" and text.startswith("''", position):
            builder.literal(position + 1)
            builder.other("escape", position + 2, "")
            position += 2
        else:
            next_special = position + 1
            while next_special < body_end and text[next_special] not in " \t\n\\'":
                next_special += 1
            builder.literal(next_special)
            position = next_special
    builder.literal(body_end)
    return builder.build()


def _fold(text: str, builder: SourceMapBuilder, position: int, body_end: int) -> int:
    """Fold the line break at ``position`` and blank lines after it; return where text resumes."""
    breaks = 0
    cursor = position
    while cursor < body_end and text[cursor] in " \t\n":
        if text[cursor] == "\n":
            breaks += 1
        cursor += 1
    builder.other("fold", cursor, " " if breaks == 1 else "\n" * (breaks - 1))
    return cursor


def _double_quoted_escape(text: str, builder: SourceMapBuilder, position: int, end: int) -> int:
    builder.literal(position)
    code = text[position + 1] if position + 1 < end else ""
    if code == "\n":
        cursor = position + 2
        while cursor < end and text[cursor] in " \t":
            cursor += 1
        builder.other("escape", cursor, "")
        return cursor
    if code in _HEX_LENGTH:
        digits = text[position + 2 : position + 2 + _HEX_LENGTH[code]]
        try:
            char = chr(int(digits, 16))
        except ValueError:
            return -1
        builder.other("escape", position + 2 + len(digits), char)
        return position + 2 + len(digits)
    if code not in _DOUBLE_QUOTED_ESCAPES:
        return -1
    builder.other("escape", position + 2, _DOUBLE_QUOTED_ESCAPES[code])
    return position + 2


_PLAIN_SAFE = re.compile(r"[^\n\r\t#:'\"{}\[\],&*!|>%@`]*")


def _yaml_flow_encoder(style: str | None) -> Encoder:
    def encode(replacement: str) -> str | None:
        if style == '"':
            return _json_escape(replacement)
        if "\n" in replacement or "\r" in replacement:
            return None
        if style == "'":
            return replacement.replace("'", "''")
        return replacement if _PLAIN_SAFE.fullmatch(replacement) else None

    return encode


# ---------------------------------------------------------------------------------------------
# JSON

_JSON_TOKEN = re.compile(r'\s*(?:("(?:[^"\\]|\\.)*")|([{}\[\],:])|([^\s{}\[\],:"]+))', re.DOTALL)
_JSON_ESCAPES = {
    '"': '"',
    "\\": "\\",
    "/": "/",
    "b": "\b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
}


def _json_strings(text: str, limits: Limits) -> tuple[Any, list[tuple[Path, int, int]]]:
    """The parsed document and ``(path, start, end)`` of every string value (quotes included)."""
    guard_brackets(text, limits)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        plain = _without_comments(text)
        if plain == text:
            raise SourceError(f"JSON syntax error: {exc.msg}", exc.lineno, exc.colno) from None
        return _json_strings(plain, limits)
    except RecursionError:
        raise SourceError("JSON nesting too deep") from None
    except ValueError as exc:
        raise too_long_number(text, exc) from None
    found: list[tuple[Path, int, int]] = []
    tokens = _JSON_TOKEN.finditer(text)
    stack: list[_OpenContainer] = []
    pending_key: str | None = None
    expect_key = False
    for token in tokens:
        string, punct = token.group(1), token.group(2)
        if punct in ("{", "["):
            path = _json_child_path(stack, pending_key)
            stack.append(_OpenContainer(punct == "{", path))
            expect_key, pending_key = punct == "{", None
        elif punct in ("}", "]"):
            stack.pop()
            _json_advance(stack)
            expect_key = False
        elif punct == ",":
            expect_key = bool(stack and stack[-1].is_object)
        elif punct == ":":
            expect_key = False
        elif string is not None and expect_key:
            pending_key = json.loads(string)
            expect_key = False
        else:
            if string is not None and stack:
                found.append((_json_child_path(stack, pending_key), token.start(1), token.end(1)))
            pending_key = None
            _json_advance(stack)
    return data, found


# What JSON with comments (VS Code's ``launch.json``, editor and tool settings) adds to JSON:
# ``//`` and ``/* */`` comments and a comma before a closing bracket; strings kept as they are.
_JSONC_EXTRA = re.compile(r'("(?:[^"\\\n]|\\.)*")|//[^\n]*|/\*.*?\*/|,(?=\s*[\]}])', re.DOTALL)


def _without_comments(text: str) -> str:
    """``text`` with the comments and trailing commas of JSON with comments blanked to spaces
    (line breaks kept), so every string stays at its offset and line; ``text`` itself when it
    has no comment (a trailing comma alone is an error)."""
    commented = False

    def blank(match: re.Match[str]) -> str:
        nonlocal commented
        if match.group(1):
            return match.group(1)
        commented = commented or match.group(0)[0] == "/"
        return re.sub(r"[^\n]", " ", match.group(0))

    plain = _JSONC_EXTRA.sub(blank, text)
    return plain if commented else text


@dataclass(slots=True)
class _OpenContainer:
    """A JSON object or array being read: its path, and the index of its next item."""

    is_object: bool
    path: Path
    index: int = 0


def _json_child_path(stack: list[_OpenContainer], key: str | None) -> Path:
    if not stack:
        return ()
    top = stack[-1]
    return (*top.path, key if top.is_object else top.index)


def _json_advance(stack: list[_OpenContainer]) -> None:
    if stack and not stack[-1].is_object:
        stack[-1].index += 1


def _json_string_map(text: str, start: int, end: int) -> SourceMap:
    builder = SourceMapBuilder(text, start + 1)
    position = start + 1
    body_end = end - 1
    while position < body_end:
        backslash = text.find("\\", position, body_end)
        if backslash == -1:
            break
        builder.literal(backslash)
        code = text[backslash + 1]
        if code == "u":
            char = chr(int(text[backslash + 2 : backslash + 6], 16))
            length = 6
            low = text[backslash + 6 : backslash + 12]
            if 0xD800 <= ord(char) < 0xDC00 and re.fullmatch(r"\\u[dD][c-fC-F][0-9a-fA-F]{2}", low):
                pair = (char + chr(int(low[2:], 16))).encode("utf-16", "surrogatepass")
                char, length = pair.decode("utf-16"), 12
            builder.other("escape", backslash + length, char)
            position = backslash + length
        else:
            builder.other("escape", backslash + 2, _JSON_ESCAPES[code])
            position = backslash + 2
    builder.literal(body_end)
    return builder.build()


# ---------------------------------------------------------------------------------------------
# TOML

_TOML_TABLE = re.compile(r"[ \t]*(\[\[?)[ \t]*([^\]\n]+?)[ \t]*\]\]?[ \t]*(?:#.*)?$", re.M)
_TOML_KEY = re.compile(
    r'[ \t]*((?:[A-Za-z0-9_-]+|"[^"\n]*"|\'[^\'\n]*\')'
    r'(?:[ \t]*\.[ \t]*(?:[A-Za-z0-9_-]+|"[^"\n]*"|\'[^\'\n]*\'))*)[ \t]*=[ \t]*'
)
_TOML_STRING_START = re.compile(r'"""|\'\'\'|"|\'')
_TOML_BASIC_ESCAPES = {**_JSON_ESCAPES, "e": "\x1b"}
_TOML_BASIC_ESCAPES.pop("/")


def _toml_key_parts(key: str) -> list[str]:
    parts = re.findall(r'"([^"]*)"|\'([^\']*)\'|([A-Za-z0-9_-]+)', key)
    return [next(p for p in part if p != "") if any(part) else "" for part in parts]


def _toml_strings(text: str, limits: Limits) -> tuple[Any, list[tuple[Path, SourceMap, Encoder]]]:
    guard_brackets(text, limits, toml=True)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        located = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        line, column = (int(located.group(1)), int(located.group(2))) if located else (1, 1)
        raise SourceError(f"TOML syntax error: {str(exc).split(' (at')[0]}", line, column) from None
    except ValueError as exc:
        raise too_long_number(text, exc) from None
    found: list[tuple[Path, SourceMap, Encoder]] = []
    table: Path = ()
    array_counts: dict[Path, int] = {}
    position = 0
    while position < len(text):
        line_end = text.find("\n", position)
        line_end = len(text) if line_end == -1 else line_end
        header = _TOML_TABLE.match(text, position, line_end)
        key = _TOML_KEY.match(text, position, line_end)
        if header:
            names = tuple(_toml_key_parts(header.group(2)))
            if header.group(1) == "[[":
                array_counts[names] = array_counts.get(names, -1) + 1
            table = _toml_table_path(names, array_counts)
        elif key:
            quote = _TOML_STRING_START.match(text, key.end())
            if quote:
                parsed = _toml_string(text, key.end(), quote.group(0))
                if parsed is None:
                    return data, found
                source_map, encoder, string_end = parsed
                found.append(((*table, *_toml_key_parts(key.group(1))), source_map, encoder))
                line_end = text.find("\n", string_end)
                line_end = len(text) if line_end == -1 else line_end
            else:
                line_end = _toml_skip_value(text, key.end())
        position = line_end + 1
    return data, found


def _toml_table_path(names: Path, array_counts: dict[Path, int]) -> Path:
    path: Path = ()
    for index, name in enumerate(names):
        path = (*path, name)
        prefix = tuple(names[: index + 1])
        if prefix in array_counts:
            path = (*path, array_counts[prefix])
    return path


def _toml_skip_value(text: str, position: int) -> int:
    """Offset of the line break that ends the value starting at ``position``."""
    depth = 0
    while position < len(text):
        char = text[position]
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "#":
            newline = text.find("\n", position)
            position = len(text) if newline == -1 else newline
            continue
        elif char in "\"'":
            quote = char * 3 if text.startswith(char * 3, position) else char
            parsed = _toml_string(text, position, quote)
            if parsed is None:
                return len(text)
            position = parsed[2]
            continue
        elif char == "\n" and depth <= 0:
            return position
        position += 1
    return len(text)


def _toml_string(text: str, start: int, quote: str) -> tuple[SourceMap, Encoder, int] | None:
    """Map of the TOML string opening at ``start``, its encoder, and the offset after it."""
    multiline, basic = len(quote) == 3, quote[0] == '"'
    body_start = start + len(quote)
    if multiline and text.startswith("\r\n", body_start):
        body_start += 2
    elif multiline and text.startswith("\n", body_start):
        body_start += 1
    close = _toml_close(text, body_start, quote)
    if close is None:
        return None
    builder = SourceMapBuilder(text, body_start)
    position = body_start
    while basic and (backslash := text.find("\\", position, close)) != -1:
        builder.literal(backslash)
        code = text[backslash + 1]
        if multiline and code in " \t\r\n":
            cursor = backslash + 1
            while cursor < close and text[cursor] in " \t\r\n":
                cursor += 1
            builder.other("escape", cursor, "")
            position = cursor
        elif code in ("u", "U"):
            length = 6 if code == "u" else 10
            builder.other(
                "escape", backslash + length, chr(int(text[backslash + 2 : backslash + length], 16))
            )
            position = backslash + length
        else:
            builder.other("escape", backslash + 2, _TOML_BASIC_ESCAPES.get(code, code))
            position = backslash + 2
    builder.literal(close)
    return builder.build(), _toml_encoder(quote), close + len(quote)


def _toml_close(text: str, position: int, quote: str) -> int | None:
    while True:
        found = text.find(quote, position)
        if found == -1:
            return None
        if quote[0] == '"' and _escaped(text, found):
            position = found + 1
            continue
        if len(quote) == 3:
            while text.startswith(quote[0], found + 3):  # up to two quotes may end the body
                found += 1
        return found


def _escaped(text: str, position: int) -> bool:
    backslashes = 0
    while position - backslashes - 1 >= 0 and text[position - backslashes - 1] == "\\":
        backslashes += 1
    return backslashes % 2 == 1


def _toml_encoder(quote: str) -> Encoder:
    def encode(replacement: str) -> str | None:
        if quote == '"':
            return _json_escape(replacement)
        if quote == '"""':
            if re.search(r"[\x00-\x08\x0b-\x1f\x7f]", replacement):
                return None
            return replacement.replace("\\", "\\\\").replace('"""', '""\\"')
        if quote == "'":
            return None if re.search(r"['\n\r]", replacement) else replacement
        return None if "'''" in replacement else replacement

    return encode


# ---------------------------------------------------------------------------------------------


def prompt_strings(text: str, path: str, limits: Limits = DEFAULT_LIMITS) -> list[PromptString]:
    """The prompt strings of a YAML/JSON/TOML file (none if it is not a prompt file)."""
    suffix = PurePath(path).suffix.lower()
    strings: list[tuple[Path, str, SourceMap, Encoder, Verifier | None]] = []
    if suffix == ".json":
        data, spans = _json_strings(_without_bom(text), limits)
        for key_path, start, end in spans:
            host = _json_string_map(text, start, end)
            strings.append((key_path, host.rendered, host, _json_escape, None))
    elif suffix == ".toml":
        data, located = _toml_strings(_without_bom(text), limits)
        for key_path, host, encoder in located:
            if _lookup(data, key_path) != host.rendered:
                value = _lookup(data, key_path)
                if not isinstance(value, str):
                    continue
                host, encoder = _opaque(value, host.to_source(0), host.to_source(0))
            strings.append((key_path, host.rendered, host, encoder, None))
    else:
        for key_path, node in _yaml_strings(text, limits):
            strings.append((key_path, node.value, *_yaml_map(text, node)))
        needs_data = any(
            "messages" in key_path or key_path[-1] in ("description", *_AGENT_FIELDS)
            for key_path, *_ in strings
            if key_path
        )
        try:
            data = yaml.load(text, Loader=bounded_loader(limits)) if needs_data else None
        except ValueError as exc:  # an integer too long to convert
            raise too_long_number(text, exc) from None
        except yaml.YAMLError:
            # It composes but does not load: several documents, or a mapping as a key (a
            # ``name: {{ value }}`` placeholder that YAML reads as a flow mapping).
            data = None
    named = _file_says_prompts(path)
    result = []
    for key_path, value, host, encoder, verify in strings:
        agent = _is_agent_field(key_path, data)
        if not (
            agent
            or is_prompt_path(key_path)
            or _is_tool_description(key_path, data)
            or (named and _named_prompt(key_path, value))
        ):
            continue
        role, last = _message_context(key_path, data)
        stable = "all" if agent else stability(key_path, role, last)
        result.append(PromptString(key_path, value, host, encoder, stable, verify, agent))
    return result


def _lookup(data: Any, path: Path) -> Any:
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _without_bom(text: str) -> str:
    """``text`` with a leading byte-order mark read as a space: JSON and TOML parsers refuse
    it (YAML's skips it), and a space of the same length keeps every offset."""
    return " " + text[1:] if text.startswith(BOM) else text


def _file_documents(
    text: str, path: str, file_lines: LineIndex
) -> list[tuple[TemplateDocument, str]]:
    """Whole-file views for the checks that concern the file, not one string: its line
    endings (PFX401) and its byte-order mark (PFX403), each with the code to run on it."""
    views = []
    if "\r" in text:
        views.append((text, codes.LINE_ENDINGS))
    if text.startswith(BOM):
        views.append((BOM, codes.INVISIBLE))
    return [
        (
            TemplateDocument(
                path=path,
                file_text=text,
                text=view,
                parsed=literal_template(view),
                host=SourceMap.identity(view),
                prefix_end=len(view),
                file_lines=file_lines,
            ),
            code,
        )
        for view, code in views
    ]


def check(text: str, ctx: RuleContext) -> list[Diagnostic]:
    """Diagnostics for the prompt strings of a YAML/JSON/TOML file, and for the file's line
    endings and byte-order mark when it is a prompt file."""
    file_lines = LineIndex(text)
    documents = []
    strings = prompt_strings(text, ctx.path, ctx.limits)
    for string in strings:
        syntax = syntax_for("", string.value)
        parsed = parse_template(string.value, syntax)
        prefix_end = {"all": len(string.value), "none": 0}.get(
            string.stable, user_section_start(string.value)
        )
        documents.append(
            TemplateDocument(
                path=ctx.path,
                file_text=text,
                text=string.value,
                parsed=parsed,
                host=string.host,
                prefix_end=prefix_end,
                encode=string.encode,
                verify=string.verify,
                indentation_sensitive=any(p.kind == "indent" for p in string.host.slices),
                file_lines=file_lines,
                label=".".join(str(k) for k in string.path),
                framework_follows=string.framework_follows,
            )
        )
    chains: dict[Path, list[TemplateDocument]] = {}
    for document, string in zip(documents, strings, strict=True):
        if string.stable == "all":
            chains.setdefault(stable_owner(string.path), []).append(document)
    for members in chains.values():
        chain = tuple(members)
        for document in chain:
            document.stable_chain = chain
    found = run_checkers(documents, ctx)
    if strings:
        for document, code in _file_documents(text, ctx.path, file_lines):
            found.extend(run_checkers([document], ctx, codes={code}))
    return found
