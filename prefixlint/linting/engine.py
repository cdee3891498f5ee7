"""Check texts and files: dispatch to the source kind, apply noqa, fix until stable.

:func:`check_text` is the pure core (text in, diagnostics out); :func:`fix_text` loops fixes
and re-checks like ruff's ``linter.rs`` (at most :data:`MAX_ITERATIONS` passes, stopping with
an error when fixes cycle or when a fix makes the file unparsable); :func:`check_file` adds the
file reading, writing and diffs around them.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from prefixlint import registry, sources
from prefixlint.codes import LINE_ENDINGS, UNPARSABLE
from prefixlint.context import RuleContext, SourceError
from prefixlint.linting.budget import OverBudget, time_budget
from prefixlint.linting.config import Settings
from prefixlint.linting.fixer import apply_edits
from prefixlint.linting.noqa import apply_noqa
from prefixlint.linting.result_cache import ResultCache
from prefixlint.textio import SourceText, UnreadableText, encode, read_source, write_atomic
from prefixlint.tokenizers import TokenizerError
from prefixlint.types import Applicability, Diagnostic, Edit, Fix, Span

MAX_ITERATIONS = 100
_BARE_LF = re.compile(r"(?<!\r)\n")


class UnsupportedFile(Exception):
    """prefixlint has no checker for this kind of file."""


@dataclass(frozen=True)
class FixMode:
    """What to do with fixes: apply them (``fix``), include unsafe ones, or only diff them."""

    fix: bool = False
    unsafe: bool = False
    diff: bool = False

    @property
    def applies_fixes(self) -> bool:
        return self.fix or self.diff

    def allows(self, fix: Fix | None) -> bool:
        if fix is None:
            return False
        if fix.applicability is Applicability.SAFE:
            return True
        return self.unsafe and fix.applicability is Applicability.UNSAFE


@dataclass
class FixOutcome:
    """The text after fixing, what is left to report, how many fixes per code were applied."""

    text: str
    diagnostics: list[Diagnostic]
    fixed: Counter[str] = field(default_factory=Counter)
    error: str | None = None


@dataclass
class FileResult:
    """Everything the CLI needs to report about one file."""

    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    text: str | None = None
    fixed: Counter[str] = field(default_factory=Counter)
    fixed_text: str | None = None
    error: str | None = None
    skipped: str | None = None

    @property
    def final_text(self) -> str | None:
        """The text the remaining diagnostics refer to: the fixed text when fixing."""
        return self.fixed_text if self.fixed_text is not None else self.text

    @property
    def changed(self) -> bool:
        return self.fixed_text is not None and self.fixed_text != self.text

    def diff(self) -> str:
        """A unified diff from the file's text to its fixed text ('' when unchanged)."""
        before, after = self.text, self.fixed_text
        if before is None or after is None or before == after:
            return ""
        lines = difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=self.path,
            tofile=self.path,
        )
        return "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines
        )


def _source_module(path: str, text: str) -> sources.SourceChecker:
    try:
        return sources.source_module(path, text)
    except ValueError:
        raise UnsupportedFile(f"{path}: no checker for this kind of file") from None
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("prefixlint.sources"):
            raise
        raise UnsupportedFile(f"{path}: no checker for this kind of file yet") from None


def _parse_error(path: str, message: str, line: int, column: int) -> Diagnostic:
    span = Span(path, line, column, line, column + 1)
    return registry.diagnostic(UNPARSABLE, message, span)


def check_text(text: str, path: str, settings: Settings | None = None) -> list[Diagnostic]:
    """All enabled diagnostics for ``text``, read from ``path``, sorted and noqa-filtered.

    Raises :class:`UnsupportedFile` when no source kind handles ``path``.
    """
    settings = settings or Settings()
    enabled = settings.enabled_codes(path)
    module = _source_module(path, text)
    ctx = RuleContext(path, enabled, settings.tokenizer, settings.options, settings.limits)
    try:
        found = list(module.check(text, ctx))
    except SourceError as exc:
        found = [_parse_error(path, exc.message, exc.line, exc.column)]
    found = [d for d in found if d.code in enabled]
    return sorted(apply_noqa(found, text, path, enabled), key=lambda d: d.sort_key)


def unreadable_diagnostics(path: str, exc: UnreadableText, settings: Settings) -> list[Diagnostic]:
    """PFX902 for a file whose bytes are not checkable text (unless PFX902 is disabled)."""
    if UNPARSABLE not in settings.enabled_codes(path):
        return []
    return [_parse_error(path, exc.message, exc.line, exc.column)]


def _not_checked(path: str, settings: Settings, message: str) -> FileResult:
    """PFX902 at the top of the file, or an error line when PFX902 is disabled there."""
    if UNPARSABLE not in settings.enabled_codes(path):
        return FileResult(path, error=f"{path}: {message}")
    return FileResult(path, diagnostics=[_parse_error(path, message, 1, 1)])


def crashed_result(path: str, settings: Settings) -> FileResult:
    """The result for a file whose checker process died."""
    return _not_checked(path, settings, "the checker process crashed on this file; not checked")


def _too_slow(path: str, settings: Settings) -> FileResult:
    seconds = settings.limits.file_seconds
    message = f"too slow to check: over {seconds:g} s (limit file-seconds); not checked"
    return _not_checked(path, settings, message)


def _in_line_ending(fix: Fix, newline: str) -> Fix:
    """``fix`` with its inserted line breaks written as ``newline``."""
    if newline == "\n" or not any("\n" in e.replacement for e in fix.edits):
        return fix
    edits = tuple(Edit(e.start, e.end, _BARE_LF.sub(newline, e.replacement)) for e in fix.edits)
    return Fix(edits, fix.applicability, fix.message)


def _applicable_fixes(
    diagnostics: Iterable[Diagnostic], mode: FixMode, settings: Settings, newline: str
) -> dict[Fix, str]:
    fixes: dict[Fix, str] = {}
    for d in diagnostics:
        if d.fix is not None and mode.allows(d.fix) and settings.can_fix(d.code):
            fix = d.fix if d.code == LINE_ENDINGS else _in_line_ending(d.fix, newline)
            fixes.setdefault(fix, d.code)
    return fixes


def _has_parse_error(diagnostics: list[Diagnostic]) -> bool:
    return any(d.code == UNPARSABLE for d in diagnostics)


def fix_text(
    text: str, path: str, settings: Settings, mode: FixMode, newline: str = "\n"
) -> FixOutcome:
    """Apply the fixes ``mode`` allows, re-checking after each pass until nothing changes.

    Inserted line breaks follow ``newline`` (except in the line-ending rule's own fixes). If a
    pass would make the file unparsable, that pass is undone and the loop stops with an error;
    if the fixes cycle or do not settle within :data:`MAX_ITERATIONS`, the original text is
    kept and the outcome carries an error.
    """
    diagnostics = check_text(text, path, settings)
    outcome = FixOutcome(text, diagnostics)
    seen = {text}
    for _ in range(MAX_ITERATIONS):
        fixes = _applicable_fixes(outcome.diagnostics, mode, settings, newline)
        new_text, applied = apply_edits(outcome.text, fixes)
        if not applied or new_text == outcome.text:
            return outcome
        if new_text in seen:
            break
        seen.add(new_text)
        new_diagnostics = check_text(new_text, path, settings)
        codes = sorted({fixes[f] for f in applied})
        if _has_parse_error(new_diagnostics) and not _has_parse_error(outcome.diagnostics):
            outcome.error = (
                f"{path}: a fix for {', '.join(codes)} made the file unparsable; it was not"
                " applied (please report this)"
            )
            return outcome
        outcome.fixed.update(fixes[f] for f in applied)
        outcome.text, outcome.diagnostics = new_text, new_diagnostics
        if LINE_ENDINGS in codes:
            newline = "\n"  # the file now uses LF: later fixes must not bring CRLF back
    return FixOutcome(
        text,
        diagnostics,
        error=f"{path}: fixes did not converge after {len(seen) - 1} passes; nothing was changed"
        " (please report this)",
    )


def check_source(
    source: SourceText,
    path: str,
    settings: Settings,
    mode: FixMode,
    cache: ResultCache | None = None,
) -> FileResult:
    """Check (and with ``mode``, fix in memory) one decoded source, within the file's time
    budget (``limits.file-seconds``: over it, the result is PFX902 "too slow to check").

    Without fixing, a result in ``cache`` is used, and a new one is kept there.
    """
    result = FileResult(path, text=source.text)
    cache = None if mode.applies_fixes else cache
    if cache is not None:
        kept = cache.get(path, source.text)
        if kept is not None:
            result.diagnostics = kept
            return result
    try:
        with time_budget(settings.limits.file_seconds):
            _check_into(result, source, settings, mode)
    except OverBudget:
        return _too_slow(path, settings)
    except UnsupportedFile as exc:
        result.skipped = str(exc)
        return result
    if cache is not None:
        cache.put(path, source.text, result.diagnostics)
    return result


def _check_into(result: FileResult, source: SourceText, settings: Settings, mode: FixMode) -> None:
    path = result.path
    if mode.applies_fixes:
        outcome = fix_text(source.text, path, settings, mode, source.newline)
        result.diagnostics, result.fixed = outcome.diagnostics, outcome.fixed
        result.fixed_text, result.error = outcome.text, outcome.error
    else:
        result.diagnostics = check_text(source.text, path, settings)


def check_file(
    path: str, settings: Settings, mode: FixMode = FixMode(), cache: ResultCache | None = None
) -> FileResult:
    """Read, check and (with ``mode.fix``) rewrite one file; never raises for bad input.

    ``cache`` holds results of earlier runs (see :func:`check_source`).

    Tokenizer load errors propagate (they concern the whole run, not this file).
    """
    try:
        source = read_source(Path(path))
    except UnreadableText as exc:
        return FileResult(path, diagnostics=unreadable_diagnostics(path, exc, settings))
    except OSError as exc:
        return FileResult(path, error=f"{path}: cannot read: {exc.strerror or exc}")
    try:
        result = check_source(source, path, settings, mode, cache)
    except TokenizerError:
        raise
    except Exception as exc:  # a rule's bug must not stop the other files
        return FileResult(path, error=f"{path}: internal error: {type(exc).__name__}: {exc}")
    fixed_text = result.fixed_text
    if mode.fix and not mode.diff and fixed_text is not None and result.changed:
        try:
            write_atomic(Path(path).resolve(), encode(fixed_text, source.encoding))
        except OSError as exc:
            # Nothing was fixed: report what the file on disk still has.
            result = check_source(source, path, settings, FixMode())
            result.error = f"{path}: cannot write, not fixed: {exc.strerror or exc}"
    return result
