"""Render the results of a check in one of several formats (one module per format).

Every format module exposes ``render(report: Report, color: bool) -> str``.
"""

from __future__ import annotations

import importlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TypeAlias

from prefixlint.lines import LineIndex
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import FileResult, FixMode
from prefixlint.types import Applicability, Diagnostic

# A JSON object as the machine-readable formats build it.
JsonObject: TypeAlias = dict[str, object]

FORMATS = ("full", "concise", "json", "sarif", "github", "junit")


@dataclass
class Report:
    """The diagnostics of a run, with the texts they point into and what was fixed."""

    results: list[FileResult]
    mode: FixMode = field(default_factory=FixMode)
    errors: int = 0  # paths that could not be checked at all (missing, unreadable)
    quiet: bool = False  # findings only: no closing summary
    settings: Settings = field(default_factory=Settings)  # which codes --fix may fix

    @cached_property
    def diagnostics(self) -> list[Diagnostic]:
        found = [d for r in self.results for d in r.diagnostics]
        return sorted(found, key=lambda d: d.sort_key)

    _indexes: dict[str, LineIndex] = field(default_factory=dict, init=False, repr=False)

    @cached_property
    def _texts(self) -> dict[str, str]:
        return {r.path: r.final_text for r in self.results if r.final_text is not None}

    def line_index(self, path: str) -> LineIndex | None:
        """Positions in the text that ``path``'s diagnostics refer to (None if unread); made
        on first use, so that only files with findings are indexed."""
        index = self._indexes.get(path)
        if index is None and path in self._texts:
            index = self._indexes[path] = LineIndex(self._texts[path])
        return index

    @property
    def paths(self) -> list[str]:
        return [r.path for r in self.results if r.skipped is None]

    @property
    def fixed(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for result in self.results:
            total.update(result.fixed)
        return total

    def fixable(self, diagnostic: Diagnostic) -> bool:
        """Whether ``--fix`` (with this run's ``--unsafe-fixes`` choice) would apply its fix."""
        mode = FixMode(fix=True, unsafe=self.mode.unsafe)
        return mode.allows(diagnostic.fix) and self.settings.can_fix(diagnostic.code)

    def hidden_unsafe(self, diagnostic: Diagnostic) -> bool:
        """Whether its fix is unsafe and would need ``--unsafe-fixes``."""
        fix = diagnostic.fix
        return (
            not self.mode.unsafe and fix is not None and fix.applicability is Applicability.UNSAFE
        )


def summary(report: Report) -> list[str]:
    """ruff-style closing lines for the human formats (none when the report is quiet)."""
    if report.quiet:
        return []
    remaining = len(report.diagnostics)
    fixed = sum(report.fixed.values())
    if not remaining and not fixed:
        if report.errors:
            paths = "path" if report.errors == 1 else "paths"
            return [f"No findings, but {report.errors} {paths} could not be checked."]
        return ["All checks passed!"]
    noun = "finding" if remaining + fixed == 1 else "findings"
    if fixed:
        lines = [f"Found {remaining + fixed} {noun} ({fixed} fixed, {remaining} remaining)."]
    else:
        lines = [f"Found {remaining} {noun}."]
    fixable = sum(report.fixable(d) for d in report.diagnostics)
    if fixable and not report.mode.applies_fixes:
        lines.append(f"[*] {fixable} fixable with the `--fix` option.")
    hidden = sum(report.hidden_unsafe(d) for d in report.diagnostics)
    if hidden:
        fixes = "fix" if hidden == 1 else "fixes"
        lines.append(f"{hidden} hidden {fixes} can be enabled with the `--unsafe-fixes` option.")
    return lines


def render(report: Report, format_name: str, color: bool = False) -> str:
    """``report`` in ``format_name`` (one of :data:`FORMATS`)."""
    if format_name not in FORMATS:
        raise ValueError(f"unknown output format {format_name!r}")
    module = importlib.import_module(f"prefixlint.output.{format_name}")
    render_format: Callable[[Report, bool], str] = module.render
    return render_format(report, color)
