"""The ``prefixlint`` command line: check, fix, rule, rules, tokens, audit, replay.

Exit codes: 0 clean, 1 findings (or changes with ``--diff``), 2 usage or input errors.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import ClassVar

import click

from prefixlint import registry
from prefixlint.config import ConfigError, Settings, load_settings, with_overrides
from prefixlint.engine import (
    FileResult,
    FixMode,
    check_file,
    check_source,
    crashed_result,
    unreadable_diagnostics,
)
from prefixlint.files import collect_files
from prefixlint.output import FORMATS, Report, render
from prefixlint.output.style import to_text, wants_color
from prefixlint.textio import UnreadableText, decode, read_stream
from prefixlint.tokenizers import DEFAULT_TOKENIZER, TokenizerError, get_tokenizer
from prefixlint.tokenview import (
    divergence,
    model_text,
    render_tokens,
    token_pieces,
    unescape,
    visible,
    window,
)
from prefixlint.workers import map_isolated

STDIN_DEFAULT_NAME = "stdin.txt"


class UserError(click.ClickException):
    """A usage or input error: printed as one line, exit code 2."""

    exit_code = 2


class PrefixlintGroup(click.Group):
    """Turns configuration and tokenizer errors from any command into :class:`UserError`.

    ``audit`` and ``replay`` are imported only when used, so ``check`` starts fast.
    """

    lazy_commands: ClassVar[dict[str, tuple[str, str]]] = {
        "audit": ("prefixlint.cli_audit", "audit"),
        "replay": ("prefixlint.cli_replay", "replay"),
    }

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted([*super().list_commands(ctx), *self.lazy_commands])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in self.lazy_commands:
            module, attribute = self.lazy_commands[name]
            return getattr(importlib.import_module(module), attribute)
        return super().get_command(ctx, name)

    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except (ConfigError, TokenizerError) as exc:
            raise UserError(str(exc)) from None
        except BrokenPipeError:
            # The reader went away (``| head``): stop quietly, like other filters do.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(1)


@click.group(cls=PrefixlintGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="prefixlint")
def main() -> None:
    """Keep prompt prefixes stable so that prefix caches hit."""


def _codes(values: Iterable[str]) -> tuple[str, ...]:
    """Flatten repeated, comma-separated option values."""
    return tuple(part.strip() for value in values for part in value.split(",") if part.strip())


def _check_options(command: Callable) -> Callable:
    options = [
        click.argument("paths", nargs=-1, type=click.Path()),
        click.option("--unsafe-fixes", is_flag=True, help="Also apply (or offer) unsafe fixes."),
        click.option("--diff", is_flag=True, help="Print fixes as unified diffs; write nothing."),
        click.option("--select", multiple=True, help="Rule codes or prefixes to enable."),
        click.option("--ignore", multiple=True, help="Rule codes or prefixes to disable."),
        click.option("--extend-select", multiple=True, help="Enable these on top of select."),
        click.option("--exclude", multiple=True, help="Globs of files and folders to skip."),
        click.option(
            "--force-exclude", is_flag=True, help="Apply excludes to files named explicitly."
        ),
        click.option(
            "--format",
            "output_format",
            type=click.Choice(FORMATS),
            default="full",
            show_default=True,
        ),
        click.option("--output-file", type=click.Path(dir_okay=False), help="Write here."),
        click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings."),
        click.option("--statistics", is_flag=True, help="Count findings per rule instead."),
        click.option("--tokenizer", help="qwen, qwen-raw, tiktoken:NAME or hf:PATH."),
        click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True),
        click.option("--config", type=click.Path(exists=True, dir_okay=False), help="pyproject."),
        click.option("--stdin-filename", help="Name (and so kind) of the text read from '-'."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@main.command()
@click.option("--fix", is_flag=True, help="Apply fixes and write the files.")
@_check_options
def check(**options) -> None:
    """Check prompt templates and Python prompt code for prefix-cache breakers."""
    sys.exit(_run_check(**options))


@main.command()
@_check_options
def fix(**options) -> None:
    """Fix what can be fixed (same as ``check --fix``)."""
    sys.exit(_run_check(fix=True, **options))


def _load(paths: tuple[str, ...], options: dict) -> Settings:
    local = [os.path.realpath(p) for p in paths if p != "-"]  # realpath: loops do not raise
    start = Path(os.path.commonpath(local)) if local else Path.cwd()
    config = Path(options["config"]) if options["config"] else None
    settings, _ = load_settings(start, config)
    settings = with_overrides(
        settings,
        select=_codes(options["select"]),
        ignore=_codes(options["ignore"]),
        extend_select=_codes(options["extend_select"]),
        exclude=tuple(options["exclude"]),
        tokenizer=options["tokenizer"],
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


def _check_files(files: list[str], settings: Settings, mode: FixMode, jobs: int):
    if jobs == 1 or len(files) < 2:
        return [check_file(path, settings, mode) for path in files]
    return map_isolated(
        partial(check_file, settings=settings, mode=mode),
        files,
        min(jobs, len(files)),
        partial(crashed_result, settings=settings),
        avoid={str(Path(path).parent) for path in files},
    )


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


def _run_check(*, paths, fix: bool, unsafe_fixes: bool, diff: bool, **options) -> int:
    paths = paths or (".",)
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
        for note in notes:
            click.echo(f"warning: {note}", err=True)
        if not files and not errors:
            click.echo("warning: no files to check under the given paths", err=True)
        results = _check_files(files, settings, mode, options["jobs"])
    errors += [r.error for r in results if r.error]
    skipped = [r.path for r in results if r.skipped]
    for message in errors:
        click.echo(f"error: {message}", err=True)
    if skipped:
        shown = ", ".join(skipped[:5]) + (
            f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
        )
        click.echo(f"warning: not checked, no checker for these kinds of file: {shown}", err=True)
    report = Report(results, mode, errors=len(errors))
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
        _emit(rendered, options["output_file"])
    if errors:
        return 2
    return 0 if options["exit_zero"] or not report.diagnostics else 1


@main.command()
@click.argument("code")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text")
def rule(code: str, output_format: str) -> None:
    """Explain a rule: what it flags, why it matters, how it is fixed."""
    try:
        doc = registry.doc(code.upper())
    except KeyError:
        raise UserError(f"unknown rule code {code!r}; see `prefixlint rules`") from None
    if output_format == "json":
        data = {
            "code": doc.code,
            "name": doc.name,
            "summary": doc.summary,
            "severity": doc.severity.value,
            "fix": doc.fix,
            "explanation": doc.render_markdown(),
            "options": doc.options,
            "sources": sorted(registry.registered_codes().get(doc.code, ())),
        }
        click.echo(json.dumps(data, indent=2))
    elif wants_color(sys.stdout):
        from rich.console import Console
        from rich.markdown import Markdown

        Console().print(Markdown(doc.render_markdown()))
    else:
        click.echo(doc.render_markdown(), nl=False)


@main.command(name="rules")
@click.option("--format", "output_format", type=click.Choice(["table", "json"]), default="table")
def list_rules(output_format: str) -> None:
    """List every rule with its code, name, fix availability and summary."""
    docs = registry.rule_docs().values()
    if output_format == "json":
        rows = [
            {
                "code": d.code,
                "name": d.name,
                "severity": d.severity.value,
                "fix": d.fix,
                "summary": d.summary,
            }
            for d in docs
        ]
        click.echo(json.dumps(rows, indent=2))
        return
    width = max((len(d.name) for d in docs), default=4)
    for d in docs:
        click.echo(f"{d.code}  {d.name:<{width}}  fix:{d.fix:<9}  {d.summary}")


def _text_argument(value: str, raw: bool) -> tuple[str, str]:
    """``(label, text)``: a file's contents if ``value`` names a file, else the value itself."""
    path = Path(value)
    if path.is_file():
        try:
            return value, decode(path.read_bytes()).text
        except UnreadableText as exc:
            raise UserError(f"{value}:{exc.line}:{exc.column}: {exc.message}") from None
        except OSError as exc:
            raise UserError(f"{value}: cannot read: {exc.strerror or exc}") from None
    return "text", value if raw else unescape(value)


@main.command()
@click.argument("first")
@click.argument("second", required=False)
@click.option("--tokenizer", "spec", default=DEFAULT_TOKENIZER, show_default=True)
@click.option("--block-size", type=click.IntRange(min=1), default=16, show_default=True)
@click.option("--raw", is_flag=True, help="Take TEXT literally (no \\n, \\t, \\uXXXX escapes).")
def tokens(first: str, second: str | None, spec: str, block_size: int, raw: bool) -> None:
    """Show the token boundaries of TEXT_OR_FILE, or where two texts stop sharing a prefix.

    Literal TEXT understands \\n, \\r, \\t, \\\\, \\xNN and \\uNNNN escapes.
    """
    tokenizer = get_tokenizer(spec)
    color = wants_color(sys.stdout)
    label_a, text_a = _text_argument(first, raw)
    if second is None:
        shown = model_text(text_a, tokenizer)
        pieces = token_pieces(shown, tokenizer)
        lines = [render_tokens(pieces, color), "", f"{len(pieces)} tokens ({tokenizer.name})"]
        if shown != text_a:
            lines.append("note: the tokenizer normalises this text (NFC) before encoding")
        click.echo(to_text("\n".join(lines) + "\n", color), nl=False)
        return
    label_b, text_b = _text_argument(second, raw)
    if label_a == label_b == "text":
        label_a, label_b = "first", "second"
    found = divergence(text_a, text_b, tokenizer, block_size)
    click.echo(f"tokenizer: {tokenizer.name}, block size {block_size}")
    click.echo(f"{label_a}: {found.tokens_a} tokens; {label_b}: {found.tokens_b} tokens")
    if found.char_offset is None:
        click.echo("identical texts: the whole prompt is a shared prefix")
        return
    click.echo(
        f"first different character: offset {found.char_offset}"
        f" (line {found.line}, column {found.column})"
    )
    click.echo(f"  {label_a}: {window(text_a, found.char_offset)}")
    click.echo(f"  {label_b}: {window(text_b, found.char_offset)}")
    if found.token_index is None:
        click.echo("token sequences are identical (the tokenizer normalises the difference away)")
        return
    shown_a, shown_b = model_text(text_a, tokenizer), model_text(text_b, tokenizer)
    offsets_a = tokenizer.offsets(shown_a)
    index = found.token_index
    click.echo(f"first different token: #{index} (engine block {found.block_index})")
    for label, shown, offsets in (
        (label_a, shown_a, offsets_a),
        (label_b, shown_b, tokenizer.offsets(shown_b)),
    ):
        piece = shown[slice(*offsets[index])] if index < len(offsets) else None
        click.echo(f"  {label}: " + (f"'{visible(piece, False)}'" if piece else "(end of text)"))
    if index < len(offsets_a) and offsets_a[index][0] < found.char_offset:
        before = found.char_offset - offsets_a[index][0]
        click.echo(
            f"  the token starts {before} character(s) before the first difference:"
            " BPE merged the changed text with what precedes it"
        )
    click.echo(
        f"shared prefix: {found.shared_tokens} tokens;"
        f" {found.reusable_block_tokens} in full blocks of {block_size}"
    )
