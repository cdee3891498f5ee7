"""Dated provider parameters from ``providers.toml`` and per-model lookups in them."""

from __future__ import annotations

import fnmatch
import re
import sys
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

DATA_PATH = Path(__file__).with_name("providers.toml")


@cache
def provider(name: str) -> dict[str, Any]:
    """The ``[name]`` table of ``providers.toml``."""
    with DATA_PATH.open("rb") as handle:
        table: dict[str, Any] = tomllib.load(handle)[name]
    return table


@lru_cache(maxsize=1024)
def minimum_tokens(name: str, model: str | None) -> int:
    """The documented minimum cacheable prefix of ``model`` at provider ``name``."""
    table = provider(name)
    lowered = (model or "").lower()
    for row in table.get("minimums", ()):
        if any(fnmatch.fnmatchcase(lowered, pattern) for pattern in row["patterns"]):
            return int(row["tokens"])
    return int(table["default_minimum_tokens"])


@lru_cache(maxsize=1024)
def gpt_version(model: str | None) -> tuple[int, int] | None:
    """``(major, minor)`` of a ``gpt-X[.Y]`` model name, ``None`` for anything else."""
    found = re.search(r"gpt-(\d+)(?:\.(\d+))?", (model or "").lower())
    if found is None:
        return None
    return int(found.group(1)), int(found.group(2) or 0)
