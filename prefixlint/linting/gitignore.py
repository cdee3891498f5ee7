"""Files that git ignores, by the ``.gitignore`` files of the folders being walked.

Each ``.gitignore`` applies to its folder and the folders below it, with git's pattern rules
(``pathspec``'s ``GitIgnoreSpec``); a deeper file's patterns (including ``!`` negations) come
after its parents'. The files are read from the top of the git work tree that holds the
walked folder (the folder itself outside a work tree) down to each file's folder. A folder
named on the command line is walked even when git ignores it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec


class GitIgnore:
    """The ``.gitignore`` rules that apply while walking down from ``start``."""

    def __init__(self, start: Path) -> None:
        start = start.resolve()
        self.root = _work_tree(start)
        self._specs: dict[Path, GitIgnoreSpec | None] = {}
        self.off = start != self.root and self._matches(start, is_dir=True)
        """Whether git ignores the walked folder itself: its rules then ignore nothing in it."""

    def ignores(self, path: Path, is_dir: bool = False) -> bool:
        """Whether git would ignore ``path`` (a file or folder under the walked folder)."""
        return not self.off and self._matches(path.resolve(), is_dir)

    def _matches(self, path: Path, is_dir: bool) -> bool:
        if not path.is_relative_to(self.root):
            return False  # a link out of the work tree: its rules are not ours to read
        ignored = False
        folders = [self.root, *(self.root / p for p in _steps(path.parent, self.root))]
        for folder in folders:
            spec = self._spec(folder)
            if spec is None:
                continue
            relative = path.relative_to(folder).as_posix() + ("/" if is_dir else "")
            result = spec.check_file(relative)
            if result.include is not None:
                ignored = result.include
        return ignored

    def _spec(self, folder: Path) -> GitIgnoreSpec | None:
        """The rules of ``folder``'s ``.gitignore``; ``pathspec`` is imported with the first
        one found (a run on files named on the command line reads none)."""
        if folder not in self._specs:
            try:
                lines = (folder / ".gitignore").read_text(encoding="utf-8").splitlines()
            except (OSError, UnicodeDecodeError):
                lines = []
            if lines:
                from pathspec import GitIgnoreSpec

                self._specs[folder] = GitIgnoreSpec.from_lines(lines)
            else:
                self._specs[folder] = None
        return self._specs[folder]


def _work_tree(folder: Path) -> Path:
    """The top of the git work tree that holds ``folder``, or ``folder`` outside one."""
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def _steps(folder: Path, root: Path) -> list[Path]:
    """The folders from below ``root`` down to ``folder``, relative to ``root``."""
    try:
        relative = folder.relative_to(root)
    except ValueError:
        return []
    parts = relative.parts
    return [Path(*parts[: index + 1]) for index in range(len(parts))]
