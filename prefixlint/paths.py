"""A file path's name, suffix and folders, as ``pathlib.PurePath`` gives them, from the string.

Finding files asks these of every file under a tree; building a path object for each costs
more than the rest of the walk.
"""

from __future__ import annotations


def _parts(path: str) -> list[str]:
    """The names in ``path``, as ``PurePath`` keeps them (empty and ``.`` parts dropped)."""
    return [part for part in path.split("/") if part not in ("", ".")]


def name_of(path: str) -> str:
    """``PurePath(path).name``."""
    parts = _parts(path)
    return parts[-1] if parts else ""


def suffix_of(name: str) -> str:
    """``PurePath(name).suffix`` of a file name: from its last dot, unless the dot starts or
    ends the name."""
    dot = name.rfind(".")
    return name[dot:] if 0 < dot < len(name) - 1 else ""


def stem_of(name: str) -> str:
    """``PurePath(name).stem`` of a file name."""
    suffix = suffix_of(name)
    return name[: -len(suffix)] if suffix else name


def folders_of(path: str) -> list[str]:
    """``PurePath(path).parts[:-1]``, without a leading ``/``."""
    return _parts(path)[:-1]
