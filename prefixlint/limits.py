"""The bounds that keep a check finite on hostile input, and their ``[tool.prefixlint.limits]``.

Every limit has a default that no real prompt source comes near; a file that goes over one is
reported as PFX902 naming the limit, and the run goes on. Users raise or lower them::

    [tool.prefixlint.limits]
    max-depth = 100              # nesting of brackets, mappings and lists (JSON/YAML/TOML/Python)
    max-nodes = 1000000          # values in a prompt file, YAML aliases expanded
    max-python-chain = 1000      # operators, trailers, string literals or elifs in a row
    file-seconds = 20.0          # wall-clock time to check one file (0: no limit)
    template-range = 100000      # items in one range() of a chat template
    template-steps = 2000000     # template lines run in one rendering
    template-seconds = 5.0       # wall-clock time of one rendering
    template-chars = 1000000     # length of any string a template builds, and of its output
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any


class LimitError(Exception):
    """The ``[tool.prefixlint.limits]`` table is invalid (one line)."""


@dataclass(frozen=True)
class Limits:
    """Bounds on the work one file may cause."""

    max_depth: int = 100
    max_nodes: int = 1_000_000
    max_python_chain: int = 1_000
    file_seconds: float = 20.0
    template_range: int = 100_000
    template_steps: int = 2_000_000
    template_seconds: float = 5.0
    template_chars: int = 1_000_000


def _config_key(name: str) -> str:
    return name.replace("_", "-")


def limits_from_table(table: Mapping[str, Any], where: str) -> Limits:
    """:class:`Limits` from a config table; raises :class:`LimitError` naming ``where``."""
    if not isinstance(table, Mapping):
        raise LimitError(f"{where} must be a table of limits")
    known = {_config_key(f.name): f for f in fields(Limits)}
    values = {}
    for key, value in table.items():
        if key not in known:
            raise LimitError(f"{where}: unknown limit {key!r} (limits: {', '.join(known)})")
        wanted = known[key].type
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if not numeric or (wanted == "int" and not isinstance(value, int)) or value < 0:
            raise LimitError(f"{where}.{key} must be a non-negative {wanted}, not {value!r}")
        values[known[key].name] = value
    return Limits(**values)


DEFAULT_LIMITS = Limits()
