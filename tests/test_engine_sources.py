"""The engine with the real source kinds: parse errors, and fixes that keep the file's bytes."""

import codecs

import pytest

from prefixlint.linting.config import Settings
from prefixlint.linting.engine import FixMode, check_file, check_text, fix_text

TRAILING = {"PFX402": {"trailing-whitespace": True}}


@pytest.mark.parametrize(
    ("path", "text", "line", "message"),
    (
        pytest.param("p.j2", "Hi.\nHi {{ x }\n", 2, "Jinja syntax error", id="jinja"),
        pytest.param("p.yaml", "system: hi\nmessages: [1\n", 3, "YAML syntax error", id="yaml"),
        pytest.param("p.json", '{"a": 1,\n}\n', 2, "JSON syntax error", id="json"),
        pytest.param("p.toml", 'a = 1\nb = "\n', 2, "TOML syntax error", id="toml"),
    ),
)
def test_syntax_errors_are_pfx902_with_a_line(path, text, line, message):
    (found,) = check_text(text, path)
    assert (found.code, found.span.line) == ("PFX902", line)
    assert found.message.startswith(message)


@pytest.mark.parametrize(
    ("data", "select", "expected"),
    (
        pytest.param(
            b"Hello there.  \r\nBye.\r\n",
            ("PFX402",),
            b"Hello there.\r\nBye.\r\n",
            id="whitespace fix keeps CRLF",
        ),
        pytest.param(
            b"Hello there.\r\nBye.\r\n",
            ("PFX401",),
            b"Hello there.\nBye.\n",
            id="line-ending fix changes them",
        ),
        pytest.param(
            codecs.BOM_UTF8 + b"Hello there.  \nBye.\n",
            ("PFX402",),
            codecs.BOM_UTF8 + b"Hello there.\nBye.\n",
            id="whitespace fix keeps the BOM",
        ),
        pytest.param(
            codecs.BOM_UTF8 + b"Hello there.\nBye.\n",
            ("PFX403",),
            b"Hello there.\nBye.\n",
            id="BOM fix removes it",
        ),
    ),
)
def test_real_fixes_keep_the_file_bytes(tmp_path, data, select, expected):
    path = tmp_path / "prompt.txt"
    path.write_bytes(data)
    settings = Settings(select=select, options=TRAILING)
    result = check_file(str(path), settings, FixMode(fix=True))
    assert result.error is None
    assert path.read_bytes() == expected
    assert check_file(str(path), settings).diagnostics == []


def test_fixes_after_a_line_ending_fix_write_lf():
    text = "You are helpful.  \r\nToday is {{ current_date }}.\r\nBe brief.\r\n"
    settings = Settings(options=TRAILING)
    outcome = fix_text(text, "a.j2", settings, FixMode(fix=True, unsafe=True), "\r\n")
    assert "\r" not in outcome.text
    assert outcome.error is None
    assert set(outcome.fixed) == {"PFX101", "PFX401", "PFX402"}
