"""Each log format read into a ChatRequest: detection, messages, tools, breakpoints, metadata."""

from __future__ import annotations

import json

import pytest

from prefixlint.request import ChatRequest
from prefixlint.sources.logs import SkippedLine, detect_format, parse_line, parse_timestamp


def parse(record, format="auto"):
    raw = record if isinstance(record, bytes) else json.dumps(record).encode()
    return parse_line(1, raw, format)


USER = {"role": "user", "content": "Hi"}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({"model": "gpt-4o", "messages": [USER]}, "openai-chat"),
        ({"messages": [USER], "tools": [{"type": "function", "function": {}}]}, "openai-chat"),
        ({"messages": [{"role": "tool", "tool_call_id": "x", "content": "1"}]}, "openai-chat"),
        ({"model": "claude", "system": "S", "messages": [USER]}, "anthropic"),
        ({"messages": [USER], "tools": [{"name": "f", "input_schema": {}}]}, "anthropic"),
        ({"messages": [{"role": "user", "content": [{"type": "tool_result"}]}]}, "anthropic"),
        (
            {"messages": [{"role": "user", "content": [{"type": "text", "cache_control": {}}]}]},
            "anthropic",
        ),
        ({"messages": [USER], "cache_control": {"type": "ephemeral"}}, "anthropic"),
        ({"model": "gpt-4.1", "input": "Hello"}, "openai-responses"),
        ({"instructions": "Be brief.", "input": []}, "openai-responses"),
        ({"messages": [USER], "model_parameters": {}, "startTime": 1.0}, "litellm"),
        ({"attributes": {"gen_ai.request.model": "m"}}, "otel"),
        ({"gen_ai.input.messages": "[]"}, "otel"),
        ({"resourceSpans": []}, "otel"),
        ({"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": [1]}, "mooncake"),
        ({"prompt": "completions API"}, None),
    ],
)
def test_detect_format(body, expected):
    assert detect_format(body) == expected


def test_openai_chat_keeps_messages_and_prefix_params():
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "S"}, USER],
        "tools": [{"type": "function", "function": {"name": "f"}}],
        "tool_choice": "auto",
        "reasoning_effort": "low",
        "prompt_cache_key": "k",
        "response_format": {"type": "json_object"},
        "temperature": 0.2,
        "max_tokens": 10,
        "stream": True,
    }
    request = parse(body)
    assert request.format == "openai-chat"
    assert request.model == "gpt-4o"
    assert request.system is None
    assert request.messages == tuple(body["messages"])
    assert request.tools == tuple(body["tools"])
    assert request.params == {
        "tool_choice": "auto",
        "reasoning_effort": "low",
        "prompt_cache_key": "k",
        "response_format": {"type": "json_object"},
    }


def test_openai_legacy_functions():
    body = {
        "messages": [
            USER,
            {
                "role": "assistant",
                "content": None,
                "function_call": {"name": "f", "arguments": "{}"},
            },
            {"role": "function", "name": "f", "content": "ok"},
        ],
        "functions": [{"name": "f", "parameters": {}}],
    }
    request = parse(body)
    assert request.tools == ({"type": "function", "function": {"name": "f", "parameters": {}}},)
    assert request.messages[1]["tool_calls"] == [
        {"type": "function", "function": {"name": "f", "arguments": "{}"}}
    ]
    assert request.messages[2]["role"] == "tool"


def test_responses_items():
    body = {
        "model": "gpt-4.1",
        "instructions": "You are terse.",
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "Weather?"}]},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Use the tool."}]},
            {"type": "function_call", "call_id": "c1", "name": "w", "arguments": '{"c":1}'},
            {"type": "function_call", "call_id": "c2", "name": "w", "arguments": '{"c":2}'},
            {"type": "function_call_output", "call_id": "c1", "output": "sun"},
            {"type": "function_call_output", "call_id": "c2", "output": "rain"},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Mixed."}],
            },
            {"type": "web_search_call", "id": "ws"},
            {"role": "user", "content": "Thanks"},
        ],
        "tools": [{"type": "function", "name": "w", "parameters": {}}],
        "previous_response_id": "resp_1",
    }
    request = parse(body)
    assert request.format == "openai-responses"
    assert request.system == "You are terse."
    roles = [m["role"] for m in request.messages]
    assert roles == ["user", "assistant", "tool", "tool", "assistant", "user"]
    assistant = request.messages[1]
    assert assistant["reasoning_content"] == "Use the tool."
    assert [c["id"] for c in assistant["tool_calls"]] == ["c1", "c2"]
    assert request.messages[0]["content"] == [{"type": "text", "text": "Weather?"}]
    assert request.messages[2] == {"role": "tool", "tool_call_id": "c1", "content": "sun"}
    assert request.messages[4]["content"] == [{"type": "text", "text": "Mixed."}]
    assert request.params == {"previous_response_id": "resp_1"}


def test_responses_string_input():
    request = parse({"input": "Hello"})
    assert request.messages == ({"role": "user", "content": "Hello"},)
    assert request.system is None


EPHEMERAL = {"type": "ephemeral"}
HOUR = {"type": "ephemeral", "ttl": "1h"}


@pytest.mark.parametrize(
    ("cache_control", "reason"),
    [
        ({"type": "ephemeral"}, None),
        ({"type": "ephemeral", "ttl": None}, None),
        ({"type": "ephemeral", "ttl": "5m"}, None),
        ({"type": "ephemeral", "ttl": "1h"}, None),
        ({"type": "ephemeral", "ttl": "1hr"}, "cache_control ttl '1hr' is neither '5m' nor '1h'"),
        ({"type": "ephemeral", "ttl": 3600}, "cache_control ttl 3600 is neither '5m' nor '1h'"),
    ],
)
@pytest.mark.parametrize("place", ["system", "message", "tool", "top"])
def test_an_unknown_breakpoint_ttl_skips_the_line(cache_control, reason, place):
    block = {"type": "text", "text": "Policy."}
    body = {"model": "claude-sonnet-4-5", "max_tokens": 10, "system": [block]}
    body["messages"] = [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
    if place == "system":
        block["cache_control"] = cache_control
    elif place == "message":
        body["messages"][0]["content"][0]["cache_control"] = cache_control
    elif place == "tool":
        body["tools"] = [{"name": "a", "input_schema": {}, "cache_control": cache_control}]
    else:
        body["cache_control"] = cache_control
    item = parse(body, "anthropic")
    if reason is None:
        assert isinstance(item, ChatRequest)
        assert len(item.cache_breakpoints) == 1
    else:
        assert isinstance(item, SkippedLine)
        assert item.reason == reason


def test_anthropic_blocks_and_breakpoints():
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "tools": [
            {"name": "a", "input_schema": {}},
            {"name": "b", "input_schema": {}, "cache_control": HOUR},
        ],
        "system": [
            {"type": "text", "text": "Part one."},
            {"type": "text", "text": "Part two.", "cache_control": EPHEMERAL},
        ],
        "messages": [
            {"role": "user", "content": "Find it"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "Search.", "signature": "sig"},
                    {"type": "text", "text": "Searching."},
                    {"type": "tool_use", "id": "t1", "name": "a", "input": {"q": "x"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "found"},
                    {"type": "text", "text": "And?", "cache_control": EPHEMERAL},
                ],
            },
        ],
        "thinking": {"type": "enabled", "budget_tokens": 1024},
    }
    request = parse(body)
    assert request.format == "anthropic"
    assert request.system == "Part one.\nPart two."
    assert request.tools == ({"name": "a", "input_schema": {}}, {"name": "b", "input_schema": {}})
    assert request.messages == (
        {"role": "user", "content": "Find it"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Searching."}],
            "tool_calls": [
                {"id": "t1", "type": "function", "function": {"name": "a", "arguments": {"q": "x"}}}
            ],
            "reasoning_content": "Search.",
        },
        {"role": "tool", "tool_call_id": "t1", "content": "found"},
        {"role": "user", "content": [{"type": "text", "text": "And?"}]},
    )
    assert request.cache_breakpoints == (
        ("tools[1]", 3600.0),
        ("system", 300.0),
        ("messages[3]", 300.0),
    )
    assert request.params == {"thinking": {"type": "enabled", "budget_tokens": 1024}}


def test_anthropic_automatic_caching_marks_the_last_message():
    body = {"cache_control": HOUR, "system": "S", "messages": [USER, USER]}
    request = parse(body)
    assert request.cache_breakpoints == (("messages[1]", 3600.0),)
    assert request.params == {"cache_control": HOUR}


def test_anthropic_tool_result_marker_names_the_tool_message():
    body = {
        "system": "S",
        "messages": [
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": "x",
                        "cache_control": EPHEMERAL,
                    }
                ],
            }
        ],
    }
    request = parse(body)
    assert request.messages == ({"role": "tool", "tool_call_id": "t", "content": "x"},)
    assert request.cache_breakpoints == (("messages[0]", 300.0),)


def test_litellm_payload():
    payload = {
        "id": "1",
        "trace_id": "trace-9",
        "startTime": 1740992418.5,
        "model": "gpt-4o",
        "messages": [USER],
        "model_parameters": {"tools": [{"type": "function", "function": {}}], "temperature": 0},
        "response": {"usage": {"prompt_tokens": 50, "prompt_tokens_details": {"cached_tokens": 0}}},
        "metadata": {"user_api_key_hash": "h"},
    }
    request = parse(payload)
    assert request.format == "litellm"
    assert request.session_id == "trace-9"
    assert request.timestamp == 1740992418.5
    assert len(request.tools) == 1
    assert request.params == {}
    assert (request.usage.prompt_tokens, request.usage.cached_tokens) == (50, 0)


def test_litellm_string_messages_and_top_level_tokens():
    request = parse({"messages": "Just text", "model_parameters": {}, "prompt_tokens": 7})
    assert request.messages == ({"role": "user", "content": "Just text"},)
    assert request.usage.prompt_tokens == 7
    assert request.usage.cached_tokens is None


SEMCONV = {
    "gen_ai.request.model": "gpt-4o",
    "gen_ai.conversation.id": "conv-1",
    "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Sys."}]),
    "gen_ai.input.messages": json.dumps(
        [
            {"role": "user", "parts": [{"type": "text", "content": "Weather?"}]},
            {
                "role": "assistant",
                "parts": [{"type": "tool_call", "id": "c", "name": "w", "arguments": {"c": 1}}],
            },
            {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": "c", "response": "sun"}],
            },
        ]
    ),
    "gen_ai.tool.definitions": json.dumps([{"type": "function", "name": "w"}]),
    "gen_ai.usage.input_tokens": 120,
    "gen_ai.usage.cache_read.input_tokens": 64,
    "gen_ai.request.temperature": 0.1,
    "gen_ai.request.seed": 5,
}
SEMCONV_MESSAGES = (
    {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
    {
        "role": "assistant",
        "content": [],
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "w", "arguments": {"c": 1}}}
        ],
    },
    {"role": "tool", "tool_call_id": "c", "content": "sun"},
)


def otlp(attributes):
    def value(v):
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}

    return [
        {"key": k, "value": value(v)} for k, v in attributes.items() if not isinstance(v, float)
    ]


@pytest.mark.parametrize(
    "span",
    [
        {"name": "chat", "start_time": "2025-03-03T09:00:00Z", "attributes": SEMCONV},
        {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {
                            "spans": [
                                {
                                    "startTimeUnixNano": "1740992400000000000",
                                    "attributes": otlp(SEMCONV),
                                }
                            ]
                        }
                    ]
                }
            ]
        },
    ],
)
def test_otel_semconv_span(span):
    request = parse(span)
    assert request.format == "otel"
    assert request.model == "gpt-4o"
    assert request.system == "Sys."
    assert request.messages == SEMCONV_MESSAGES
    assert request.tools == ({"type": "function", "name": "w"},)
    assert request.session_id == "conv-1"
    assert request.timestamp == 1740992400.0
    assert (request.usage.prompt_tokens, request.usage.cached_tokens) == (120, 64)
    assert request.usage.cache_write_tokens is None


def test_otel_document_whose_span_is_not_an_object_is_skipped_with_the_reason():
    skipped = parse({"resourceSpans": [{"scopeSpans": [{"spans": [5]}]}]})
    assert isinstance(skipped, SkippedLine)
    assert skipped.reason == "the span of the OTLP document is not an object"


def test_otel_flattened_prompt_attributes():
    attributes = {
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.prompt.0.role": "system",
        "gen_ai.prompt.0.content": "Sys.",
        "gen_ai.prompt.1.role": "user",
        "gen_ai.prompt.1.content": "Hi",
        "gen_ai.prompt.2.role": "assistant",
        "gen_ai.prompt.2.tool_calls.0.id": "c",
        "gen_ai.prompt.2.tool_calls.0.name": "w",
        "gen_ai.prompt.2.tool_calls.0.arguments": "{}",
        "gen_ai.prompt.3.role": "tool",
        "gen_ai.prompt.3.tool_call_id": "c",
        "gen_ai.prompt.3.content": "ok",
        "gen_ai.prompt.10.role": "user",
        "gen_ai.prompt.10.content": "last",
        "llm.request.functions.0.name": "w",
        "llm.request.functions.0.parameters": '{"type": "object"}',
    }
    request = parse({"attributes": attributes})
    assert [m["role"] for m in request.messages] == ["system", "user", "assistant", "tool", "user"]
    assert request.messages[2]["tool_calls"][0]["function"] == {"name": "w", "arguments": "{}"}
    assert request.messages[3]["tool_call_id"] == "c"
    assert request.tools[0]["function"]["parameters"] == {"type": "object"}
    assert request.usage is None


def test_otel_message_events():
    span = {
        "attributes": {"gen_ai.request.model": "m"},
        "events": [
            {"name": "gen_ai.system.message", "attributes": {"content": "Sys."}},
            {"name": "gen_ai.user.message", "body": {"content": "Hi"}},
            {"name": "gen_ai.choice", "body": {"message": {"content": "ignored"}}},
        ],
    }
    request = parse(span)
    assert request.messages == (
        {"role": "system", "content": "Sys."},
        {"role": "user", "content": "Hi"},
    )


def test_mooncake_record():
    request = parse(
        {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47]}
    )
    assert request.format == "mooncake"
    assert request.timestamp == 27.482
    assert (request.input_length, request.output_length, request.hash_ids) == (6955, 52, (46, 47))
    assert request.messages == ()


@pytest.mark.parametrize(
    ("envelope", "timestamp", "session"),
    [
        ({"timestamp": "2025-03-03T09:00:00Z", "session_id": "s"}, 1740992400.0, "s"),
        ({"ts": 1740992400}, 1740992400.0, None),
        ({"time": 1740992400123}, 1740992400.123, None),
        ({"timestamp": 1740992400000000}, 1740992400.0, None),
        ({"created_at": "2025-03-03T10:00:00+01:00"}, 1740992400.0, None),
        ({"metadata": {"session_id": "m"}}, None, "m"),
        ({"user": "u-1"}, None, "u-1"),
        ({"timestamp": "yesterday"}, None, None),
    ],
)
def test_envelope_variants(envelope, timestamp, session):
    request = parse({**envelope, "route": "/v1/chat/completions", "request": {"messages": [USER]}})
    expected = None if timestamp is None else pytest.approx(timestamp)
    assert request.timestamp == expected
    assert request.session_id == session
    assert request.route == "/v1/chat/completions"


def test_body_user_and_anthropic_metadata_name_the_session():
    assert parse({"messages": [USER], "user": "end-user"}).session_id == "end-user"
    body = {"system": "S", "messages": [USER], "metadata": {"user_id": "acct-7"}}
    assert parse(body).session_id == "acct-7"


def test_forced_format_overrides_detection():
    request = parse({"messages": [USER], "system": "ignored by openai-chat"}, format="openai-chat")
    assert isinstance(request, ChatRequest)
    assert request.format == "openai-chat"
    skipped = parse({"messages": [USER]}, format="mooncake")
    assert isinstance(skipped, SkippedLine)
    assert "hash_ids" in skipped.reason


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (1740992400, 1740992400.0),
        (1740992400.5, 1740992400.5),
        (1740992400500, 1740992400.5),
        (1740992400500000, 1740992400.5),
        (1740992400500000000, 1740992400.5),
        ("1740992400", 1740992400.0),
        ("2025-03-03T09:00:00.500Z", 1740992400.5),
        ("2025-03-03 09:00:00+00:00", 1740992400.0),
        ("2025-03-03T09:00:00", 1740992400.0),
        ("nan", None),
        (float("inf"), None),
        (None, None),
        (True, None),
        ("not a time", None),
    ],
)
def test_parse_timestamp(value, seconds):
    assert parse_timestamp(value) == seconds
