"""The modules of a package that import a module's functions by a relative import.

A helper module often builds a part of a prompt (``def build_system(): ...``) that another
module of its package sends (``from .context import build_system``; ``system=build_system()``).
Read alone, the helper has no request; its importers say where its results go.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

_MAX_SIBLINGS = 200  # a directory with more modules is not searched
_MAX_BYTES = 1_000_000


def importing(path: str) -> tuple[tuple[str, str], ...]:
    """``(path, text)`` of each module in the directory of ``path`` that imports from it
    with ``from .module import ...``."""
    file = Path(path)
    if file.suffix != ".py" or not file.is_file():
        return ()
    pattern = re.compile(rf"^\s*from\s+\.{re.escape(file.stem)}\s+import\b", re.M)
    return tuple(
        (other, text)
        for other, text in _modules(str(file.resolve().parent))
        if Path(other).name != file.name and pattern.search(text)
    )


def _modules(directory: str) -> list[tuple[str, str]]:
    """The Python modules of a directory and their text."""
    paths = sorted(Path(directory).glob("*.py"))
    if len(paths) > _MAX_SIBLINGS:
        return []
    found = []
    for path in paths:
        try:
            stat = path.stat()
        except OSError:
            continue
        if stat.st_size <= _MAX_BYTES:
            text = _read(str(path), stat.st_mtime_ns, stat.st_size)
            if text is not None:
                found.append((str(path), text))
    return found


@lru_cache(maxsize=1024)
def _read(path: str, mtime_ns: int, size: int) -> str | None:
    """The text of a module, read once per version of the file (its time and size)."""
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
