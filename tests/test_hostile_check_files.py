"""Special files, unreadable folders, symlink loops, odd file names, and fixes that fail."""

from __future__ import annotations

import ast
import errno
import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixlint import textio
from prefixlint.cli import main
from prefixlint.linting import engine
from prefixlint.linting.config import ConfigError, Settings, load_settings
from prefixlint.linting.engine import FixMode, check_file, fix_text
from prefixlint.linting.files import collect_files

UNSAFE_FIX = FixMode(fix=True, unsafe=True)


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_fifo_is_skipped_with_a_reason_and_never_read(tmp_path):
    os.mkfifo(tmp_path / "pipe.txt")
    (tmp_path / "ok.txt").write_text("Hello {{ name }}\n")
    notes: list[str] = []
    files, errors = collect_files([str(tmp_path)], Settings(), notes=notes)
    assert files == [str(tmp_path / "ok.txt")]
    assert errors == []
    assert notes == [f"{tmp_path / 'pipe.txt'}: a named pipe (FIFO), not a regular file; skipped"]
    named = _run("check", str(tmp_path / "pipe.txt"))
    assert named.exit_code == 0
    assert "a named pipe (FIFO), not a regular file; skipped" in named.output


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_reading_a_fifo_is_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe.txt")
    (found,) = check_file(str(tmp_path / "pipe.txt"), Settings()).diagnostics
    assert (found.code, found.message) == ("PFX902", "not a regular file; not checked")


def test_a_folder_that_cannot_be_read_is_skipped_with_a_reason(tmp_path, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    (tmp_path / "ok.txt").write_text("Hello\n")
    real_scandir = os.scandir

    def scandir(path="."):
        if Path(path) == locked:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    notes: list[str] = []
    files, errors = collect_files([str(tmp_path)], Settings(), notes=notes)
    assert (files, errors) == ([str(tmp_path / "ok.txt")], [])
    assert notes == [f"{locked}: cannot read folder: Permission denied; skipped"]


def test_a_file_in_a_folder_that_cannot_be_entered_is_a_one_line_error(tmp_path, monkeypatch):
    inside = tmp_path / "locked" / "a.txt"
    real_stat = os.stat

    def stat(path, *args, **kwargs):
        if str(path).startswith(str(tmp_path / "locked")):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    files, errors = collect_files([str(inside)], Settings())
    assert (files, errors) == ([], [f"{inside}: cannot read: Permission denied"])
    load_settings(inside)  # finding the configuration does not raise either


def test_a_symlink_loop_named_on_the_command_line_is_a_one_line_error(tmp_path):
    (tmp_path / "a.txt").symlink_to(tmp_path / "b.txt")
    (tmp_path / "b.txt").symlink_to(tmp_path / "a.txt")
    done = _run("check", str(tmp_path / "a.txt"))
    assert done.exit_code == 2
    assert done.exception is None or isinstance(done.exception, SystemExit)
    assert "a.txt: cannot read: Too many levels of symbolic links" in done.output


def test_deeply_nested_pyproject_is_a_config_error_with_its_line(tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text("[tool.prefixlint]\nx = " + "[" * 1000 + "]" * 1000 + "\n")
    with pytest.raises(ConfigError, match=r"pyproject.toml:2:\d+: cannot read TOML: nested"):
        load_settings(tmp_path)


@pytest.mark.parametrize("output_format", ["sarif", "json", "full", "junit", "github"])
def test_a_file_name_that_is_not_utf8_is_reported(tmp_path, output_format):
    folder = os.fsencode(tmp_path)
    name = os.path.join(folder, b"caf\xe9.txt")
    try:
        with open(name, "wb") as handle:
            handle.write(b"Hello\r\nbye\n")
    except (OSError, UnicodeError):
        pytest.skip("this file system refuses names that are not UTF-8")
    report = tmp_path / "report.out"
    done = _run("check", "--format", output_format, "--output-file", str(report), str(tmp_path))
    assert done.exit_code == 1, done.output
    written = report.read_bytes()
    if output_format == "sarif":
        locations = json.loads(written)["runs"][0]["results"][0]["locations"]
        assert locations[0]["physicalLocation"]["artifactLocation"]["uri"].endswith("caf%E9.txt")
    else:
        assert b"caf\xe9.txt" in written or b"caf\\udce9.txt" in written


CRLF_PYTHON = (
    "from datetime import datetime\n\nfrom openai import OpenAI\n\nclient = OpenAI()\n\n\n"
    "def ask(question):\n"
    '    system = f"""You are helpful.\nToday is {datetime.now():%Y-%m-%d}.\nAnswer briefly."""\n'
    "    return client.chat.completions.create(\n"
    '        model="m",\n'
    "        messages=[\n"
    '            {"role": "system", "content": system},\n'
    '            {"role": "user", "content": question},\n'
    "        ],\n"
    "    )\n"
).replace("\n", "\r\n")


def test_unsafe_pfx101_fix_keeps_a_crlf_python_file_parseable():
    outcome = fix_text(CRLF_PYTHON, "ask.py", Settings(), UNSAFE_FIX, "\r\n")
    assert outcome.error is None
    assert outcome.fixed["PFX101"] == 1
    assert outcome.text != CRLF_PYTHON
    ast.parse(outcome.text)
    assert "\r" not in outcome.text.replace("\r\n", "")
    assert "Today is" not in outcome.text.split("return")[0]


@pytest.mark.parametrize(
    "template",
    [
        "Today is {{ current_date }}.\nYou are helpful.\nAnswer.\n{{ question }}\n",
        "You are helpful. Today is {{ current_date }}. Be brief.\nMore text.\n{{ question }}\n",
        "# System\nYou are helpful.\nDate: {{ today }}\n\n## Rules\nBe brief.\n\n{{ question }}\n",
    ],
)
def test_unsafe_pfx101_fix_of_a_crlf_template_leaves_no_stray_carriage_return(template):
    text = template.replace("\n", "\r\n")
    settings = Settings(ignore=("PFX401",))
    outcome = fix_text(text, "prompt.md", settings, UNSAFE_FIX, "\r\n")
    assert outcome.fixed["PFX101"] >= 1
    assert outcome.text.count("\r") == outcome.text.count("\r\n") == text.count("\r\n")
    assert "\n" not in outcome.text.replace("\r\n", "")


def test_a_failed_write_is_not_counted_as_fixed(tmp_path, monkeypatch):
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes(b"Hello\r\nbye\r\n")

    def refuse(path, data):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(engine, "write_atomic", refuse)
    result = check_file(str(prompt), Settings(), FixMode(fix=True))
    assert result.fixed == {}
    assert result.error == f"{prompt}: cannot write, not fixed: Permission denied"
    assert [d.code for d in result.diagnostics] == ["PFX401"]
    done = _run("fix", str(prompt))
    assert done.exit_code == 2
    assert "fixed" not in done.output.split("cannot write, not fixed")[-1]
    assert prompt.read_bytes() == b"Hello\r\nbye\r\n"


def test_temporary_files_a_killed_fix_left_are_removed_on_the_next_write(tmp_path):
    prompt = tmp_path / "prompt.txt"
    prompt.write_bytes(b"old\n")
    stale = tmp_path / ".prompt.txt.abcd1234.tmp"
    fresh = tmp_path / ".prompt.txt.wxyz9876.tmp"
    other = tmp_path / ".other.txt.abcd1234.tmp"
    for leftover in (stale, fresh, other):
        leftover.write_bytes(b"partial")
    long_ago = time.time() - textio.STALE_TEMPORARY_SECONDS - 5
    for old in (stale, other):
        os.utime(old, (long_ago, long_ago))
    textio.write_atomic(prompt, b"new\n")
    assert prompt.read_bytes() == b"new\n"
    assert not stale.exists()
    assert fresh.exists()  # perhaps another run's, being written now
    assert other.exists()  # another file's
