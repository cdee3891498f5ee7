"""Fuzzing the log readers and the audit: a fixed adversarial corpus (every value of a
well-formed line of each format replaced by hostile values, lines cut short, bytes that are
not UTF-8) and hypothesis-generated lines. Nothing may raise: each line is a request or a
skipped line with a reason, the audit's counts add up, the JSON report is strict, and the
command exits 0, 1 or 2 within its time limit. The heavier runs are marked slow."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from measured_run import measured_run

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.request import ChatRequest
from prefixlint.sources.logs import FORMATS, LogReadError, SkippedLine, parse_line

TOOL = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
BASES = {
    "openai-chat": {
        "session_id": "s1",
        "timestamp": "2025-03-03T09:00:00Z",
        "request": {
            "model": "gpt-4o",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            ],
            "tools": [TOOL],
            "prompt_cache_key": "k",
        },
        "response": {
            "usage": {"prompt_tokens": 40, "prompt_tokens_details": {"cached_tokens": 32}}
        },
    },
    "openai-responses": {
        "model": "gpt-4.1",
        "instructions": "Be brief.",
        "input": [
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "ok"},
        ],
        "tools": [{"type": "function", "name": "f", "parameters": {}}],
    },
    "anthropic": {
        "model": "claude-sonnet-4-5",
        "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "hi"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm"},
                    {"type": "tool_use", "id": "t1", "name": "f", "input": {"q": 1}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}],
            },
        ],
        "metadata": {"user_id": "u1"},
    },
    "litellm": {
        "trace_id": "t1",
        "startTime": 1740992418.5,
        "model": "gpt-4o",
        "messages": [{"role": "user", "content": "hi"}],
        "model_parameters": {"tools": [TOOL], "tool_choice": "auto"},
        "response": {"usage": {"prompt_tokens": 10}},
    },
    "langfuse": {
        "traceId": "t1",
        "type": "GENERATION",
        "startTime": "2025-03-03T09:00:59Z",
        "model": "gpt-4o",
        "input": {"messages": [{"role": "user", "content": "hi"}], "tools": [TOOL]},
        "sessionId": "s1",
        "usageDetails": {"input": 3, "input_cached_tokens": 7, "output": 1},
    },
    "otel": {
        "start_time": "2025-03-03T09:00:59Z",
        "attributes": {
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.conversation.id": "c",
            "gen_ai.system_instructions": '[{"type": "text", "content": "Be brief."}]',
            "gen_ai.input.messages": [
                {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
                {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "f"}]},
                {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1"}]},
            ],
            "gen_ai.tool.definitions": [TOOL],
            "gen_ai.usage.input_tokens": 30,
        },
    },
    "openinference": {
        "start_time": "2025-03-03T09:00:59Z",
        "attributes": {
            "llm.model_name": "gpt-4o",
            "session.id": "c",
            "llm.invocation_parameters": '{"tool_choice": "auto"}',
            "llm.input_messages": [
                {"message": {"role": "system", "content": "Be brief."}},
                {"message": {"role": "user", "contents": [{"message_content": {"text": "hi"}}]}},
                {
                    "message": {
                        "role": "assistant",
                        "tool_calls": [{"tool_call": {"id": "c1", "function": {"name": "f"}}}],
                    }
                },
                {"message": {"role": "tool", "tool_call_id": "c1", "content": "ok"}},
            ],
            "llm.tools.0.tool.json_schema": json.dumps(TOOL),
            "llm.token_count.prompt": 30,
        },
    },
    "mooncake": {"timestamp": 1000, "input_length": 1000, "output_length": 5, "hash_ids": [1, 2]},
}
HOSTILE_VALUES = [
    None,
    True,
    -1,
    10**30,
    1e308,
    "",
    "\ud800",
    [],
    {},
    [[[[[[[[[[1]]]]]]]]]],
    {"type": {"t": 1}, "text": 5},
    ["x", 1, None, {}],
    "x" * 500,
]


def paths(value, prefix=()) -> Iterator[tuple]:
    """Every path to a value inside ``value`` (objects by key, arrays by index)."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from paths(item, (*prefix, index))


def replaced(value, path: tuple, new):
    if not path:
        return new
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = replaced(value[path[0]], path[1:], new)
    return copy


def dumps(value) -> bytes:
    """JSON as a log writer might write it; lone surrogates become ``\\udXXX`` escapes."""
    return json.dumps(value).encode()


def corpus() -> list[bytes]:
    """Every value of every base line replaced by every hostile value, each base cut
    short at several places, and bytes that are not UTF-8."""
    lines = []
    for base in BASES.values():
        for path in paths(base):
            lines.extend(dumps(replaced(base, path, value)) for value in HOSTILE_VALUES)
        text = dumps(base)
        lines.extend(text[:cut] for cut in range(1, len(text), max(1, len(text) // 12)))
        lines.append(text.replace(b'"', b"\xff", 1))
    lines += [b"\xef\xbb\xbf{}", b"[]", b"NaN", b'{"messages": NaN}', b"{" * 5000, b"\x00"]
    return [line.replace(b"\n", b" ") for line in lines]


CORPUS = corpus()


def test_corpus_covers_every_format():
    kinds = {
        item.format for item in (parse_line(1, line) for line in CORPUS) if hasattr(item, "format")
    }
    assert kinds == set(FORMATS)
    assert len(CORPUS) > 1000


@pytest.mark.parametrize("name", sorted(BASES))
def test_base_lines_are_requests(name):
    item = parse_line(1, dumps(BASES[name]))
    assert isinstance(item, ChatRequest) and item.format == name


def test_every_corpus_line_is_a_request_or_a_reason():
    for number, line in enumerate(CORPUS, 1):
        item = parse_line(number, line)
        assert isinstance(item, (ChatRequest, SkippedLine)), line
        if isinstance(item, SkippedLine):
            assert item.reason and "\n" not in item.reason


def audit_corpus(tmp_path, caches: tuple[str, ...], what_if: bool):
    log = tmp_path / "corpus.jsonl"
    log.write_bytes(b"\n".join(CORPUS) + b"\n")
    options = AuditOptions(caches=caches, what_if=what_if)
    report = run_audit([str(log)], options)
    assert report.lines_read == len(CORPUS)
    requests = len(report.records) // len(caches)
    assert requests + len(report.skipped) == len(CORPUS)
    assert requests > 100
    return report


def test_audit_of_the_corpus_goes_on_to_the_end(tmp_path):
    audit_corpus(tmp_path, ("vllm", "anthropic"), what_if=False)


@pytest.mark.slow
def test_audit_of_the_corpus_with_every_cache_model_and_what_if(tmp_path):
    caches = ("vllm", "sglang", "llamacpp", "openai", "anthropic", "deepseek", "gemini")
    audit_corpus(tmp_path, caches, what_if=True)


def strict_json(text: str):
    def refuse(constant):
        raise AssertionError(f"bare {constant} in the JSON report")

    return json.loads(text, parse_constant=refuse)


@pytest.mark.slow
def test_cli_audit_of_the_corpus_is_strict_json_without_traceback(tmp_path):
    log = tmp_path / "corpus.jsonl"
    log.write_bytes(b"\n".join(CORPUS) + b"\n")
    html = tmp_path / "report.html"
    result, peak = measured_run(
        tmp_path, "audit", str(log), "--format", "json", "--html", str(html), "--cache", "vllm",
        "--cache", "anthropic", "--redact",
    )  # fmt: skip
    assert result.returncode in (0, 1, 2) and "Traceback" not in result.stderr, result.stderr
    data = strict_json(result.stdout)
    assert data["summary"]["lines"] == len(CORPUS)
    assert peak < 1024


# ---------------------------------------------------------------- hypothesis

JSON_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def mutated_lines(draw) -> bytes:
    """A base line of some format with a few of its values replaced by arbitrary JSON."""
    base = BASES[draw(st.sampled_from(sorted(BASES)))]
    all_paths = list(paths(base))
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        base = replaced(base, draw(st.sampled_from(all_paths)), draw(JSON_VALUES))
        all_paths = [p for p in paths(base) if p]
        if not all_paths:
            break
    return dumps(base)


def read_lines(lines: list[bytes]) -> None:
    """Read ``lines`` as log lines: each is a request or a skipped line, nothing raises."""
    items = [parse_line(number, line) for number, line in enumerate(lines, 1)]
    assert all(isinstance(item, (ChatRequest, SkippedLine)) for item in items)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(mutated_lines(), min_size=1, max_size=3))
def test_mutated_lines_never_raise(lines):
    read_lines(lines)


def audit_lines(tmp_path_factory, lines: list[bytes]) -> None:
    log = tmp_path_factory.mktemp("fuzz") / "log.jsonl"
    log.write_bytes(b"\n".join(line.replace(b"\n", b" ") for line in lines) + b"\n")
    try:
        report = run_audit([str(log)], AuditOptions(caches=("vllm", "anthropic"), what_if=True))
    except LogReadError as exc:  # bytes that start like gzip: the one-line input error
        assert "not a valid gzip stream" in str(exc)
        return
    assert report.lines_read == len(lines)
    assert len(report.records) // 2 + len(report.skipped) == len(lines)


@settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(mutated_lines(), min_size=1, max_size=4))
def test_audits_of_mutated_logs_never_raise(tmp_path_factory, lines):
    audit_lines(tmp_path_factory, lines)


@pytest.mark.slow
@settings(
    max_examples=600,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(st.one_of(mutated_lines(), st.binary(max_size=200)), min_size=1, max_size=6))
def test_audits_of_mutated_logs_never_raise_many(tmp_path_factory, lines):
    audit_lines(tmp_path_factory, lines)
