"""Settings for a run: ``[tool.prefixlint]`` in the nearest pyproject.toml, then CLI flags.

Keys (all optional)::

    [tool.prefixlint]
    select = ["PFX1", "PFX4"]          # code prefixes or "ALL" (default ["ALL"])
    ignore = ["PFX402"]
    extend-select = ["PFX901"]
    exclude = ["generated/*"]          # fnmatch globs, relative to the pyproject's folder
    tokenizer = "qwen"                 # qwen | qwen-raw | tiktoken:NAME | hf:PATH
    [tool.prefixlint.limits]           # bounds on hostile input (see prefixlint.limits)
    max-depth = 100
    [tool.prefixlint.per-file-ignores]
    "tests/*" = ["PFX101"]
    [tool.prefixlint.PFX301]           # a rule's options (defaults in rules/PFX301.toml)
    min-static-tokens = 256

The nearest pyproject.toml that has a ``[tool.prefixlint]`` table wins (like ruff, a
pyproject.toml without one is passed over). Globs match the path relative to that folder and
the bare file name.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import Any

from prefixlint import registry
from prefixlint.context import SourceError
from prefixlint.limits import DEFAULT_LIMITS, LimitError, Limits, limits_from_table
from prefixlint.nesting import guard_brackets
from prefixlint.tokenizers import DEFAULT_TOKENIZER

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

_LIST_KEYS = ("select", "ignore", "extend-select", "exclude")
_CODE_TABLE = re.compile(r"^PFX\d{3}$")


class ConfigError(Exception):
    """The configuration is invalid; the message is one line that names the file."""


@dataclass(frozen=True)
class Settings:
    """Everything that decides which rules run on a file, and how."""

    select: tuple[str, ...] = ("ALL",)
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    exclude: tuple[str, ...] = ()
    tokenizer: str = DEFAULT_TOKENIZER
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    root: str = "."
    limits: Limits = field(default_factory=Limits)

    def enabled_codes(self, path: str) -> frozenset[str]:
        """The rule codes that apply to ``path`` (selection minus per-file ignores)."""
        enabled = registry.select_codes(self.select, self.ignore, self.extend_select)
        ignored = [
            code
            for pattern, codes in self.per_file_ignores
            if matches_glob(path, pattern, self.root)
            for code in codes
        ]
        if not ignored:
            return enabled
        return frozenset(c for c in enabled if not registry.matches(c, ignored))

    def is_excluded(self, path: str) -> bool:
        return any(matches_glob(path, pattern, self.root) for pattern in self.exclude)


def matches_glob(path: str, pattern: str, root: str = ".") -> bool:
    """Whether ``path`` matches ``pattern`` relative to ``root``, or by its file name alone."""
    pure = PurePath(path)
    try:
        relative = PurePath(os.path.realpath(path)).relative_to(os.path.realpath(root)).as_posix()
    except ValueError:
        relative = pure.as_posix()
    pattern = pattern.rstrip("/")
    return fnmatch.fnmatchcase(relative, pattern) or fnmatch.fnmatchcase(pure.name, pattern)


def validate_selectors(selectors: Sequence[str], where: str) -> tuple[str, ...]:
    """Check that every selector is ``ALL`` or a prefix of a documented rule code."""
    codes = registry.rule_docs()
    for selector in selectors:
        if selector != "ALL" and not any(code.startswith(selector) for code in codes):
            raise ConfigError(f"{where}: unknown rule selector {selector!r}")
    return tuple(selectors)


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has a ``[tool.prefixlint]`` table."""
    start = Path(os.path.realpath(start))  # realpath: a symlink loop does not raise
    folder = start if _is_dir(start) else start.parent
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if _is_file(pyproject) and "prefixlint" in _read_toml(pyproject).get("tool", {}):
            return pyproject
    return None


def _is_file(path: Path) -> bool:
    try:
        return path.is_file()
    except OSError:  # inside a folder we may not enter
        return False


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except OSError:
        return False


def _read_toml(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
        guard_brackets(text, DEFAULT_LIMITS, toml=True)
        return tomllib.loads(text)
    except SourceError as exc:
        raise ConfigError(f"{path}:{exc.line}:{exc.column}: cannot read TOML: {exc}") from None
    except (OSError, ValueError, RecursionError) as exc:  # ValueError: decoding, TOML
        raise ConfigError(f"{path}: cannot read TOML: {exc}") from None


def _string_list(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return tuple(value)


def _rule_options(code: str, table: Any, where: str) -> dict[str, Any]:
    docs = registry.rule_docs()
    if code not in docs:
        raise ConfigError(f"{where}: unknown rule {code!r}")
    if not isinstance(table, dict):
        raise ConfigError(f"{where} must be a table of options")
    defaults = docs[code].options
    for key, value in table.items():
        if key not in defaults:
            known = ", ".join(defaults) or "none"
            raise ConfigError(f"{where}: {code} has no option {key!r} (options: {known})")
        default = defaults[key]
        if type(value) is not type(default) and not (
            isinstance(default, float) and type(value) is int
        ):
            raise ConfigError(
                f"{where}.{key} must be {type(default).__name__}, not {type(value).__name__}"
            )
    return dict(table)


def settings_from_table(table: Mapping[str, Any], source: str, root: str) -> Settings:
    """Build :class:`Settings` from a ``[tool.prefixlint]`` table read from ``source``."""
    values: dict[str, Any] = {"root": root}
    options: dict[str, dict[str, Any]] = {}
    for key, value in table.items():
        where = f"{source}: [tool.prefixlint] {key}"
        if key in _LIST_KEYS:
            items = _string_list(value, where)
            if key != "exclude":
                items = validate_selectors(items, where)
            values[key.replace("-", "_")] = items
        elif key == "tokenizer":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{where} must be a tokenizer spec string")
            values["tokenizer"] = value
        elif key == "per-file-ignores":
            if not isinstance(value, dict):
                raise ConfigError(f"{where} must be a table of glob = [codes]")
            values["per_file_ignores"] = tuple(
                (glob, validate_selectors(_string_list(codes, f"{where}.{glob}"), where))
                for glob, codes in value.items()
            )
        elif key == "limits":
            try:
                values["limits"] = limits_from_table(value, f"{source}: [tool.prefixlint.limits]")
            except LimitError as exc:
                raise ConfigError(str(exc)) from None
        elif _CODE_TABLE.match(key):
            options[key] = _rule_options(key, value, f"{source}: [tool.prefixlint.{key}]")
        else:
            raise ConfigError(f"{source}: unknown key {key!r} in [tool.prefixlint]")
    return Settings(options=options, **values)


def load_settings(start: Path, config: Path | None = None) -> tuple[Settings, Path | None]:
    """Settings from ``config`` or from the nearest pyproject.toml above ``start``."""
    pyproject = config if config is not None else find_pyproject(start)
    if pyproject is None:
        return Settings(root=str(start if _is_dir(start) else start.parent)), None
    data = _read_toml(pyproject)
    table = data.get("tool", {}).get("prefixlint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.prefixlint] must be a table")
    return settings_from_table(table, str(pyproject), str(pyproject.parent)), pyproject


def with_overrides(settings: Settings, **overrides: Any) -> Settings:
    """``settings`` with the CLI's values: ``select`` and ``tokenizer`` replace, lists extend."""
    given = {key: value for key, value in overrides.items() if value not in (None, ())}
    for key in ("select", "ignore", "extend_select"):
        if key in given:
            given[key] = validate_selectors(given[key], f"--{key.replace('_', '-')}")
    for key in ("ignore", "extend_select", "exclude"):
        if key in given:
            given[key] = getattr(settings, key) + tuple(given[key])
    return replace(settings, **given)
