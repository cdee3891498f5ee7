"""check --add-noqa: a directive on each line with findings, where it stays out of the prompt."""

import pytest
from click.testing import CliRunner

from prefixlint.cli import main
from prefixlint.linting.add_noqa import add_noqa
from prefixlint.types import Diagnostic, Span


def _found(path, *lines_codes):
    return [
        Diagnostic(code=code, name="x", message="m", span=Span(path, line, 1, line, 2))
        for line, code in lines_codes
    ]


@pytest.mark.parametrize(
    ("path", "text", "found", "expected", "refused"),
    [
        pytest.param(
            "app.py",
            "a = 1\nprompt = f'Today {now()}'\n",
            [(2, "PFX101")],
            "a = 1\nprompt = f'Today {now()}'  # prefixlint: noqa: PFX101\n",
            [],
            id="python line",
        ),
        pytest.param(
            "app.py",
            "p = f'''Hello\nToday {now()}\n'''\n",
            [(2, "PFX101")],
            "p = f'''Hello\nToday {now()}\n'''\n",
            [2],
            id="python inside a triple-quoted string",
        ),
        pytest.param(
            "app.py",
            "x = f'{uuid4()} {now()}'  # prefixlint: noqa: PFX102\n",
            [(1, "PFX101")],
            "x = f'{uuid4()} {now()}'  # prefixlint: noqa: PFX101, PFX102\n",
            [],
            id="python merged into an existing directive",
        ),
        pytest.param(
            "app.py",
            "x = 1\r\ny = f'{now()}'\r\n",
            [(2, "PFX101"), (2, "PFX104")],
            "x = 1\r\ny = f'{now()}'  # prefixlint: noqa: PFX101, PFX104\r\n",
            [],
            id="python CRLF, two codes",
        ),
        pytest.param(
            "system.j2",
            "You help.\n  Today: {{ now }}\n",
            [(2, "PFX101")],
            "You help.\n{# prefixlint: noqa: PFX101 #}  Today: {{ now }}\n",
            [],
            id="jinja at the start of the line",
        ),
        pytest.param(
            "prompt.yaml",
            "model: m\nsystem: 'Today: {{ now }}'\n",
            [(2, "PFX101")],
            "model: m\nsystem: 'Today: {{ now }}' # prefixlint: noqa: PFX101\n",
            [],
            id="yaml plain line",
        ),
        pytest.param(
            "prompt.yaml",
            "system: |\n  You help.\n  Today: {{ now }}\nmodel: m\n",
            [(3, "PFX101")],
            "system: |\n  You help.\n  Today: {{ now }}\nmodel: m\n",
            [3],
            id="yaml block scalar",
        ),
        pytest.param(
            "system.txt",
            "Today is {date}.\n",
            [(1, "PFX101")],
            "Today is {date}.\n",
            [1],
            id="plain text",
        ),
        pytest.param(
            "prompt.json",
            '{"system": "Today {{ now }}"}\n',
            [(1, "PFX101")],
            '{"system": "Today {{ now }}"}\n',
            [1],
            id="json",
        ),
        pytest.param(
            "app.py",
            "x = f'{now()}'\n",
            [(1, "PFX902"), (1, "PFX901")],
            "x = f'{now()}'\n",
            [],
            id="parse errors and unused directives are not suppressed",
        ),
    ],
)
def test_add_noqa(path, text, found, expected, refused):
    edit = add_noqa(text, path, _found(path, *found))
    assert edit.text == expected
    assert [line for line, _ in edit.refused] == refused
    assert edit.added == (0 if expected == text else 1)


def test_add_noqa_command_suppresses_and_is_idempotent(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "system.j2").write_text("You help.\nToday: {{ current_date }}\nBe brief.\n")
    (tmp_path / "notes.txt").write_text("Today is {current_date}.\nBe brief.\n")
    first = CliRunner().invoke(main, ["check", ".", "--add-noqa"])
    assert first.exit_code == 0
    assert first.stdout == "Added 1 noqa directive.\n"
    assert "notes.txt:1: no noqa directive added" in first.stderr
    assert (tmp_path / "system.j2").read_text().splitlines()[1].startswith("{# prefixlint: noqa")
    assert (tmp_path / "notes.txt").read_text() == "Today is {current_date}.\nBe brief.\n"
    check = CliRunner().invoke(main, ["check", "system.j2"])
    assert check.exit_code == 0, check.stdout
    again = CliRunner().invoke(main, ["check", ".", "--add-noqa"])
    assert again.stdout == "Added 0 noqa directives.\n"
