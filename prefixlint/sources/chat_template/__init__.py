"""Chat templates: Jinja programs that turn ``messages`` and ``tools`` into a prompt.

A chat template is checked by running it (:mod:`.sandbox`) on synthetic conversations
(:mod:`.conversation`) and comparing the renderings (:mod:`.compare`); the checks themselves
are rules in ``prefixlint.rules.chat_template``. Accepted inputs: a Jinja file that loops over
``messages``, a ``tokenizer_config.json`` or ``chat_template.json`` whose ``chat_template``
is a string or a list of ``{"name", "template"}``, and a local Hugging Face model folder
(:func:`template_file_in`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path, PurePath
from typing import Any

import jinja2
import jinja2.meta

from prefixlint import registry
from prefixlint.context import RuleContext, SourceError
from prefixlint.limits import DEFAULT_LIMITS, Limits
from prefixlint.sources import CHAT_TEMPLATE_CONFIGS, JINJA_SUFFIXES
from prefixlint.sources.chat_template import sandbox
from prefixlint.sources.chat_template.document import ChatTemplateDocument
from prefixlint.sources.nesting import guard_brackets, guard_jinja, too_long_number
from prefixlint.types import Diagnostic

SOURCE_KIND = "chat-template"
_MESSAGES_IN_JINJA = re.compile(r"\{[{%][^}]*?\bmessages\b")
_MESSAGES_LOOP = re.compile(r"\{%[-+]?\s*for\s+\w+\s+in\s+(?:loop_)?messages\b")
_TOKEN_MARKERS = ("bos_token", "eos_token")
_JINJA_TAG = re.compile(r"\{%.*?%\}|\{\{.*?\}\}|\{#.*?#\}", re.DOTALL)
_MAX_CHAT_TEMPLATE_TEXT = 300
_ROLE_READ = re.compile(r"""\b\w+(?:\.role\b|\[\s*["']role["']\s*\])""")
_SPECIAL_TOKEN_KEYS = ("bos_token", "eos_token", "unk_token", "pad_token")
_CHAT_VARIABLES = frozenset(
    {
        "messages", "tools", "documents", "add_generation_prompt", "bos_token", "eos_token",
        "unk_token", "pad_token", "raise_exception", "strftime_now", "tools_in_user_message",
        "custom_tools", "builtin_tools", "date_string", "enable_thinking", "reasoning_effort",
        "tool_choice", "system_message", "continue_final_message", "namespace", "range",
    }
)  # fmt: skip
_JINJA_SPECIAL_TOKENS = {"bos_token": "<s>", "eos_token": "</s>"}
"""Rendered where the file does not say: the common defaults (a config file names its own)."""


def looks_like_chat_template(path: str, text: str) -> bool:
    """A config file with a ``chat_template``, or Jinja written like one.

    Jinja counts as a chat template when it uses ``messages`` and ``add_generation_prompt``
    (the transformers calling convention), or loops over ``messages`` and emits
    ``bos_token``/``eos_token``, or reads each message's role and writes little text outside
    its tags (older or smaller templates without a generation prompt).
    """
    name = PurePath(path).name.lower()
    if name in CHAT_TEMPLATE_CONFIGS:
        return '"chat_template"' in text
    if PurePath(name).suffix not in JINJA_SUFFIXES:
        return False
    if _MESSAGES_IN_JINJA.search(text) and "add_generation_prompt" in text:
        return True
    if not _MESSAGES_LOOP.search(text):
        return False
    if any(m in text for m in _TOKEN_MARKERS):
        return True
    return bool(_ROLE_READ.search(text)) and _little_text(text) and _only_chat_variables(text)


def _little_text(text: str) -> bool:
    """Whether the template is mostly tags: a chat template writes little text of its own,
    while a prompt template that loops over a history is mostly prose."""
    prose = _JINJA_TAG.sub("", text)
    return len("".join(prose.split())) <= _MAX_CHAT_TEMPLATE_TEXT


def _only_chat_variables(text: str) -> bool:
    """Whether the template reads only what a chat template is given (``messages``, ``tools``,
    special tokens, ...): ``{{ user_name }}`` or ``{{ date }}`` make it a prompt template."""
    try:
        tree = jinja2.Environment().parse(text)
    except jinja2.TemplateSyntaxError:
        return False
    # ``{% set m = ... %}`` inside a loop is still reported as read from outside it
    targets = [
        assign.target
        for assign in tree.find_all((jinja2.nodes.Assign, jinja2.nodes.AssignBlock))
        if isinstance(assign, (jinja2.nodes.Assign, jinja2.nodes.AssignBlock))
    ]
    assigned = {
        name.name
        for target in targets
        for name in (target, *target.find_all(jinja2.nodes.Name))
        if isinstance(name, jinja2.nodes.Name)
    }
    return jinja2.meta.find_undeclared_variables(tree) - assigned <= _CHAT_VARIABLES


def template_file_in(folder: str | Path) -> Path:
    """The file holding the chat template of a local Hugging Face model folder.

    ``chat_template.jinja`` (transformers >= 4.50) wins over ``tokenizer_config.json``, as in
    transformers. Raises ``FileNotFoundError`` when the folder has neither.
    """
    folder = Path(folder)
    for name in ("chat_template.jinja", "tokenizer_config.json", "chat_template.json"):
        candidate = folder / name
        if candidate.is_file() and looks_like_chat_template(name, candidate.read_text("utf-8")):
            return candidate
    raise FileNotFoundError(
        f"{folder}: no chat template (chat_template.jinja, tokenizer_config.json)"
    )


def _compile(source: str, file_line: Callable[[int], int]) -> jinja2.Template:
    try:
        guard_jinja(source)
    except SourceError as exc:
        raise SourceError(f"chat template {exc.message}", line=file_line(exc.line)) from None
    try:
        return sandbox.compile_template(source)
    except jinja2.TemplateSyntaxError as exc:
        line = exc.lineno or 1
        raise SourceError(
            f"chat template syntax error: {exc.message}", line=file_line(line)
        ) from None
    except (SyntaxError, RecursionError, MemoryError) as exc:  # compiling to Python failed
        message = f"chat template cannot be compiled: {type(exc).__name__}: {exc}"
        raise SourceError(message, line=file_line(1)) from None


def _special_tokens(config: dict[str, Any]) -> dict[str, str]:
    tokens = dict(_JINJA_SPECIAL_TOKENS)
    for key in _SPECIAL_TOKEN_KEYS:
        value = config.get(key)
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str):
            tokens[key] = value
    return tokens


def _named_templates(config: dict[str, Any], path: str) -> list[tuple[str | None, str]]:
    value = config.get("chat_template")
    if isinstance(value, str):
        return [(None, value)]
    if isinstance(value, list) and all(
        isinstance(item, dict) and isinstance(item.get("template"), str) for item in value
    ):
        return [(item.get("name"), item["template"]) for item in value]
    raise SourceError(f"{path}: chat_template must be a string or a list of {{name, template}}")


def _template_lines_in_json(text: str, count: int) -> list[int]:
    """File lines of the ``count`` template strings (each a one-line JSON string)."""
    key = re.search(r'"chat_template"\s*:\s*', text)
    if key is None:
        return [1] * count
    if count == 1 and text[key.end() : key.end() + 1] == '"':
        return [text.count("\n", 0, key.end()) + 1]
    found = [
        text.count("\n", 0, m.end()) + 1
        for m in re.finditer(r'"template"\s*:\s*"', text[key.end() :])
    ]
    first = text.count("\n", 0, key.end())
    found = [first + line for line in found]
    return (found + [found[-1] if found else 1] * count)[:count]


def _constant_line(line: int) -> Callable[[int], int]:
    """A template inside a JSON string: every template line is on the string's file line."""
    return lambda _template_line: line


def _same_line(line: int) -> int:
    return line


def parse(path: str, text: str, limits: Limits = DEFAULT_LIMITS) -> list[ChatTemplateDocument]:
    """The chat templates in ``text``, compiled; raises :class:`SourceError` on bad input."""
    if PurePath(path).name.lower() not in CHAT_TEMPLATE_CONFIGS:
        template = _compile(text, _same_line)
        return [
            ChatTemplateDocument(
                path, text, template, _same_line, None, dict(_JINJA_SPECIAL_TOKENS), limits
            )
        ]
    guard_brackets(text, limits)
    try:
        config = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(f"invalid JSON: {exc.msg}", line=exc.lineno, column=exc.colno) from None
    except ValueError as exc:
        raise too_long_number(text, exc) from None
    if not isinstance(config, dict):
        raise SourceError("expected a JSON object with a chat_template")
    named = _named_templates(config, path)
    lines = _template_lines_in_json(text, len(named))
    documents = []
    for (name, source), line in zip(named, lines, strict=True):
        file_line = _constant_line(line)
        template = _compile(source, file_line)
        documents.append(
            ChatTemplateDocument(
                path, source, template, file_line, name, _special_tokens(config), limits
            )
        )
    return documents


def check(text: str, ctx: RuleContext) -> list[Diagnostic]:
    """Run the enabled chat-template checkers on every template in the file."""
    documents = parse(ctx.path, text, ctx.limits)
    for document in documents:
        document.features  # noqa: B018  (a template that cannot render at all is a SourceError)
    found: list[Diagnostic] = []
    for _code, checker in registry.checkers(SOURCE_KIND, ctx.enabled):
        for document in documents:
            found.extend(checker(document, ctx))
    return sorted(found, key=lambda d: d.sort_key)
