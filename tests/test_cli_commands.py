import json

import pytest
from click.testing import CliRunner

from prefixlint import registry
from prefixlint.cli import main


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_rule_text_is_the_toml_documentation():
    result = run("rule", "PFX901")
    assert result.exit_code == 0
    assert result.stdout == registry.doc("PFX901").render_markdown()


def test_rule_json():
    data = json.loads(run("rule", "pfx902", "--format", "json").stdout)
    assert (data["code"], data["name"], data["fix"]) == ("PFX902", "unparsable-source", "none")
    assert data["explanation"].startswith("# unparsable-source (PFX902)")
    assert (data["status"], data["since"]) == ("stable", "0.1.0")
    assert "Status: stable, since prefixlint 0.1.0." in data["explanation"]


def test_unknown_rule_exits_2():
    result = run("rule", "PFX000")
    assert result.exit_code == 2
    assert result.stderr == "Error: unknown rule code 'PFX000'; see `prefixlint rules`\n"


def test_rules_lists_every_documented_rule():
    table = run("rules").stdout.splitlines()
    assert [line.split()[0] for line in table] == list(registry.rule_docs())
    rows = json.loads(run("rules", "--format", "json").stdout)
    assert [row["code"] for row in rows] == list(registry.rule_docs())
    assert {row["status"] for row in rows} <= set(registry.RULE_STATUSES)


def test_tokens_of_one_text():
    result = run("tokens", "Hello world\\n\\nBye")
    assert result.exit_code == 0
    assert result.stdout == "Hello|·world|↵\n↵\n|By|e\n\n5 tokens (qwen)\n"


def test_tokens_of_a_file(tmp_path):
    path = tmp_path / "p.txt"
    path.write_text("a b")
    assert run("tokens", str(path)).stdout.startswith("a|·b\n")


def test_tokens_raw_keeps_backslashes():
    assert run("tokens", "--raw", "a\\nb").stdout.splitlines()[0] == "a|\\n|b"


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    (
        pytest.param(
            "You are helpful.\\n\\nToday is Monday.",
            "You are helpful.\\nToday is Monday.",
            [
                "first different character: offset 17 (line 2, column 1)",
                "first different token: #3 (engine block 0)",
                "  first: '.↵↵'",
                "  second: '.↵'",
                "shared prefix: 3 tokens; 0 in full blocks of 16",
            ],
            id="blank line merges with the full stop",
        ),
        pytest.param(
            "word " * 40 + "A",
            "word " * 40 + "B",
            [
                "first different token: #40 (engine block 2)",
                "shared prefix: 40 tokens; 32 in full blocks of 16",
            ],
            id="block index",
        ),
        pytest.param(
            "same", "same", ["identical texts: the whole prompt is a shared prefix"], id="identical"
        ),
    ),
)
def test_tokens_divergence(first, second, expected):
    lines = run("tokens", first, second).stdout.splitlines()
    for line in expected:
        assert line in lines


def test_tokens_bad_tokenizer_exits_2():
    result = run("tokens", "x", "--tokenizer", "tiktoken:nope")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: unknown tiktoken encoding 'nope'")


def test_unreadable_tokens_file_exits_2(tmp_path):
    path = tmp_path / "bin.txt"
    path.write_bytes(b"\x00")
    result = run("tokens", str(path))
    assert result.exit_code == 2
    assert result.stderr == f"Error: {path}:1:1: binary file (contains NUL bytes), not checked\n"
