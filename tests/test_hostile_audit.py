"""Hostile logs: a bad line is skipped with its reason and the audit goes on; memory stays
bounded by the size limits, whatever the log holds."""

from __future__ import annotations

import gzip
import importlib
import io
import json
import tracemalloc

import pytest
from click.testing import CliRunner
from measured_run import measured_run

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.auditing.results import SKIPPED_SAMPLE, Skipped, SkippedLines
from prefixlint.cli.audit import audit
from prefixlint.request import ChatRequest
from prefixlint.sources.logs import LogReadError, SkippedLine, parse_line, read_log
from prefixlint.sources.logs.limits import LogLimits, OverlongLine, bounded_lines

GOOD = {"model": "m", "messages": [{"role": "user", "content": "hello"}]}


def chat(**fields) -> dict:
    return {**GOOD, **fields}


def message(**fields) -> dict:
    return chat(messages=[{"role": "user", "content": "x", **fields}])


BAD_LINES = [
    ('{"model": "m", "messages": [{"role": "user", "content": "a \\ud800 b"}]}', "lone surrogate"),
    ('{"model": "m", "messages": [{"role": "user", "content": "\\udc00"}]}', "lone surrogate"),
    ('{"model": "m", "n": ' + "9" * 5000 + ', "messages": []}', "too many digits"),
    (json.dumps(chat(model={"name": "m"})), "'model' is not a string (got dict)"),
    (json.dumps(chat(model=7)), "'model' is not a string (got int)"),
    (json.dumps(message(role=["user"])), "messages[0].role is not a string (got list)"),
    (json.dumps(message(role={"r": 1})), "messages[0].role is not a string (got dict)"),
    (
        json.dumps(
            {
                "model": "m",
                "system": "s",
                "messages": [{"role": "user", "content": [{"type": {"t": 1}, "text": "x"}]}],
            }
        ),
        "type is not a string (got dict)",
    ),
    (json.dumps(message(content=[{"type": ["text"]}])), "content[0].type is not a string"),
    (
        json.dumps(message(content=[{"type": "text", "text": 5}])),
        "messages[0].content[0].text is not a string (got int)",
    ),
    (
        json.dumps(message(content=[{"type": "text", "text": "a"}, {"type": "text", "text": {}}])),
        "messages[0].content[1].text is not a string (got dict)",
    ),
    (json.dumps(message(tool_calls="call")), "tool_calls is not a list (got str)"),
    (json.dumps(message(tool_calls=[5])), "tool_calls[0] is not an object"),
    (json.dumps(message(tool_calls=[{"function": "f"}])), "function is not an object"),
    (json.dumps(message(reasoning_content={"r": 1})), "reasoning_content is not a string"),
    (json.dumps(message(thinking=3)), "thinking is not a string"),
    (json.dumps({"instructions": 5, "input": "x"}), "'instructions' is not a string"),
    (json.dumps({"input": [{"type": "message", "role": 5}]}), "role is not a string"),
    (json.dumps({"hash_ids": [1], "input_length": -5}), "'input_length' is not a count"),
    (json.dumps({"hash_ids": [10**30], "input_length": 5}), "integer 'hash_ids'"),
    (json.dumps({"attributes": {"gen_ai.input.messages": 5}}), "is not a list"),
]


@pytest.mark.parametrize(("line", "reason"), BAD_LINES, ids=lambda v: str(v)[:40])
def test_bad_line_is_skipped_with_its_reason(line, reason):
    item = parse_line(1, line.encode())
    assert isinstance(item, SkippedLine)
    assert reason in item.reason


@pytest.mark.parametrize(
    "fields",
    [
        {"timestamp": 1e308},
        {"session_id": 12},
        {"request": GOOD, "timestamp": "1" * 400},
    ],
)
def test_odd_values_are_normalised_not_fatal(fields):
    record = {**GOOD, **fields} if "request" not in fields else fields
    item = parse_line(1, json.dumps(record).encode())
    assert isinstance(item, ChatRequest)
    assert item.timestamp is None or item.timestamp < 1e300
    assert item.session_id is None or isinstance(item.session_id, str)


def test_mooncake_infinite_timestamp_is_unknown():
    item = parse_line(1, b'{"hash_ids": [1], "input_length": 5, "timestamp": 1e400}')
    assert isinstance(item, ChatRequest)
    assert item.timestamp is None


def test_surrogate_pairs_are_text_not_errors():
    item = parse_line(1, b'{"messages": [{"role": "user", "content": "\\ud83d\\ude00 \\\\ud800"}]}')
    assert isinstance(item, ChatRequest)
    assert item.messages[0]["content"] == "\U0001f600 \\ud800"


def run(*args):
    return CliRunner().invoke(audit, [str(a) for a in args])


def test_audit_goes_on_past_every_bad_line(tmp_path):
    log = tmp_path / "log.jsonl"
    lines = [json.dumps(GOOD)] + [line for line, _ in BAD_LINES] + [json.dumps(GOOD)]
    log.write_text("\n".join(lines) + "\n")
    result = run(log, "--format", "json", "--cache", "vllm", "--cache", "anthropic")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["summary"]["requests"] == 2
    assert data["summary"]["skipped_lines"] == len(BAD_LINES)
    assert data["summary"]["lines"] == len(lines)
    reasons = [entry["reason"] for entry in data["skipped"]]
    for (_, expected), reason in zip(BAD_LINES, reasons, strict=True):
        assert expected in reason
    assert sum(data["skipped_reasons"].values()) == len(BAD_LINES)


def test_skipped_lines_keep_counts_and_a_bounded_sample():
    skipped = SkippedLines()
    for line in range(1, 50_001):
        reason = "blank line" if line % 2 else f"malformed JSON: Expecting value at column {line}"
        skipped.append(Skipped("log", line, reason))
    assert len(skipped) == 50_000
    assert len(list(skipped)) == SKIPPED_SAMPLE and skipped.truncated
    assert skipped.by_reason == {
        "blank line": 25_000,
        "malformed JSON: Expecting value at column N": 25_000,
    }


def test_reason_kinds_are_bounded():
    skipped = SkippedLines(sample=10, kinds=5)
    for index in range(100):
        skipped.append(Skipped("log", index + 1, f"unknown format (keys: k{'x' * index})"))
    assert len(skipped.by_reason) == 6
    assert skipped.by_reason["other reasons"] == 95


def gzipped(tmp_path, data: bytes):
    path = tmp_path / "log.jsonl.gz"
    with gzip.open(path, "wb", compresslevel=9) as stream:
        stream.write(data)
    return path


def test_many_blank_lines_in_a_small_gzip_keep_memory_bounded(tmp_path):
    path = gzipped(tmp_path, b"\n" * 300_000 + json.dumps(GOOD).encode() + b"\n")
    assert path.stat().st_size < 2000
    result = run(path, "--format", "json", "--no-what-if")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["summary"]["skipped_lines"] == 300_000
    assert data["summary"]["requests"] == 1
    assert len(data["skipped"]) == SKIPPED_SAMPLE
    assert data["skipped_reasons"] == {"blank line": 300_000}


def test_gzip_bomb_stops_at_the_ratio_limit(tmp_path):
    path = gzipped(tmp_path, b"\n" * (1 << 19))
    limits = LogLimits(max_gzip_ratio=50, gzip_floor_bytes=1 << 16)
    with pytest.raises(LogReadError, match=r"log\.jsonl\.gz: line \d+: .*--max-gzip-ratio"):
        for _ in read_log(path, limits=limits):
            pass
    # The same stream passes when the ratio limit is off.
    unlimited = LogLimits(max_gzip_ratio=0, gzip_floor_bytes=1 << 16)
    assert sum(1 for _ in read_log(path, limits=unlimited)) == 1 << 19


def test_log_size_limit_is_a_one_line_error(tmp_path):
    log = tmp_path / "log.jsonl"
    log.write_text((json.dumps(GOOD) + "\n") * 100)
    result = run(log, "--max-log-bytes", "1000")
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert "log.jsonl: line" in result.output and "--max-log-bytes" in result.output


def test_overlong_line_is_skipped_and_the_next_line_read(tmp_path):
    log = tmp_path / "log.jsonl"
    huge = json.dumps(chat(messages=[{"role": "user", "content": "a" * 200_000}]))
    log.write_text(huge + "\n" + json.dumps(GOOD) + "\n")
    result = run(log, "--format", "json", "--no-what-if", "--max-line-bytes", "100000")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["summary"]["requests"] == 1
    [skipped] = data["skipped"]
    assert skipped["line"] == 1
    assert "--max-line-bytes" in skipped["reason"]
    assert f"{len(huge) + 1:,} bytes" in skipped["reason"]


def test_overlong_line_is_never_held_whole():
    line = b"[" + b"1," * (10 << 20) + b"1]\n"  # 20 MiB
    stream = io.BufferedReader(io.BytesIO(line + b"{}\n"))
    tracemalloc.start()
    try:
        items = list(bounded_lines(stream, LogLimits(max_line_bytes=1 << 16)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert items == [OverlongLine(len(line)), b"{}\n"]
    assert peak < 4 << 20


def test_line_at_the_limit_is_read():
    line = b"x" * 99 + b"\n"
    items = list(bounded_lines(io.BytesIO(line * 2), LogLimits(max_line_bytes=99)))
    assert items == [line, line]
    items = list(bounded_lines(io.BytesIO(line), LogLimits(max_line_bytes=98)))
    assert items == [OverlongLine(100)]


@pytest.mark.parametrize(
    ("target", "reason"),
    [
        ("prefixlint.auditing.pipeline.RequestPreparer.render", "cannot render: TypeError: odd"),
        ("prefixlint.auditing.attribution.Attributor.observe", "cannot audit: TypeError: odd"),
    ],
)
def test_a_shape_the_readers_let_through_skips_only_its_line(tmp_path, monkeypatch, target, reason):
    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps(message(content=f"m{i}")) for i in range(3)) + "\n")
    owner, _, name = target.rpartition(".")
    module, _, cls = owner.rpartition(".")
    real = getattr(getattr(importlib.import_module(module), cls), name)

    def flaky(self, request, *args):
        if request.line == 2:
            raise TypeError("odd")
        return real(self, request, *args)

    monkeypatch.setattr(target, flaky)
    report = run_audit([str(log)], AuditOptions(caches=("vllm", "sglang")))
    assert [s.reason for s in report.skipped] == [reason]
    assert [r.line for r in report.records] == [1, 1, 3, 3]
    assert report.lines_read == 3


@pytest.mark.slow
def test_a_50_mb_line_is_skipped_in_little_memory(tmp_path):
    log = tmp_path / "log.jsonl"
    huge = chat(messages=[{"role": "user", "content": "word " * 10_000_000}])
    log.write_text(json.dumps(huge) + "\n" + json.dumps(GOOD) + "\n")
    result, peak = measured_run(tmp_path, "audit", str(log), "--format", "json", "--no-what-if")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["summary"]["requests"] == 1
    assert "--max-line-bytes" in data["skipped"][0]["reason"]
    assert peak < 400


@pytest.mark.slow
def test_two_million_blank_lines_keep_memory_flat(tmp_path):
    path = gzipped(tmp_path, b"\n" * 2_000_000 + json.dumps(GOOD).encode() + b"\n")
    result, peak = measured_run(
        tmp_path, "audit", str(path), "--format", "json", "--no-what-if", "--max-gzip-ratio", "0"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["summary"]["skipped_lines"] == 2_000_000
    assert peak < 400
