"""Kinds of source files and the checker that handles each.

Every source module exposes ``check(text: str, ctx: RuleContext) -> list[Diagnostic]`` and
raises :class:`prefixlint.context.SourceError` when the file cannot be parsed. A ``.json``
file that does not start like JSON (a Markdown prompt saved under that name) is read as text.
"""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING, Protocol, cast

from prefixlint.paths import name_of, suffix_of

if TYPE_CHECKING:
    from prefixlint.context import RuleContext
    from prefixlint.types import Diagnostic

MUSTACHE_SUFFIXES = frozenset({".mustache", ".hbs", ".handlebars"})
# Markdown, MDX and Cursor's rule files (``.mdc``: Markdown with front matter); of these, MDX
# and ``.markdown`` (a website's pages) are not checked.
MARKDOWN_SUFFIXES = frozenset({".md", ".markdown", ".mdx", ".mdc"})
TEMPLATE_SUFFIXES = (
    frozenset({".txt", ".md", ".mdc", ".prompt", ".prompty", ".j2", ".jinja", ".jinja2"})
    | MUSTACHE_SUFFIXES
)
STRUCTURED_SUFFIXES = frozenset({".yaml", ".yml", ".json", ".toml"})
PYTHON_SUFFIXES = frozenset({".py", ".pyi"})
# Where a chat template can be: a Jinja file, or a config file that holds one.
CHAT_TEMPLATE_CONFIGS = frozenset({"tokenizer_config.json", "chat_template.json"})
JINJA_SUFFIXES = frozenset({".jinja", ".jinja2", ".j2"})

# How a JSON text starts (after a byte-order mark and whitespace): a value of any kind.
# A JSON value's start, after the comments JSON with comments may open with.
_JSON_START = re.compile(
    r"\ufeff?(?:\s*(?://[^\n]*|/\*.*?\*/))*\s*(?:[{\[\"\d-]|true\b|false\b|null\b|\Z)",
    re.DOTALL,
)

_MODULE_FOR_SUFFIXES = (
    (TEMPLATE_SUFFIXES, "prefixlint.sources.templates"),
    (STRUCTURED_SUFFIXES, "prefixlint.sources.structured"),
    (PYTHON_SUFFIXES, "prefixlint.sources.python"),
)


class SourceChecker(Protocol):
    """A source module: its ``check`` finds the diagnostics of one file's text."""

    def check(self, text: str, ctx: RuleContext) -> list[Diagnostic]: ...


def is_checkable(path: str) -> bool:
    """Whether prefixlint has a checker for files like ``path``."""
    suffix = suffix_of(name_of(path)).lower()
    return any(suffix in suffixes for suffixes, _ in _MODULE_FOR_SUFFIXES)


def source_module(path: str, text: str) -> SourceChecker:
    """The module whose ``check`` handles ``path`` (chat templates get their own)."""
    name = name_of(path).lower()
    suffix = suffix_of(name)
    # Each module named here defines ``check`` as SourceChecker describes. The chat-template
    # one (and Jinja with it) is imported only for files that can be one.
    if name in CHAT_TEMPLATE_CONFIGS or suffix in JINJA_SUFFIXES:
        chat = importlib.import_module("prefixlint.sources.chat_template")
        if chat.looks_like_chat_template(path, text):
            return cast("SourceChecker", chat)
    if suffix == ".json" and not looks_like_json(text):
        return cast("SourceChecker", importlib.import_module("prefixlint.sources.templates"))
    for suffixes, module in _MODULE_FOR_SUFFIXES:
        if suffix in suffixes:
            return cast("SourceChecker", importlib.import_module(module))
    raise ValueError(f"no checker for {path}")


def looks_like_json(text: str) -> bool:
    """Whether ``text`` starts as a JSON value does (a broken one too, so that its syntax
    error is reported), rather than as prose or Markdown."""
    return _JSON_START.match(text) is not None
