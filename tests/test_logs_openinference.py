"""OpenInference spans: flattened and nested attributes, tools, parameters, usage, session."""

import json
from pathlib import Path

import pytest

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.sources.logs import SkippedLine, detect_format, parse_line, read_log
from prefixlint.sources.logs.openinference import flatten, looks_openinference

LOG = Path(__file__).resolve().parent.parent / "fixtures" / "logs" / "openinference_spans.jsonl"


def _span(**attributes):
    base = {
        "llm.model_name": "gpt-4o",
        "llm.input_messages.0.message.role": "user",
        "llm.input_messages.0.message.content": "Hi",
    }
    return {"start_time": "2026-11-30T09:00:00Z", "attributes": {**base, **attributes}}


def _parse(span):
    return parse_line(1, json.dumps(span).encode())


def test_fixture_reads_all_three_encodings_alike():
    items = list(read_log(str(LOG)))
    assert [r.format for r in items] == ["openinference"] * 3
    assert {r.session_id for r in items} == {"rail-7"}
    assert [r.timestamp - items[0].timestamp for r in items] == [0.0, 4.0, 11.0]
    assert [len(r.messages) for r in items] == [2, 4, 6]
    assert all(r.params == {"tool_choice": "auto"} for r in items)
    assert all(r.tools[0]["function"]["name"] == "lookup_booking" for r in items)
    nested, flat = items[1], items[2]
    assert nested.messages[1]["content"] == [
        {"type": "text", "text": "Can I get a refund for booking NR-4471?"}
    ]
    assert nested.messages[2]["tool_calls"] == flat.messages[2]["tool_calls"]
    assert nested.messages[3] == flat.messages[3]
    assert flat.messages[3]["tool_call_id"] == "call_1"
    assert (flat.usage.prompt_tokens, flat.usage.cached_tokens) == (212, 128)


def test_fixture_audits_with_the_conversation_reused():
    report = run_audit([str(LOG)], AuditOptions(caches=("unlimited",), what_if=False))
    assert not report.skipped and len(report.records) == 3
    # The second span extends the first, the third the second: only the first is uncached.
    first, second, third = report.records
    assert first.cached_tokens == 0
    assert second.cached_tokens > 0 and third.cached_tokens > second.cached_tokens
    assert report.usage("unlimited").requests == 3


@pytest.mark.parametrize(
    "body",
    [
        {"attributes": {"llm.input_messages.0.message.role": "user"}},
        {"attributes": {"openinference.span.kind": "LLM"}},
        {"attributes": {"llm": {"model_name": "m"}}},
        {"attributes": [{"key": "llm.model_name", "value": {"stringValue": "m"}}]},
        {"attributes.llm.model_name": "m"},
    ],
)
def test_detected(body):
    assert detect_format(body) == "openinference"


@pytest.mark.parametrize(
    "body",
    [
        # OpenLLMetry's flattened attributes are OpenTelemetry spans, not OpenInference.
        {"attributes": {"gen_ai.prompt.0.role": "user", "llm.request.functions.0.name": "f"}},
        {"attributes": {"gen_ai.request.model": "m"}},
    ],
)
def test_otel_spans_stay_otel(body):
    assert not looks_openinference(body)
    assert detect_format(body) == "otel"


def test_otlp_key_values_and_dataframe_columns():
    otlp = {
        "startTimeUnixNano": "1796029200000000000",
        "attributes": [
            {"key": "llm.input_messages.0.message.role", "value": {"stringValue": "user"}},
            {"key": "llm.input_messages.0.message.content", "value": {"stringValue": "Hi"}},
            {"key": "llm.token_count.prompt", "value": {"intValue": "7"}},
        ],
    }
    request = _parse(otlp)
    assert request.messages == ({"role": "user", "content": "Hi"},)
    assert request.timestamp == 1796029200.0 and request.usage.prompt_tokens == 7
    columns = {
        "attributes.llm.input_messages": [{"message.role": "user", "message.content": "Hi"}],
        "attributes.session.id": "s9",
    }
    request = _parse(columns)
    assert request.format == "openinference"
    assert request.messages == ({"role": "user", "content": "Hi"},) and request.session_id == "s9"


def test_usage_with_cache_write_and_sampling_parameters_dropped():
    request = _parse(
        _span(
            **{
                "llm.invocation_parameters": '{"temperature": 0.2, "max_tokens": 9, "seed": 1, '
                '"response_format": {"type": "json_object"}}',
                "llm.token_count.prompt": 2000,
                "llm.token_count.prompt_details.cache_read": 1024,
                "llm.token_count.prompt_details.cache_write": 512,
            }
        )
    )
    assert request.params == {"response_format": {"type": "json_object"}}
    assert (request.usage.prompt_tokens, request.usage.cached_tokens) == (2000, 1024)
    assert request.usage.cache_write_tokens == 512
    assert _parse(_span()).usage is None


@pytest.mark.parametrize(
    ("attributes", "reason"),
    [
        ({"llm.invocation_parameters": "[1]"}, "'llm.invocation_parameters' is not a JSON object"),
        ({"llm.tools.0.tool.json_schema": "not json"}, "'llm.tools.0.tool.json_schema' is not"),
        ({"llm.input_messages.0.message.role": ["user"]}, "has no message.role string"),
    ],
)
def test_malformed_spans_are_skipped_with_a_reason(attributes, reason):
    item = _parse(_span(**attributes))
    assert isinstance(item, SkippedLine) and reason in item.reason


def test_span_without_input_messages_is_skipped():
    item = parse_line(3, b'{"attributes": {"openinference.span.kind": "LLM"}}')
    assert isinstance(item, SkippedLine) and item.line == 3
    assert item.reason == "openinference span without llm.input_messages"


def test_flatten_keeps_contents_and_schemas_whole():
    nested = {"a": [{"b": 1}, {"content": [{"type": "text"}]}], "json_schema": {"x": [1]}}
    expected = {"a.0.b": 1, "a.1.content": [{"type": "text"}], "json_schema": {"x": [1]}}
    assert flatten(nested) == expected


def test_otlp_document_with_one_openinference_span():
    span = {
        "startTimeUnixNano": "1796029200000000000",
        "attributes": [
            {"key": "openinference.span.kind", "value": {"stringValue": "LLM"}},
            {"key": "llm.input_messages.0.message.role", "value": {"stringValue": "user"}},
            {"key": "llm.input_messages.0.message.content", "value": {"stringValue": "Hi"}},
        ],
    }
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    assert detect_format(document) == "openinference"
    request = _parse(document)
    assert request.format == "openinference" and request.messages[0]["content"] == "Hi"
    two = {"resourceSpans": [{"scopeSpans": [{"spans": [span, span]}]}]}
    assert detect_format(two) == "otel"  # and skipped there: one span per line
