"""Find the files to check under the paths given on the command line."""

from __future__ import annotations

import os
import stat
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
        ".prefixlint_cache",
        "build",
        "dist",
        "site-packages",
    }
)


_SPECIAL_KINDS = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISDIR, "a folder"),
)


def special_kind(path: str) -> str | None:
    """What ``path`` is when it is not a regular file (None for a regular file, or when it
    cannot be looked at: reading it then reports why)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _SPECIAL_KINDS if test(mode)), "not a regular file")


def _has_venv_marker(folder: Path) -> bool:
    try:
        return (folder / "pyvenv.cfg").exists()
    except OSError:  # a folder we may not enter
        return False


def _skip_dir(folder: Path, settings: Settings) -> bool:
    return (
        folder.name in SKIPPED_DIRS
        or folder.name.endswith(".egg-info")
        or _has_venv_marker(folder)
        or settings.is_excluded(str(folder))
    )


def _walk(root: Path, settings: Settings, notes: list[str]) -> Iterator[str]:
    def unreadable(error: OSError) -> None:
        notes.append(f"{error.filename}: cannot read folder: {error.strerror}; skipped")

    ignore = GitIgnore(root) if settings.respect_gitignore else None
    if ignore is not None and ignore.off:
        ignore = None
    for folder, dirs, files in os.walk(root, onerror=unreadable):
        here = Path(folder)
        dirs[:] = sorted(
            d
            for d in dirs
            if not _skip_dir(here / d, settings)
            and not (ignore and ignore.ignores(here / d, is_dir=True))
        )
        base, relative_folder = str(here), os.path.relpath(here, root)
        for name in sorted(files):
            if not is_checkable(name):
                continue
            path, relative = _joined(base, name), _joined(relative_folder, name)
            if _wanted(path, relative, settings) and not (ignore and ignore.ignores(Path(path))):
                kind = special_kind(path)
                if kind is None:
                    yield path
                else:
                    notes.append(f"{path}: {kind}, not a regular file; skipped")


def _joined(folder: str, name: str) -> str:
    """``str(Path(folder) / name)``, without building paths: the walk joins one per file."""
    return name if folder == "." else os.path.join(folder, name)


def _wanted(path: str, relative: str, settings: Settings) -> bool:
    """Whether a file found under a folder is checked: a prompt by default (or matched by
    ``include``/``extend-include``), and not excluded."""
    if settings.is_excluded(path):
        return False
    if settings.is_included(path):
        return True
    return not settings.include and is_prompt_file(relative)


def collect_files(
    paths: Iterable[str],
    settings: Settings,
    force_exclude: bool = False,
    notes: list[str] | None = None,
) -> tuple[list[str], list[str]]:
    """The files to check under ``paths``, and one error line per path that does not exist.

    Only regular files are checked: pipes, sockets and devices (which could block a read
    forever) and folders that cannot be read are skipped, each with a line added to
    ``notes``.

    Folders are walked (skipping VCS folders, virtual environments, caches, build output,
    what ``.gitignore`` files ignore and the ``exclude`` globs), and the files in them that
    are prompts (:mod:`prefixlint.linting.prompt_files`, or ``include`` globs) are kept. A file
    named explicitly is checked whenever its suffix is checkable, even if excluded or not a
    prompt, unless ``force_exclude`` is set (for pre-commit, which passes every changed file).
    """
    found: dict[str, None] = {}
    errors = []
    notes = [] if notes is None else notes
    for given in paths:
        try:
            _collect_one(given, settings, force_exclude, found, notes)
        except FileNotFoundError:
            errors.append(f"{given}: no such file or directory")
        except OSError as exc:
            errors.append(f"{given}: cannot read: {exc.strerror or exc}")
    return list(found), errors


def _collect_one(
    given: str, settings: Settings, force_exclude: bool, found: dict[str, None], notes: list[str]
) -> None:
    """Add the files of one command-line path to ``found``; raises ``OSError``."""
    path = Path(given)
    kind = special_kind(given)
    if path.is_dir():
        if not (force_exclude and settings.is_excluded(given)):
            found.update(dict.fromkeys(_walk(path, settings, notes)))
    elif kind is not None:
        notes.append(f"{given}: {kind}, not a regular file; skipped")
    elif path.is_file() or path.is_symlink():
        if is_checkable(given) and not (force_exclude and not _wanted(given, given, settings)):
            found[given] = None
    else:
        os.stat(given)  # raises the reason: missing, or a folder we may not enter
        raise FileNotFoundError(given)
