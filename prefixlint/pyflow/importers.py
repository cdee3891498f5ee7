"""The modules of a package that import a module's functions (``from .context import``, or
``from app.context import`` in the ``app`` package).

A helper module often builds a part of a prompt (``def build_system(): ...``) that another
module of its package sends (``from .context import build_system``; ``system=build_system()``).
Read alone, the helper has no request; its importers say where its results go.
"""

from __future__ import annotations

import os
import re
import time
from functools import lru_cache

from prefixlint.pyflow.prompt_words import may_hold_prompt

_MAX_SIBLINGS = 200  # a directory with more modules is not searched
_MAX_BYTES = 1_000_000
# Unanchored, and module-level ``def`` after a newline: a pattern that begins with a literal
# is searched for as one (re's ``^`` with ``re.M`` tries every line: 8x slower on a package).
# The groups: the package (empty for a relative import), the module, the names.
_PACKAGE_IMPORT = re.compile(
    r"from[ \t]+(?:\.|((?:\w+\.)*\w+)\.)(\w+)[ \t]+import\b[ \t]*(\([^)]*\)|(?:[^\n\\]|\\\n)*)"
)
_COMMENT = re.compile(r"#[^\n]*")
# Two patterns, so that each begins with a literal of several characters (``\ndef``).
_MODULE_FUNCTIONS = (re.compile(r"\ndef[ \t]+(\w+)"), re.compile(r"\nasync[ \t]+def[ \t]+(\w+)"))


def sending_importers(path: str, text: str) -> tuple[tuple[str, str], ...]:
    """``(path, text)`` of each module in the directory of ``path`` that imports one of the
    functions ``text`` (the module at ``path``) defines at module level, and may send a prompt
    (:func:`may_hold_prompt`): only a call of one of them can carry its result into their
    requests."""
    importers = _importers(path)
    if not importers:
        return ()
    lines = "\n" + text
    functions = frozenset(name for pattern in _MODULE_FUNCTIONS for name in pattern.findall(lines))
    return tuple(
        (importer, source)
        for importer, source, names in importers
        if names & functions and _may_send(source)
    )


def package_imports(text: str, package: str) -> dict[str, frozenset[str]]:
    """For each module of the package ``package`` that ``text`` imports from (``from .module
    import ...``, or ``from package.module import ...`` spelled from any root), at a line's
    start after indentation, the names it imports (their original names)."""
    found: dict[str, set[str]] = {}
    for match in _PACKAGE_IMPORT.finditer(text):
        start = match.start()
        if text[text.rfind("\n", 0, start) + 1 : start].strip(" \t"):
            continue
        spelled = match.group(1)
        if spelled is not None and spelled.rpartition(".")[2] != package:
            continue
        names = found.setdefault(match.group(2), set())
        for alias in _COMMENT.sub("", match.group(3)).strip("()").replace("\\\n", " ").split(","):
            words = alias.split()
            if words:
                names.add(words[0])
    return {module: frozenset(names) for module, names in found.items()}


# Whether an importer may send a prompt, asked only of the importers a module needs (the
# index holds each text, so its hash is computed once).
_may_send = lru_cache(maxsize=256)(may_hold_prompt)


def _importers(path: str) -> tuple[tuple[str, str, frozenset[str]], ...]:
    """``(path, text, names)`` of each module in the directory of ``path`` that imports
    ``names`` from it (``os.path`` rather than ``pathlib``: this is asked of every file)."""
    if not path.endswith(".py"):
        return ()
    try:
        modified = os.stat(path).st_mtime_ns
    except OSError:
        return ()
    directory, name = os.path.split(os.path.abspath(path))
    return _index(directory, _listing(directory, modified)).get(name[:-3], ())


# The last listing of each directory: ``(directory's mtime, when listed, listing)``. Checking a
# package asks once per module; a new listing is taken when a file is added or removed, or
# when the module asking changed after the listing was taken.
_LISTINGS: dict[str, tuple[int, int, tuple[tuple[str, int, int], ...]]] = {}
_MAX_LISTINGS = 1024


def _listing(directory: str, asker_modified: int) -> tuple[tuple[str, int, int], ...]:
    try:
        directory_modified = os.stat(directory).st_mtime_ns
    except OSError:
        return ()
    known = _LISTINGS.get(directory)
    if known and known[0] == directory_modified and asker_modified <= known[1]:
        return known[2]
    if len(_LISTINGS) >= _MAX_LISTINGS:
        _LISTINGS.clear()
    listed = time.time_ns()
    versions = _versions(directory)
    _LISTINGS[directory] = (directory_modified, listed, versions)
    return versions


def _versions(directory: str) -> tuple[tuple[str, int, int], ...]:
    """Each module of a directory with its modification time and size (a changed file
    makes a new index)."""
    found = []
    try:
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name.endswith(".py") and entry.is_file():
                    stat = entry.stat()
                    found.append((entry.name, stat.st_mtime_ns, stat.st_size))
    except OSError:
        return ()
    return tuple(sorted(found))


@lru_cache(maxsize=16)  # a run goes through a tree folder by folder
def _index(
    directory: str, versions: tuple[tuple[str, int, int], ...]
) -> dict[str, tuple[tuple[str, str, frozenset[str]], ...]]:
    """For each module name, the modules of the directory that import from it, with the
    names each imports."""
    found: dict[str, list[tuple[str, str, frozenset[str]]]] = {}
    if len(versions) > _MAX_SIBLINGS:
        return {}
    for name, _, size in versions:
        if size > _MAX_BYTES:
            continue
        path = os.path.join(directory, name)
        try:
            with open(path, encoding="utf-8") as file:
                text = file.read()
        except (OSError, UnicodeDecodeError):
            continue
        for module, names in package_imports(text, os.path.basename(directory)).items():
            if module != name[:-3]:
                found.setdefault(module, []).append((path, text, names))
    return {module: tuple(importers) for module, importers in found.items()}
