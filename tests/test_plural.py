"""Counts in messages."""

import pytest

from prefixlint.plural import counted


@pytest.mark.parametrize(
    ("count", "noun", "expected"),
    ((0, "token", "0 tokens"), (1, "token", "1 token"), (2, "request", "2 requests"),
     (12270, "request", "12,270 requests")),
)  # fmt: skip
def test_counts_in_messages(count, noun, expected):
    assert counted(count, noun) == expected


def test_the_audit_header_says_one_request(tmp_path):
    from click.testing import CliRunner

    from prefixlint.cli import main

    log = tmp_path / "one.jsonl"
    log.write_text('{"messages": [{"role": "user", "content": "hi"}]}\n')
    output = CliRunner().invoke(main, ["audit", str(log), "--no-what-if"]).output
    assert "1 line, 1 request, 0 skipped" in output
