"""``prefixlint check`` and ``prefixlint fix``: lint and fix prompt files and Python code.

Exit codes: 0 clean, 1 findings (or changes with ``--diff``), 2 usage or input errors.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from prefixlint import registry
from prefixlint.cli.group import Callback, UserError
from prefixlint.linting.config import Settings, load_settings, with_overrides
from prefixlint.linting.engine import (
    FileResult,
    FixMode,
    check_file,
    check_source,
    crashed_result,
    unreadable_diagnostics,
)
from prefixlint.linting.files import collect_files
from prefixlint.linting.result_cache import DEFAULT_FOLDER, ResultCache, cache_folder
from prefixlint.linting.workers import default_workers, map_isolated, usable_cores
from prefixlint.output import FORMATS, Report, render
from prefixlint.output.style import wants_color
from prefixlint.plural import counted
from prefixlint.textio import UnreadableText, read_stream
from prefixlint.tokenizers import DEFAULT_TOKENIZER, get_tokenizer
from prefixlint.types import Diagnostic

if TYPE_CHECKING:
    from prefixlint.auditing.results import CauseTotals

STDIN_DEFAULT_NAME = "stdin.txt"


def _codes(values: Iterable[str]) -> tuple[str, ...]:
    """Flatten repeated, comma-separated option values."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _check_options(command: Callback) -> Callback:
    options = [
        click.argument("paths", nargs=-1, type=click.Path()),
        click.option("--unsafe-fixes", is_flag=True, help="Also apply (or offer) unsafe fixes."),
        click.option("--diff", is_flag=True, help="Print fixes as unified diffs; write nothing."),
        click.option("--select", multiple=True, help="Rule codes or prefixes to enable."),
        click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable."),
        click.option("--extend-select", multiple=True, help="Enable these on top of select."),
        click.option("--exclude", multiple=True, help="Globs of files and folders to skip."),
        click.option("--extend-exclude", multiple=True, help="More globs to skip."),
        click.option(
            "--include", multiple=True, help="Check only files matching these globs in folders."
        ),
        click.option(
            "--extend-include", multiple=True, help="Globs of files to check besides prompts."
        ),
        click.option(
            "--respect-gitignore/--no-respect-gitignore",
            default=None,
            help="Skip files that .gitignore files ignore (default: on).",
        ),
        click.option(
            "--force-exclude", is_flag=True, help="Apply excludes to files named explicitly."
        ),
        click.option(
            "--format",
            "--output-format",
            "output_format",
            type=click.Choice(FORMATS),
            default="full",
            show_default=True,
        ),
        click.option("--output-file", type=click.Path(dir_okay=False), help="Write here."),
        click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings."),
        click.option("--statistics", is_flag=True, help="Count findings per rule instead."),
        click.option("--tokenizer", help="qwen, qwen-raw, tiktoken:NAME or hf:PATH."),
        click.option("--preview", is_flag=True, default=None, help="Also run preview rules."),
        click.option("--fixable", multiple=True, help="Rule codes or prefixes --fix may fix."),
        click.option("--unfixable", multiple=True, help="Rule codes or prefixes not to fix."),
        click.option(
            "--jobs",
            "-j",
            type=click.IntRange(min=0),
            help="Worker processes (0: one per core; default: one per 500 files, at most one"
            " per core).",
        ),
        click.option("--config", type=click.Path(exists=True, dir_okay=False), help="pyproject."),
        click.option(
            "--stdin-filename",
            help="Name (and so kind) of the text read from stdin (given alone, or with '-').",
        ),
        click.option("-q", "--quiet", is_flag=True, help="Print the findings and nothing else."),
        click.option(
            "--with-log",
            type=click.Path(exists=True, dir_okay=False, allow_dash=True),
            help="A request log: rank the findings by the cache misses it measured.",
        ),
        click.option(
            "--show-files", is_flag=True, help="List the files that would be checked, and stop."
        ),
        click.option(
            "--add-noqa", is_flag=True, help="Add noqa directives for every finding, and stop."
        ),
        click.option("--watch", is_flag=True, help="Check again whenever a file changes."),
        click.option("--no-cache", is_flag=True, help="Neither read nor keep cached results."),
        click.option(
            "--cache-dir",
            type=click.Path(file_okay=False),
            help="Where results are kept (default: .prefixlint_cache in the project root).",
        ),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@click.command()
@click.option("--fix", is_flag=True, help="Apply fixes and write the files.")
@_check_options
def check(**options: Any) -> None:
    """Check prompt templates and Python prompt code for prefix-cache breakers."""
    if options.pop("watch"):
        _watch(options)
    sys.exit(_run_check(**options))


@click.command()
@_check_options
def fix(**options: Any) -> None:
    """Fix what can be fixed (same as check --fix)."""
    if options.pop("watch"):
        _watch({**options, "fix": True})
    sys.exit(_run_check(fix=True, **options))


def _watch(options: dict[str, Any]) -> None:
    """Run the check now and after every change, until Ctrl-C (then exit 0)."""
    from prefixlint.linting.watch import watch

    paths = options["paths"] or (".",)
    if "-" in paths:
        raise UserError("--watch cannot read stdin")
    settings = _load(paths, options)

    def run() -> None:
        click.clear()
        click.echo(f"[{time.strftime('%H:%M:%S')}] prefixlint check {' '.join(paths)}")
        try:
            _run_check(**{"fix": False, **options})
        except UserError as exc:
            click.echo(f"error: {exc.message}", err=True)
        click.echo("Watching for changes (Ctrl-C to stop).")

    try:
        watch(lambda: collect_files(paths, settings, options["force_exclude"])[0], run)
    except KeyboardInterrupt:
        sys.exit(0)


def _load(paths: tuple[str, ...], options: dict[str, Any]) -> Settings:
    local = [os.path.realpath(p) for p in paths if p != "-"]  # realpath: loops do not raise
    start = Path(os.path.commonpath(local)) if local else Path.cwd()
    config = Path(options["config"]) if options["config"] else None
    settings, pyproject = load_settings(start, config)
    if pyproject is None and settings.cache_dir is None:
        # No project: results are kept where prefixlint runs (as ruff does), never in a
        # checked folder that may belong to someone else.
        settings = dataclasses.replace(settings, cache_dir=str(Path.cwd() / DEFAULT_FOLDER))
    settings = with_overrides(
        settings,
        select=_codes(options["select"]),
        ignore=_codes(options["ignore"]),
        extend_select=_codes(options["extend_select"]),
        exclude=tuple(options["exclude"]),
        extend_exclude=tuple(options["extend_exclude"]),
        include=tuple(options["include"]),
        extend_include=tuple(options["extend_include"]),
        respect_gitignore=options["respect_gitignore"],
        tokenizer=options["tokenizer"],
        preview=options["preview"],
        fixable=_codes(options["fixable"]),
        unfixable=_codes(options["unfixable"]),
    )
    if settings.tokenizer != DEFAULT_TOKENIZER:
        get_tokenizer(settings.tokenizer)  # fail early, with exit code 2
    return settings


def _check_stdin(settings: Settings, mode: FixMode, filename: str | None) -> FileResult:
    path = filename or STDIN_DEFAULT_NAME
    try:
        source = read_stream(sys.stdin.buffer)
    except UnreadableText as exc:
        return FileResult(path, diagnostics=unreadable_diagnostics(path, exc, settings))
    return check_source(source, path, settings, mode)


def _result_cache(settings: Settings, options: dict[str, Any]) -> ResultCache | None:
    """The on-disk results for this run, unless ``--no-cache`` (or the folder is unwritable)."""
    if options["no_cache"]:
        return None
    try:
        return ResultCache.open(cache_folder(settings, options["cache_dir"]), settings)
    except OSError as exc:
        if not options["quiet"]:
            click.echo(f"warning: results are not cached: {exc.strerror or exc}", err=True)
        return None


def _check_files(
    files: list[str],
    settings: Settings,
    mode: FixMode,
    jobs: int | None,
    cache: ResultCache | None,
) -> list[FileResult]:
    if jobs is None:
        jobs = default_workers(len(files))
    elif jobs == 0:
        jobs = usable_cores()
    if jobs == 1 or len(files) < 2:
        return [check_file(path, settings, mode, cache) for path in files]
    return map_isolated(
        partial(check_file, settings=settings, mode=mode, cache=cache),
        files,
        min(jobs, len(files)),
        partial(crashed_result, settings=settings),
        avoid={str(Path(path).parent) for path in files},
    )


def _log_costs(results: list[FileResult], log: str) -> str:
    """Audit ``log`` against the checked files: each finding linked to a miss gets the log's
    measured cost in its ``extra`` (``log_requests``, ``log_cost_tokens``); returns the
    ranking for the human formats."""
    from prefixlint.auditing import AuditError, AuditOptions, run_audit
    from prefixlint.auditing.source_link import SourceIndex
    from prefixlint.sources.logs import LogReadError

    try:
        report = run_audit(
            [log], AuditOptions(what_if=False), sources=SourceIndex.from_results(results)
        )
    except (AuditError, LogReadError, OSError) as exc:
        raise UserError(f"--with-log {log}: {exc}") from None
    model = report.cache_models[0]
    costs = report.by_source(model)
    for result in results:
        result.diagnostics = [_with_cost(d, costs) for d in result.diagnostics]
    lines = [f"Findings by the cost {log} measured ({model}):"]
    width = len(f"{max((c.cost_tokens for c in costs.values()), default=0):,}")
    for (path, line, code), entry in costs.items():
        requests = counted(entry.requests, "request")
        lines.append(
            f"  {entry.cost_tokens:>{width},} tokens lost, {requests:<12} {path}:{line} {code}"
        )
    if not costs:
        lines.append("  no miss in the log is linked to these files")
    return "\n".join(lines) + "\n"


def _with_cost(
    diagnostic: Diagnostic, costs: dict[tuple[str, int, str], CauseTotals]
) -> Diagnostic:
    entry = costs.get((diagnostic.span.path, diagnostic.span.line, diagnostic.code))
    if entry is None:
        return diagnostic
    extra = {
        **diagnostic.extra,
        "log_requests": entry.requests,
        "log_cost_tokens": entry.cost_tokens,
    }
    return dataclasses.replace(diagnostic, extra=extra)


def _add_noqa(files: list[str], errors: list[str], settings: Settings) -> int:
    """``--add-noqa``: suppress the current findings in place; 2 if a path was bad."""
    from prefixlint.linting.add_noqa import add_noqa_to_file

    added = 0
    for path in files:
        try:
            edit = add_noqa_to_file(path, settings)
        except (OSError, UnreadableText) as exc:
            errors.append(f"{path}: cannot add noqa directives: {exc}")
            continue
        added += edit.added
        for line, reason in edit.refused:
            click.echo(f"warning: {path}:{line}: no noqa directive added: {reason}", err=True)
    for message in errors:
        click.echo(f"error: {message}", err=True)
    click.echo(f"Added {added} noqa directive{'' if added == 1 else 's'}.")
    return 2 if errors else 0


def _show_files(files: list[str], errors: list[str]) -> int:
    """``--show-files``: the files a check would read, one a line; 2 if a path was bad."""
    for message in errors:
        click.echo(f"error: {message}", err=True)
    click.echo("".join(f"{path}\n" for path in sorted(files)), nl=False)
    return 2 if errors else 0


def _statistics(report: Report, as_json: bool) -> str:
    counts = Counter(d.code for d in report.diagnostics)
    fixable = Counter(d.code for d in report.diagnostics if report.fixable(d))
    rows = [
        {
            "code": code,
            "name": registry.doc(code).name,
            "count": count,
            "fixable": fixable[code] > 0,
        }
        for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    ]
    if as_json:
        return json.dumps(rows, indent=2) + "\n"
    width = max((len(str(row["count"])) for row in rows), default=1)
    lines = [
        f"{row['count']:>{width}}\t{row['code']}\t{'[*]' if row['fixable'] else '   '}"
        f" {row['name']}"
        for row in rows
    ]
    return "".join(line + "\n" for line in lines)


def _emit(text: str, output_file: str | None) -> None:
    if output_file:
        try:
            # surrogateescape: a file name that is not UTF-8 is written as its own bytes
            Path(output_file).write_text(text, encoding="utf-8", errors="surrogateescape")
        except OSError as exc:
            raise UserError(f"cannot write {output_file}: {exc.strerror or exc}") from None
    else:
        click.echo(text, nl=False)


def _run_check(
    *, paths: tuple[str, ...], fix: bool, unsafe_fixes: bool, diff: bool, **options: Any
) -> int:
    paths = paths or (("-",) if options["stdin_filename"] else (".",))
    if "-" in paths and len(paths) > 1:
        raise UserError("'-' (stdin) cannot be combined with other paths")
    settings = _load(paths, options)
    mode = FixMode(fix=fix, unsafe=unsafe_fixes, diff=diff)
    errors: list[str] = []
    if paths == ("-",):
        results = [_check_stdin(settings, mode, options["stdin_filename"])]
    else:
        notes: list[str] = []
        files, errors = collect_files(paths, settings, options["force_exclude"], notes)
        if not options["quiet"]:
            for note in notes:
                click.echo(f"warning: {note}", err=True)
        if options["show_files"]:
            return _show_files(files, errors)
        if options["add_noqa"]:
            return _add_noqa(files, errors, settings)
        if not files and not errors and not options["quiet"]:
            click.echo("warning: no files to check under the given paths", err=True)
        cache = None if mode.applies_fixes else _result_cache(settings, options)
        results = _check_files(files, settings, mode, options["jobs"], cache)
    ranking = _log_costs(results, options["with_log"]) if options["with_log"] else None
    errors += [r.error for r in results if r.error]
    skipped = [r.path for r in results if r.skipped]
    for message in errors:
        click.echo(f"error: {message}", err=True)
    if skipped and not options["quiet"]:
        shown = ", ".join(skipped[:5]) + (
            f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
        )
        click.echo(f"warning: not checked, no checker for these kinds of file: {shown}", err=True)
    report = Report(results, mode, errors=len(errors), quiet=options["quiet"], settings=settings)
    changed = [r for r in results if r.changed]

    if diff:
        _emit("".join(r.diff() for r in changed), options["output_file"])
        return 2 if errors else int(bool(changed))
    if fix and paths == ("-",):
        click.echo(results[0].final_text or "", nl=False)
        rendered = render(report, "concise") if report.diagnostics else ""
        click.echo(rendered, nl=False, err=True)
    else:
        color = not options["output_file"] and wants_color(sys.stdout)
        if options["statistics"]:
            rendered = _statistics(report, options["output_format"] == "json")
        else:
            rendered = render(report, options["output_format"], color)
            if ranking is not None and options["output_format"] in ("full", "concise"):
                rendered += ranking
        _emit(rendered, options["output_file"])
    if errors:
        return 2
    return 0 if options["exit_zero"] or not report.diagnostics else 1
