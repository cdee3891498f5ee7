"""Find the files to check under the paths given on the command line."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from prefixlint.linting.config import Settings
from prefixlint.linting.gitignore import GitIgnore
from prefixlint.linting.prompt_files import is_prompt_file
from prefixlint.sources import is_checkable

SKIPPED_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "node_modules",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "build",
        "dist",
        "site-packages",
    }
)


def _skip_dir(folder: Path, settings: Settings) -> bool:
    return (
        folder.name in SKIPPED_DIRS
        or folder.name.endswith(".egg-info")
        or (folder / "pyvenv.cfg").exists()
        or settings.is_excluded(str(folder))
    )


def _walk(root: Path, settings: Settings) -> Iterator[str]:
    ignore = GitIgnore(root) if settings.respect_gitignore else None
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if not _skip_dir(here / d, settings)
            and not (ignore and ignore.ignores(here / d, is_dir=True))
        )
        for name in sorted(files):
            path = here / name
            if (
                is_checkable(name)
                and _wanted(path, path.relative_to(root), settings)
                and not (ignore and ignore.ignores(path))
            ):
                yield str(path)


def _wanted(path: Path, relative: Path, settings: Settings) -> bool:
    """Whether a file found under a folder is checked: a prompt by default (or matched by
    ``include``/``extend-include``), and not excluded."""
    if settings.is_excluded(str(path)):
        return False
    if settings.is_included(str(path)):
        return True
    return not settings.include and is_prompt_file(str(relative))


def collect_files(
    paths: Iterable[str], settings: Settings, force_exclude: bool = False
) -> tuple[list[str], list[str]]:
    """The files to check under ``paths``, and one error line per path that does not exist.

    Folders are walked (skipping VCS folders, virtual environments, caches, build output,
    what ``.gitignore`` files ignore and the ``exclude`` globs), and the files in them that
    are prompts (:mod:`prefixlint.linting.prompt_files`, or ``include`` globs) are kept. A file
    named explicitly is checked whenever its suffix is checkable, even if excluded or not a prompt,
    unless ``force_exclude`` is set (for pre-commit, which passes every changed file).
    """
    found: dict[str, None] = {}
    errors = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            if not (force_exclude and settings.is_excluded(given)):
                found.update(dict.fromkeys(_walk(path, settings)))
        elif path.is_file() or path.is_symlink():
            if is_checkable(given) and not (force_exclude and not _wanted(path, path, settings)):
                found[given] = None
        else:
            errors.append(f"{given}: no such file or directory")
    return list(found), errors
