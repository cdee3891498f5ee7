"""Fuzzing check and fix: adversarial files and generated texts never give a traceback.

A fixed corpus (``hostile_corpus.py``) runs through the engine in-process and through the
whole command line in a subprocess with a timeout; hypothesis builds texts from the syntax
of every source kind. The ``slow`` part runs more examples and mutates the fixtures.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hostile_cli import run_cli
from hostile_corpus import corpus
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prefixlint.limits import Limits
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import FixMode, check_file

BOUNDED = Settings(limits=Limits(file_seconds=10))
SECONDS_PER_INPUT = 20
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
CORPUS = corpus()


CHECK_ONLY = FixMode()


def _check_bounded(path: Path, mode: FixMode = CHECK_ONLY) -> None:
    started = time.monotonic()
    result = check_file(str(path), BOUNDED, mode)
    assert time.monotonic() - started < SECONDS_PER_INPUT, path.name
    assert result.error is None or "internal error" not in result.error, result.error
    for found in result.diagnostics:
        assert found.span.line >= 1
        if found.code == "PFX902":
            assert found.message


HEAVY_INPUTS = frozenset(
    {"many_keys.json", "many_docs.yaml", "nested_range.jinja", "big_dict.py"}
    | {"tables.toml", "long_line.md", "deep.json", "decorators.py", "attributes.py"}
)


def _corpus_params():
    return [
        pytest.param(name, marks=pytest.mark.slow) if name in HEAVY_INPUTS else name
        for name in sorted(CORPUS)
    ]


@pytest.mark.parametrize("name", _corpus_params())
def test_corpus_input_is_checked_and_fixed_without_a_crash(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(CORPUS[name])
    _check_bounded(path)
    _check_bounded(path, FixMode(fix=True, unsafe=True))


@pytest.mark.parametrize(
    ("jobs", "heavy"), [("3", False), pytest.param("1", True, marks=pytest.mark.slow)]
)
def test_whole_corpus_through_the_command_line(tmp_path, jobs, heavy):
    tree = tmp_path / "tree"
    tree.mkdir()
    for name, data in CORPUS.items():
        if heavy or name not in HEAVY_INPUTS:
            (tree / name).write_bytes(data)
    done = run_cli(["check", "-j", jobs, "--format", "json", "."], tree, tmp_path / "bin", 240)
    assert done.returncode in (0, 1, 2)
    assert "Traceback" not in done.stderr
    assert "internal error" not in done.stderr


FRAGMENTS = {
    "template": [
        "{{",
        "}}",
        "{%",
        "%}",
        "{#",
        "#}",
        "for x in y",
        "endfor",
        "if",
        "endif",
        "(",
        ")",
        "[",
        "]",
        "|",
        "~",
        "'",
        '"',
        " ",
        "\n",
        "\r\n",
        "\r",
        "now",
        "uuid",
        "user_name",
        "{",
        "}",
        "${",
        "{{#a}}",
        "{{/a}}",
        "\ufeff",
        "\u200b",
        "date",
        "-",
        "+",
        "raw",
        "endraw",
        "set",
        "=",
        ",",
        ".",
        "x",
    ],
    "python": [
        "prompt",
        "SYSTEM_PROMPT",
        " = ",
        'f"',
        '"',
        "'",
        "{",
        "}",
        "(",
        ")",
        "[",
        "]",
        "datetime.now()",
        "uuid4()",
        " + ",
        ", ",
        ":",
        "\n",
        "    ",
        "def f():",
        "return ",
        "messages",
        "{'role': 'system', 'content': ",
        "client.chat.",
        "completions.create(",
        "set()",
        "sorted(",
        "import ",
        "time",
        "\\",
        "#",
        "\r\n",
        "lambda",
        "for ",
        " in ",
        "if ",
        "not ",
        "x",
        '"""',
    ],
    "structured": [
        "system",
        "messages",
        "role",
        "content",
        ":",
        " ",
        "\n",
        "  ",
        "-",
        "[",
        "]",
        "{",
        "}",
        ",",
        '"',
        "'",
        "&a",
        "*a",
        "{{ now }}",
        "=",
        "[[t]]",
        "\t",
        "#",
        "|",
        ">",
        "!!str",
        "1",
        "1e999",
        "null",
        "\\u",
        "\r\n",
    ],
    "chat": [
        "{% for message in messages %}",
        "{% endfor %}",
        "{{ message.content }}",
        "{{ message.role }}",
        "{% if add_generation_prompt %}",
        "{% endif %}",
        "{{ bos_token }}",
        "{% set ns = namespace(x=1) %}",
        "{{ ns.x * 3 }}",
        "{{ range(5)|list }}",
        "{{ messages|tojson }}",
        "{{ strftime_now('%Y') }}",
        "{{ raise_exception('no') }}",
        "{% macro m() %}x{% endmacro %}",
        "{{ m() }}",
        "{{ 'a' * 3 }}",
        "\n",
        " ",
        "<|im_start|>",
        "<|im_end|>",
        "{{",
        "}}",
        "{% if tools %}",
        "{{ tools|length }}",
        "{% break %}",
        "{% continue %}",
    ],
}
SUFFIXES = {
    "template": [".txt", ".j2", ".md", ".mustache", ".prompt"],
    "python": [".py"],
    "structured": [".yaml", ".json", ".toml"],
    "chat": [".jinja"],
}


def _texts(kind: str, size: int):
    return st.lists(st.sampled_from(FRAGMENTS[kind]), max_size=size).map("".join)


def _fuzz_one(tmp_path: Path, kind: str, text: str, suffix: str) -> None:
    path = tmp_path / ("chat_template" + suffix if kind == "chat" else "prompt" + suffix)
    path.write_text(text, encoding="utf-8", newline="")
    _check_bounded(path)
    _check_bounded(path, FixMode(fix=True, unsafe=True))


def _examples(count: int):
    return settings(
        max_examples=count,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )


def _fuzz_drawn(tmp_path: Path, kind: str, data, fragments: int) -> None:
    text = data.draw(_texts(kind, fragments))
    _fuzz_one(tmp_path, kind, text, data.draw(st.sampled_from(SUFFIXES[kind])))


@pytest.mark.parametrize("kind", sorted(FRAGMENTS))
@_examples(15)
@given(data=st.data())
def test_generated_texts_never_crash(tmp_path, kind, data):
    _fuzz_drawn(tmp_path, kind, data, 40)


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(FRAGMENTS))
@_examples(300)
@given(data=st.data())
def test_many_generated_texts_never_crash(tmp_path, kind, data):
    _fuzz_drawn(tmp_path, kind, data, 200)


FIXTURE_FILES = sorted(
    p
    for folder in ("templates", "python", "chat_templates")
    for p in (FIXTURES / folder).rglob("*")
    if p.is_file()
)


def _mutate(data: bytes, edits: list[tuple[int, int, int, bytes]]) -> bytes:
    """Apply (kind, position, length, bytes) edits: delete, duplicate or insert."""
    for kind, position, length, inserted in edits:
        at = position % (len(data) + 1)
        if kind == 0:
            data = data[:at] + data[at + length :]
        elif kind == 1:
            data = data[:at] + data[at : at + length] * 3 + data[at:]
        else:
            data = data[:at] + inserted + data[at:]
    return data


@pytest.mark.slow
@pytest.mark.parametrize("fixture", FIXTURE_FILES, ids=lambda p: p.name)
@_examples(40)
@given(
    edits=st.lists(
        st.tuples(
            st.integers(0, 2),
            st.integers(0, 10**6),
            st.integers(1, 64),
            st.sampled_from([b"{{", b"}}", b"(", b"[", b"\r", b"\x00", b"\xff", b"'''", b"{%"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_mutated_fixtures_never_crash(tmp_path, fixture, edits):
    path = tmp_path / fixture.name
    path.write_bytes(_mutate(fixture.read_bytes(), edits))
    _check_bounded(path)
    _check_bounded(path, FixMode(fix=True, unsafe=True))
