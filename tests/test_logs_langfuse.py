"""Langfuse observation exports: messages, time, session and cached-token usage."""

import json
from pathlib import Path

import pytest

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.sources.logs import SkippedLine, detect_format, parse_line, read_log

LOG = Path(__file__).resolve().parent.parent / "fixtures" / "logs" / "langfuse_observations.jsonl"
OBSERVATION = {
    "id": "o1",
    "traceId": "t1",
    "type": "GENERATION",
    "startTime": "2026-11-30T09:00:00.000Z",
    "model": "gpt-4o",
    "input": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}],
    "sessionId": "s1",
}


def _parse(**fields):
    return parse_line(1, json.dumps({**OBSERVATION, **fields}).encode())


def test_detected_and_read():
    assert detect_format(OBSERVATION) == "langfuse"
    request = _parse(modelParameters={"temperature": 0, "tool_choice": "auto"})
    assert request.format == "langfuse"
    assert [m["role"] for m in request.messages] == ["system", "user"]
    assert request.timestamp == pytest.approx(1796029200.0)
    assert request.session_id == "s1"
    assert request.params == {"tool_choice": "auto"}


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        # Langfuse's own keys: input counts only what was neither read nor written.
        (
            {"usageDetails": {"input": 100, "input_cached_tokens": 1024, "output": 5}},
            (1124, 1024, None),
        ),
        (
            {"usageDetails": {"input": 10, "input_cache_creation": 2000, "output": 5}},
            (2010, None, 2000),
        ),
        # Anthropic's keys passed through as they came.
        (
            {
                "usageDetails": {
                    "input": 3,
                    "cache_read_input_tokens": 900,
                    "cache_creation_input_tokens": 40,
                }
            },
            (943, 900, 40),
        ),
        ({"usage": {"input": 210, "output": 4, "total": 214}}, (210, None, None)),
        ({}, None),
    ],
)
def test_usage(usage, expected):
    found = _parse(**usage).usage
    assert (None if found is None else tuple(vars(found).values())) == expected


def test_input_as_an_object_or_a_string():
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
    request = _parse(input={"messages": OBSERVATION["input"], "tools": tools})
    assert request.tools == tuple(tools) and len(request.messages) == 2
    assert _parse(input="Hello there").messages == ({"role": "user", "content": "Hello there"},)
    skipped = _parse(input=42)
    assert isinstance(skipped, SkippedLine) and "langfuse" in skipped.reason


def test_a_langfuse_export_audits_with_sessions_times_and_observed_cache():
    requests = list(read_log(str(LOG)))
    assert {r.session_id for r in requests} == {"support-7"}
    assert [r.timestamp for r in requests] == sorted(r.timestamp for r in requests)
    report = run_audit([str(LOG)], AuditOptions(what_if=False))
    usage = report.usage("vllm")
    # The third observation has the older usage object, which reports no cached tokens.
    assert (usage.requests, usage.observed_cached) == (2, 128)
