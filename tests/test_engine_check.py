import codecs
import os

import pytest
from engine_fakes import install

from prefixlint import textio
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import MAX_ITERATIONS, FixMode, check_file, check_text, fix_text

FIX = FixMode(fix=True)


@pytest.fixture(autouse=True)
def fake_rules(monkeypatch):
    install(monkeypatch)


def test_check_text_sorted_and_selected():
    found = check_text("@@ TODAY\nx  \n", "p.txt", Settings(ignore=("PFX991",)))
    assert [(d.code, d.span.line, d.span.column) for d in found] == [
        ("PFX992", 1, 1),
        ("PFX990", 2, 2),
    ]


def test_per_file_ignores(tmp_path):
    settings = Settings(per_file_ignores=(("*.txt", ("PFX992",)),), root=str(tmp_path))
    assert check_text("@@\n", str(tmp_path / "a.txt"), settings) == []
    assert [d.code for d in check_text("@@\n", str(tmp_path / "a.j2"), settings)] == ["PFX992"]


def test_source_error_becomes_pfx902():
    (found,) = check_text("ok\n  {{ x }\n", "p.j2")
    assert (found.code, found.span.line, found.span.column) == ("PFX902", 2, 3)
    assert found.message == "unexpected '}'"


@pytest.mark.parametrize(
    ("text", "mode", "expected", "fixed"),
    (
        pytest.param("a  \nb\t\n", FIX, "a\nb\n", {"PFX990": 2}, id="safe fixes"),
        pytest.param("TODAY x\n", FIX, "TODAY x\n", {}, id="unsafe not applied"),
        pytest.param(
            "TODAY x\n", FixMode(fix=True, unsafe=True), " x\n", {"PFX991": 1}, id="unsafe"
        ),
        pytest.param(
            "TODAY  \n",
            FixMode(fix=True, unsafe=True),
            "\n",
            {"PFX990": 1, "PFX991": 1},
            id="second pass fixes what the first revealed",
        ),
        pytest.param(
            "@@\r\nz\r\n", FIX, "x\r\ny\r\nz\r\n", {"PFX992": 1}, id="inserted newlines follow CRLF"
        ),
        pytest.param("@@\nz\n", FIX, "x\ny\nz\n", {"PFX992": 1}, id="LF kept"),
    ),
)
def test_fix_text(text, mode, expected, fixed):
    newline = "\r\n" if "\r\n" in text else "\n"
    outcome = fix_text(text, "p.txt", Settings(), mode, newline)
    assert outcome.text == expected
    assert dict(outcome.fixed) == fixed
    assert outcome.error is None


def test_fix_is_idempotent():
    once = fix_text("a  \n@@ \nTODAY\n", "p.txt", Settings(), FixMode(fix=True, unsafe=True))
    again = fix_text(once.text, "p.txt", Settings(), FixMode(fix=True, unsafe=True))
    assert again.text == once.text
    assert not again.fixed


def test_fixes_that_cycle_are_not_applied():
    outcome = fix_text("AB\n", "p.txt", Settings(), FIX)
    assert outcome.text == "AB\n"
    assert "did not converge" in outcome.error
    assert [d.code for d in outcome.diagnostics] == ["PFX993"]


def test_fix_that_breaks_parsing_is_reverted():
    outcome = fix_text("a  \nBREAK\n", "p.txt", Settings(), FIX)
    assert outcome.text == "a  \nBREAK\n"
    assert "made the file unparsable" in outcome.error
    assert MAX_ITERATIONS == 100


@pytest.mark.parametrize(
    ("data", "expected"),
    (
        pytest.param(b"a  \r\nb\r\n", b"a\r\nb\r\n", id="CRLF"),
        pytest.param(b"a  \nb\r\n", b"a\nb\r\n", id="mixed endings untouched"),
        pytest.param(codecs.BOM_UTF8 + b"a  \n", codecs.BOM_UTF8 + b"a\n", id="UTF-8 BOM"),
        pytest.param("é  \n".encode(), "é\n".encode(), id="UTF-8"),
        pytest.param(
            codecs.BOM_UTF16_LE + "é  \n".encode("utf-16-le"),
            codecs.BOM_UTF16_LE + "é\n".encode("utf-16-le"),
            id="UTF-16 LE",
        ),
        pytest.param(
            codecs.BOM_UTF16_BE + "a \n".encode("utf-16-be"),
            codecs.BOM_UTF16_BE + "a\n".encode("utf-16-be"),
            id="UTF-16 BE",
        ),
        pytest.param(b"no newline at end  ", b"no newline at end", id="no final newline"),
    ),
)
def test_fix_file_keeps_encoding_and_line_endings(tmp_path, data, expected):
    path = tmp_path / "p.txt"
    path.write_bytes(data)
    path.chmod(0o640)
    result = check_file(str(path), Settings(), FIX)
    assert result.error is None
    assert path.read_bytes() == expected
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["p.txt"]


def test_fix_writes_through_a_symlink(tmp_path):
    target = tmp_path / "real.txt"
    target.write_bytes(b"a  \n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    check_file(str(link), Settings(), FIX)
    assert link.is_symlink()
    assert target.read_bytes() == b"a\n"


def test_diff_mode_writes_nothing(tmp_path):
    path = tmp_path / "p.txt"
    path.write_bytes(b"a  \n")
    result = check_file(str(path), Settings(), FixMode(diff=True))
    assert path.read_bytes() == b"a  \n"
    assert result.diff().splitlines()[2:] == ["@@ -1 +1 @@", "-a  ", "+a"]


@pytest.mark.parametrize(
    ("data", "message", "line", "column"),
    (
        pytest.param(
            b"ab\x00cd", "binary file (contains NUL bytes), not checked", 1, 3, id="binary"
        ),
        pytest.param(
            b"ok\nab\xffcd\n", "not valid UTF-8 (byte 0xff at offset 5)", 2, 3, id="invalid UTF-8"
        ),
        pytest.param(
            b"\xc3", "not valid UTF-8 (byte 0xc3 at offset 0)", 1, 1, id="truncated UTF-8"
        ),
    ),
)
def test_unreadable_bytes_are_pfx902(tmp_path, data, message, line, column):
    path = tmp_path / "p.txt"
    path.write_bytes(data)
    result = check_file(str(path), Settings(), FIX)
    (found,) = result.diagnostics
    assert (found.code, found.message, found.span.line, found.span.column) == (
        "PFX902",
        message,
        line,
        column,
    )
    assert path.read_bytes() == data


def test_empty_file_is_clean(tmp_path):
    path = tmp_path / "p.txt"
    path.write_bytes(b"")
    assert check_file(str(path), Settings()).diagnostics == []


def test_huge_file_is_not_read(tmp_path, monkeypatch):
    path = tmp_path / "big.txt"
    with path.open("wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    monkeypatch.setattr(textio.Path, "open", None)  # reading it would raise TypeError
    (found,) = check_file(str(path), Settings()).diagnostics
    assert found.code == "PFX902"
    assert found.message == "file is 52.4 MB, over the 10 MiB limit; not checked"


def test_unreadable_file_is_an_error(tmp_path):
    folder_named_like_a_file = tmp_path / "p.txt"
    folder_named_like_a_file.mkdir()
    result = check_file(str(folder_named_like_a_file), Settings())
    assert result.error.startswith(f"{folder_named_like_a_file}: cannot read:")


def test_rule_crash_is_reported_not_raised(tmp_path, monkeypatch):
    from prefixlint import sources

    def crash(text, ctx):
        raise RuntimeError("boom")

    monkeypatch.setattr(sources, "source_module", lambda p, t: type("M", (), {"check": crash}))
    path = tmp_path / "p.txt"
    path.write_text("x\n")
    assert check_file(str(path), Settings()).error == f"{path}: internal error: RuntimeError: boom"


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read files without read permission")
def test_permission_denied_is_an_error(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("x\n")
    path.chmod(0)
    assert "cannot read" in check_file(str(path), Settings()).error
