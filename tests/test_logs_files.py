"""Reading log files: bad lines are skipped with reasons, gzip, stdin, unreadable files."""

from __future__ import annotations

import gzip
import io
import sys
from pathlib import Path

import pytest

from prefixlint.request import ChatRequest
from prefixlint.sources.logs import LogReadError, SkippedLine, read_log

LOGS = Path(__file__).parent.parent / "fixtures" / "logs"
MALFORMED_REASONS = {
    2: "blank line",
    3: "malformed JSON: Expecting value at column 34",
    4: "not a JSON object (got list)",
    5: "not a JSON object (got str)",
    6: "unknown format (keys: baz, foo)",
    7: "'messages' is not a list",
    8: "messages[0] is not a message object with a role",
    9: "not UTF-8 (byte 65)",
    10: "mooncake record without a list of integer 'hash_ids'",
    12: "'system' is neither a string nor a list of blocks",
    14: "blank line",
}


def test_malformed_lines_are_skipped_with_reasons():
    items = list(read_log(str(LOGS / "malformed.jsonl")))
    assert [item.line for item in items] == list(range(1, 17))
    skipped = {item.line: item.reason for item in items if isinstance(item, SkippedLine)}
    assert skipped == MALFORMED_REASONS
    formats = [item.format for item in items if isinstance(item, ChatRequest)]
    assert formats == ["openai-chat", "anthropic", "openai-responses", "mooncake", "openai-chat"]


@pytest.mark.parametrize("path", sorted(LOGS.glob("*.jsonl")), ids=lambda p: p.name)
def test_totals_reconcile(path):
    lines = len(path.read_bytes().splitlines())
    items = list(read_log(str(path)))
    requests = sum(isinstance(item, ChatRequest) for item in items)
    skipped = sum(isinstance(item, SkippedLine) for item in items)
    assert requests + skipped == len(items) == lines


@pytest.mark.parametrize(
    "line",
    [
        b"{" * 100000,
        b'{"messages": [{"role": "user", "content": {"nested": ' * 3 + b"1}}]}",
        b'{"messages": [1, 2]}',
        b'{"system": "S", "messages": [{"role": "user", "content": [1]}]}',
        b'{"input": [{"type": "function_call_output", "output": 3}, 7]}',
        b'{"attributes": {"gen_ai.input.messages": "[{\\"parts\\": 5}]"}}',
        b'{"attributes": {"gen_ai.input.messages": "not json"}}',
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{}, {}]}]}]}',
        b'{"messages": [], "model_parameters": {"tools": "all"}}',
        b"\xef\xbb\xbf",
        b"null",
    ],
)
def test_strange_lines_never_raise(tmp_path, line):
    path = tmp_path / "strange.jsonl"
    path.write_bytes(line + b"\n")
    (item,) = read_log(str(path))
    if isinstance(item, SkippedLine):
        assert item.reason and "\n" not in item.reason


TWO_LINES = (
    b'{"messages": [{"role": "user", "content": "a"}]}\n'
    b'{"messages": [{"role": "user", "content": "b"}]}'  # no final newline
)


@pytest.mark.parametrize("name", ["log.jsonl.gz", "log.jsonl"])
def test_gzip_by_suffix_or_magic(tmp_path, name):
    path = tmp_path / name
    path.write_bytes(gzip.compress(TWO_LINES))
    items = list(read_log(str(path)))
    assert [item.messages[0]["content"] for item in items] == ["a", "b"]


@pytest.mark.parametrize("data", [TWO_LINES, gzip.compress(TWO_LINES)], ids=["plain", "gzip"])
def test_stdin(monkeypatch, data):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(data))))
    items = list(read_log("-"))
    assert [item.messages[0]["content"] for item in items] == ["a", "b"]


def test_missing_file_raises_at_call():
    with pytest.raises(LogReadError, match=r"missing\.jsonl: cannot read log"):
        read_log("/nonexistent/missing.jsonl")


def test_directory_raises(tmp_path):
    with pytest.raises(LogReadError, match="cannot read log"):
        list(read_log(str(tmp_path)))


@pytest.mark.parametrize(
    "data",
    [b"\x1f\x8b\x08\x00garbage-not-deflate", gzip.compress(TWO_LINES)[:-12], b"plain text"],
    ids=["corrupt", "truncated", "not gzip"],
)
def test_bad_gzip_raises(tmp_path, data):
    path = tmp_path / "log.jsonl.gz"
    path.write_bytes(data)
    with pytest.raises(LogReadError, match="not a valid gzip stream"):
        list(read_log(str(path)))


def test_unknown_format_option():
    with pytest.raises(ValueError, match="unknown log format 'bedrock'"):
        read_log(str(LOGS / "malformed.jsonl"), format="bedrock")


def test_reading_is_lazy(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_bytes(TWO_LINES)
    items = read_log(str(path))
    first = next(items)
    path.unlink()  # the open handle keeps streaming
    assert first.line == 1 and next(items).line == 2


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (
            b'{"messages": [{"role": "user", "content": "cut',
            "Unterminated string starting at column 43",
        ),
        (b'{"messages": [}', "Expecting value at column 15"),
        (b'{"messages": []', "Expecting ',' delimiter at column 16"),
    ],
)
def test_malformed_json_reason_reads_as_one_phrase(tmp_path, line, reason):
    log = tmp_path / "log.jsonl"
    log.write_bytes(line + b"\n")
    (item,) = read_log(str(log))
    assert isinstance(item, SkippedLine)
    assert item.reason == f"malformed JSON: {reason}"
