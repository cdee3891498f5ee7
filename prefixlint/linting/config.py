"""Settings for a run: ``[tool.prefixlint]`` in the nearest pyproject.toml, then CLI flags.

Keys (all optional)::

    [tool.prefixlint]
    select = ["PFX1", "PFX4"]          # code prefixes or "ALL" (default ["ALL"])
    ignore = ["PFX402"]
    extend-select = ["PFX901"]
    exclude = ["generated/*"]          # fnmatch globs, relative to the pyproject's folder
    extend-exclude = ["old/*"]         # more of them
    include = ["notes/*.md"]           # check only these when walking folders (default: the
    extend-include = ["docs/agent.md"] #   files that are prompts), or these on top
    respect-gitignore = true           # skip what .gitignore files ignore (default true)
    fixable = ["ALL"]                  # the rules whose fixes --fix may apply (default all)
    unfixable = ["PFX101"]             # ...and those whose fixes it must leave alone
    tokenizer = "qwen"                 # qwen | qwen-raw | tiktoken:NAME | hf:PATH
    preview = true                     # also run rules whose status is preview
    cache-dir = ".prefixlint_cache"    # where check results are kept (relative to the root)
    [tool.prefixlint.limits]           # bounds on hostile input (see prefixlint.limits)
    max-depth = 100
    [tool.prefixlint.per-file-ignores]
    "tests/*" = ["PFX101"]
    [tool.prefixlint.PFX301]           # a rule's options (defaults in rules/PFX301.toml)
    min-static-tokens = 256

Command-line selection is a second layer on top of the file's, as in ruff: ``--select``
starts over (``--select PFX402`` runs PFX402 even where the file ignores it), ``--ignore`` and
``--extend-select`` change the file's selection. ``--fixable`` and ``--unfixable`` layer over
``fixable`` and ``unfixable`` the same way.

The nearest pyproject.toml that has a ``[tool.prefixlint]`` table wins (like ruff, a
pyproject.toml without one is passed over). Globs match the path relative to that folder and
the bare file name.
"""

from __future__ import annotations

import fnmatch
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path, PurePath
from typing import Any

from prefixlint import registry
from prefixlint.context import SourceError
from prefixlint.limits import DEFAULT_LIMITS, LimitError, Limits, limits_from_table
from prefixlint.sources.nesting import guard_brackets
from prefixlint.tokenizers import DEFAULT_TOKENIZER

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

_LIST_KEYS = ("select", "ignore", "extend-select", "exclude", "fixable", "unfixable")
_GLOB_KEYS = ("exclude", "extend-exclude", "include", "extend-include")
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
    extend_exclude: tuple[str, ...] = ()
    include: tuple[str, ...] = ()
    extend_include: tuple[str, ...] = ()
    respect_gitignore: bool = True
    tokenizer: str = DEFAULT_TOKENIZER
    preview: bool = False
    fixable: tuple[str, ...] = ("ALL",)
    unfixable: tuple[str, ...] = ()
    command_line: registry.Selection | None = None
    command_line_fixable: registry.Selection | None = None
    options: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    root: str = "."
    limits: Limits = field(default_factory=Limits)
    cache_dir: str | None = None

    def enabled_codes(self, path: str) -> frozenset[str]:
        """The rule codes that apply to ``path`` (selection minus per-file ignores)."""
        enabled = self._selected_codes
        ignored = [
            code
            for pattern, codes in self.per_file_ignores
            if matches_glob(path, pattern, self.root)
            for code in codes
        ]
        if not ignored:
            return enabled
        return frozenset(c for c in enabled if not registry.matches(c, ignored))

    def can_fix(self, code: str) -> bool:
        """Whether ``--fix`` may apply fixes of ``code`` (a longer prefix wins, ruff-style)."""
        return code in self._fixable_codes

    @cached_property
    def _selected_codes(self) -> frozenset[str]:
        """The codes the selection layers enable, before per-file ignores."""
        layers = [registry.Selection(self.select, self.ignore, self.extend_select)]
        if self.command_line is not None:
            layers.append(self.command_line)
        return registry.resolve_selection(layers, preview=self.preview)

    @cached_property
    def _fixable_codes(self) -> frozenset[str]:
        layers = [registry.Selection(self.fixable, self.unfixable)]
        if self.command_line_fixable is not None:
            layers.append(self.command_line_fixable)
        return registry.resolve_selection(layers, preview=True)

    def is_excluded(self, path: str) -> bool:
        patterns = (*self.exclude, *self.extend_exclude)
        return any(matches_glob(path, pattern, self.root) for pattern in patterns)

    def is_included(self, path: str) -> bool:
        """Whether ``path`` matches an ``include`` or ``extend-include`` glob."""
        patterns = (*self.include, *self.extend_include)
        return any(matches_glob(path, pattern, self.root) for pattern in patterns)


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


def _read_toml(path: Path) -> dict[str, Any]:
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
        if key in _LIST_KEYS or key in _GLOB_KEYS:
            items = _string_list(value, where)
            if key not in _GLOB_KEYS:
                items = validate_selectors(items, where)
            values[key.replace("-", "_")] = items
        elif key == "respect-gitignore":
            if not isinstance(value, bool):
                raise ConfigError(f"{where} must be true or false")
            values["respect_gitignore"] = value
        elif key == "tokenizer":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{where} must be a tokenizer spec string")
            values["tokenizer"] = value
        elif key == "cache-dir":
            if not isinstance(value, str) or not value:
                raise ConfigError(f"{where} must be a folder path string")
            values["cache_dir"] = value
        elif key == "preview":
            if not isinstance(value, bool):
                raise ConfigError(f"{where} must be true or false")
            values["preview"] = value
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


def with_overrides(
    settings: Settings,
    *,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    extend_select: Sequence[str] = (),
    fixable: Sequence[str] = (),
    unfixable: Sequence[str] = (),
    **overrides: Any,
) -> Settings:
    """``settings`` with the command line's values.

    Rule selection, and the choice of fixable rules, become a second layer (see the module
    docstring); ``exclude`` extends the file's globs; other values (``tokenizer``,
    ``preview``) replace the file's when given.
    """
    given = {key: value for key, value in overrides.items() if value not in (None, ())}
    for key in ("exclude", "extend_exclude", "extend_include"):
        if key in given:
            given[key] = getattr(settings, key) + tuple(given[key])
    if fixable or unfixable:
        given["command_line_fixable"] = registry.Selection(
            validate_selectors(fixable, "--fixable") if fixable else None,
            validate_selectors(unfixable, "--unfixable"),
        )
    if select or ignore or extend_select:
        given["command_line"] = registry.Selection(
            validate_selectors(select, "--select") if select else None,
            validate_selectors(ignore, "--ignore"),
            validate_selectors(extend_select, "--extend-select"),
        )
    return replace(settings, **given)
