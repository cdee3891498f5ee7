"""``--redact``: no output of an audit carries the log's text, only digests."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from prefixlint.auditing.redact import digest, redact_reason
from prefixlint.cli.audit import audit

SECRETS = ("QUOKKASECRET", "PLATYPUSQUESTION", "WOMBATSESSION", "NUMBATKEY", "ECHIDNATOOL")


def request(day: int, question: str) -> dict:
    return {
        "session_id": "WOMBATSESSION-7",
        "timestamp": 1_700_000_000 + 60 * day,
        "request": {
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": f"Today is 2024-05-0{day}. You are QUOKKASECRET."},
                {"role": "user", "content": f"PLATYPUSQUESTION {question}"},
            ],
            "tools": [{"type": "function", "function": {"name": "ECHIDNATOOL", "parameters": {}}}],
        },
    }


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "log.jsonl"
    lines = [
        request(1, "one"),
        request(2, "two"),
        request(2, "three"),
        {"NUMBATKEY": 1, "other": 2},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def outputs(tmp_path, log, *extra: str) -> dict[str, str]:
    """Every output of one audit: terminal, JSON, HTML and the token dump."""
    found = {}
    for name, args in (
        ("terminal", ["--skipped", "--show-text"]),
        ("json", ["--format", "json", "--show-text"]),
    ):
        html, dump = tmp_path / f"{name}.html", tmp_path / f"{name}.dump"
        result = CliRunner().invoke(
            audit, [str(log), *args, "--html", str(html), "--dump-tokens", str(dump), *extra]
        )
        assert result.exit_code == 0, result.output
        found[name] = result.output
        found[f"{name} html"] = html.read_text()
        found[f"{name} dump"] = dump.read_text()
    return found


def test_without_redact_the_outputs_show_the_log(tmp_path, log):
    found = outputs(tmp_path, log)
    for name in ("terminal", "json", "json html"):
        assert "QUOKKASECRET" in found[name] or "2024-05-0" in found[name], name
    assert "NUMBATKEY" in found["terminal"] and "NUMBATKEY" in found["json"]
    assert "WOMBATSESSION" in found["json"]
    assert all("tokens" in json.loads(line) for line in found["json dump"].splitlines())


def test_redact_keeps_every_output_free_of_logged_text(tmp_path, log):
    found = outputs(tmp_path, log, "--redact")
    for name, text in found.items():
        for secret in (*SECRETS, "2024-05-0"):
            assert secret not in text, (name, secret)
    data = json.loads(found["json"])
    assert data["summary"]["requests"] == 3
    assert all(r["session_id"].startswith("sha256:") for r in data["requests"])
    examples = [e for causes in data["examples"].values() for es in causes.values() for e in es]
    assert examples and all(e["before"].startswith("sha256:") for e in examples)
    assert data["skipped"][0]["reason"].startswith("unknown format (keys: sha256:")
    # Token ids decode back to the prompt: the dump holds block ids instead.
    for line in found["json dump"].splitlines():
        entry = json.loads(line)
        assert "tokens" not in entry and isinstance(entry["hash_ids"], list)


def test_redact_refuses_a_token_id_dump(tmp_path, log):
    result = CliRunner().invoke(
        audit,
        [str(log), "--redact", "--dump-tokens", str(tmp_path / "d"), "--dump-format", "tokens"],
    )
    assert result.exit_code == 2
    assert "--redact" in result.output and "mooncake" in result.output
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize(
    ("reason", "redacted"),
    [
        ("unknown format (keys: NUMBATKEY, b)", f"unknown format (keys: {digest('NUMBATKEY')}, "),
        ("unexpected shape: KeyError: 'NUMBATKEY'", "unexpected shape: KeyError"),
        ("cannot render: TypeError: NUMBATKEY", "cannot render: TypeError"),
        ("hf:x: chat template failed: NUMBATKEY said", "hf:x: chat template failed: sha256:"),
        ("blank line", "blank line"),
        ("messages[2].role is not a string (got list)", "messages[2].role is not a string"),
    ],
)
def test_redact_reason(reason, redacted):
    assert redact_reason(reason).startswith(redacted)
    assert "NUMBATKEY" not in redact_reason(reason)
