"""Which files are prompts, for the files ``check`` finds on its own.

A folder holds prompts next to documents about the project. By default a file is checked
when its kind has a checker and it is not one of those documents: Markdown and text named
``README*``, ``CHANGELOG*``, ``LICENSE*``, ``CONTRIBUTING``, ``SECURITY`` and the like, or
named in capitals (``CREDITS.md``, ``FAQ.md``), or under ``docs/`` (or ``doc/``,
``.github/``, ...), requirements lists, tokenizer and vocabulary files (``tokenizer.json``,
``vocab.json``, ``merges.txt``), package manifests and lock files; Markdown and text of a
website (``website/``, ``blog/``, Jekyll's ``_posts/``); data files of a test suite (JSON,
YAML, Markdown or text under ``tests/`` or ``snapshots/``: recorded responses and expected
output) and the settings of editors (``.vscode/``, ``.idea/``, ``.devcontainer/``). A file
whose folder or name says prompt (``prompts/``, ``system_prompts/``, ``*prompt*``,
``system*.md``, ``*instructions*.md``, ``AGENTS.md``, ``SKILL.md``; under ``docs/`` only a
name or folder that ends so, not ``prompt_tuning/``) or that has a template suffix is a prompt
wherever it is, unless its name is one of the documents (``prompts/README.md`` explains the
prompts; it is not one) or, outside such a folder, the template renders a web page, a script
or a configuration file (``page.html.j2``, ``nginx.conf.jinja``).
"""

from __future__ import annotations

import fnmatch
import functools
import re

from prefixlint.paths import folders_of, name_of, stem_of, suffix_of
from prefixlint.sources import MARKDOWN_SUFFIXES, PYTHON_SUFFIXES
from prefixlint.vocabulary import split_words

TEMPLATE_ONLY_SUFFIXES = frozenset(
    {".prompt", ".prompty", ".j2", ".jinja", ".jinja2", ".mustache", ".hbs", ".handlebars"}
)
_DOCUMENT_SUFFIXES = MARKDOWN_SUFFIXES | {".txt"}
# What a template renders, by the suffix before its template suffix, when that is a page, a
# stylesheet, a script or a configuration file (``context_table.html.j2``), not a prompt.
_RENDERS_NOT_PROMPT = frozenset(
    {
        ".html", ".htm", ".xml", ".svg", ".css", ".js", ".ts", ".sh", ".bash", ".ps1", ".py",
        ".sql", ".ini", ".cfg", ".conf", ".toml", ".tf", ".service", ".nginx", ".dockerfile",
    }
)  # fmt: skip

# Documents about a project, by the name's stem (``README``, ``README.zh``, ``LICENSE-MIT``).
_DOCUMENT_STEMS = re.compile(
    r"(?:readme|changelog|license|licence|copying|notice|ofl|unlicense)(?:[._-].*)?"
    r"|contributing|contributors|code[_-]of[_-]conduct|authors|security|support|governance"
    r"|maintainers|codeowners|citation|funding|history|news|changes|releases|release[_-]notes"
    r"|migration|migrating|upgrading|pull_request_template|issue_template|(?:dev[_-])?requirements(?:[._-].*)?"
    r"|constraints(?:[._-].*)?|cmakelists|robots",
    re.IGNORECASE,
)
# Data and configuration files that are never prompts (a tokenizer.json can be 10 MB).
NOT_PROMPT_NAMES = (
    "tokenizer.json", "vocab.json", "vocab.txt", "merges.txt", "special_tokens_map.json",
    "added_tokens.json", "package.json", "package-lock.json", "npm-shrinkwrap.json",
    "pnpm-lock.yaml", "composer.json", "tsconfig*.json", "jsconfig*.json", "*-lock.json",
    "*-lock.yaml", "*.lock.json", ".pre-commit-config.yaml", ".pre-commit-hooks.yaml",
    "mkdocs.yml", "mkdocs.yaml", "docker-compose*.yml", "docker-compose*.yaml",
    "pyproject.toml", "cargo.toml",
)  # fmt: skip
DOCUMENT_FOLDERS = frozenset(
    {
        "docs", "doc", "documentation", ".github", "wiki", "man", "changelog.d", "newsfragments",
        "website", "site", "blog", "_posts", "_drafts", "_includes", "_layouts",
    }
)  # fmt: skip
_DOCUMENT_WORDS = frozenset({"docs", "documentation", "website", "blog", "wiki"})
# Settings folders of editors and development containers: their JSON (often with comments) and
# YAML configure a tool, they are not prompts; Python under them is still code.
CONFIG_FOLDERS = frozenset({".vscode", ".idea", ".devcontainer", ".fleet", ".zed"})
# Words of the folders of a test suite: their data files are test data, their Python is code.
TEST_WORDS = frozenset({"tests", "test", "testdata", "testing", "e2e", "snapshots"})
_PROMPT_NAMES = (
    "*prompt*", "system*.md", "system*.txt", "*instructions*.md", "agents.md", "claude.md",
    "gemini.md", "skill.md",
)  # fmt: skip
# Under ``docs/``, pages about prompts (``docs/prompt_tuning/manual_prompt_tuning.md``) are
# documents: only a name that ends in what it is (``system_prompt.md``) is a prompt there.
_DOCUMENTED_PROMPT_NAMES = (
    "*prompt.*", "*prompts.*", "system*.md", "system*.txt", "*instructions.md", "agents.md",
    "claude.md", "gemini.md", "skill.md",
)  # fmt: skip
# A name in capitals (``CREDITS``, ``TRANSPARENCY_FAQS``) is how a project names its documents.
_UPPER_CASE_STEM = re.compile(r"[A-Z][A-Z0-9_-]*")


def _any_of(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regular expression that matches what any of the globs ``patterns`` matches (as
    ``fnmatch.fnmatchcase`` does)."""
    return re.compile("|".join(fnmatch.translate(pattern) for pattern in patterns))


_NOT_PROMPT = _any_of(NOT_PROMPT_NAMES)
_PROMPT = _any_of(_PROMPT_NAMES)
_DOCUMENTED_PROMPT = _any_of(_DOCUMENTED_PROMPT_NAMES)


def is_prompt_file(path: str) -> bool:
    """Whether ``path`` (relative to the folder being checked) is a prompt by default."""
    name = name_of(path).lower()
    suffix = suffix_of(name)
    if _NOT_PROMPT.match(name):
        return False
    if suffix in _DOCUMENT_SUFFIXES and _DOCUMENT_STEMS.fullmatch(stem_of(name)):
        return False
    named_folders = folders_of(path)
    folders = [folder.lower() for folder in named_folders]
    in_documents = any(map(_document_folder, folders))
    if _documented_prompt(name, folders) if in_documents else _says_prompt(name, named_folders):
        return True
    if suffix in TEMPLATE_ONLY_SUFFIXES:
        return suffix_of(stem_of(name)) not in _RENDERS_NOT_PROMPT
    if suffix in _DOCUMENT_SUFFIXES and _UPPER_CASE_STEM.fullmatch(stem_of(name_of(path))):
        return False  # ``CREDITS.md``, ``FAQ.md``: named as a project's documents are
    if suffix in PYTHON_SUFFIXES:
        return True
    if any(map(_test_folder, folders)) or not CONFIG_FOLDERS.isdisjoint(folders):
        return False
    return suffix not in _DOCUMENT_SUFFIXES or not in_documents


@functools.cache
def _test_folder(folder: str) -> bool:
    """Whether a folder belongs to a test suite: by a word of its name (``tests``,
    ``test_documents``, ``e2e``)."""
    return folder in TEST_WORDS or not TEST_WORDS.isdisjoint(split_words(folder))


@functools.cache
def _document_folder(folder: str) -> bool:
    """Whether a folder holds documents: by its name, or a word of it (``docs-website``)."""
    return folder in DOCUMENT_FOLDERS or not _DOCUMENT_WORDS.isdisjoint(split_words(folder))


def _says_prompt(name: str, folders: list[str]) -> bool:
    """Whether the file's name or one of its folders says it holds a prompt (a folder by a
    word of its name: ``prompts``, ``system_prompts``, ``SystemPrompts``, not ``teleprompt``)."""
    return bool(_PROMPT.match(name)) or any(map(_folder_says_prompt, folders))


def _documented_prompt(name: str, folders: list[str]) -> bool:
    """Under ``docs/``: whether the name, or a folder's, ends in prompts (``system_prompt.md``,
    ``docs/prompts/``); pages about them (``prompt_tuning/manual_prompt_tuning.md``) are not."""
    if _DOCUMENTED_PROMPT.match(name):
        return True
    return any(split_words(folder)[-1:] in (("prompt",), ("prompts",)) for folder in folders)


@functools.cache
def _folder_says_prompt(folder: str) -> bool:
    """Whether a word of a folder's name starts with ``prompt`` (asked once per folder name)."""
    return any(word.startswith("prompt") for word in split_words(folder))
