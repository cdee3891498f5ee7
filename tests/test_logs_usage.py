"""Provider usage read into Usage: absent fields are None, never zero."""

from __future__ import annotations

import json

import pytest

from prefixlint.request import Usage
from prefixlint.sources.logs import parse_line

CHAT = {"model": "gpt-4o", "messages": [{"role": "user", "content": "Hi"}]}
RESPONSES = {"model": "gpt-4.1", "input": "Hi"}
ANTHROPIC = {"model": "claude", "system": "S", "messages": [{"role": "user", "content": "Hi"}]}


def usage_of(request, response):
    line = json.dumps({"request": request, "response": response}).encode()
    return parse_line(1, line).usage


@pytest.mark.parametrize(
    ("request_body", "response", "expected"),
    [
        (CHAT, {}, None),
        (CHAT, {"usage": None}, None),
        (CHAT, {"usage": {"prompt_tokens": 2000}}, Usage(2000, None, None)),
        (
            CHAT,
            {"usage": {"prompt_tokens": 2000, "prompt_tokens_details": {"cached_tokens": 0}}},
            Usage(2000, 0, None),
        ),
        (
            CHAT,
            {"usage": {"prompt_tokens": 2000, "prompt_tokens_details": {"cached_tokens": 1920}}},
            Usage(2000, 1920, None),
        ),
        (
            CHAT,
            {
                "usage": {
                    "prompt_tokens": 3000,
                    "prompt_tokens_details": {"cached_tokens": 1024, "cache_write_tokens": 1976},
                }
            },
            Usage(3000, 1024, 1976),
        ),
        (CHAT, {"usage": {"prompt_tokens": 90, "cached_tokens": 64}}, Usage(90, 64, None)),
        (
            CHAT,
            {"usage": {"prompt_tokens": 90, "prompt_cache_hit_tokens": 64}},
            Usage(90, 64, None),
        ),
        (RESPONSES, {"usage": {"input_tokens": 1500}}, Usage(1500, None, None)),
        (
            RESPONSES,
            {"usage": {"input_tokens": 1500, "input_tokens_details": {"cached_tokens": 1152}}},
            Usage(1500, 1152, None),
        ),
        (ANTHROPIC, {"usage": {"input_tokens": 12, "output_tokens": 3}}, Usage(12, None, None)),
        (
            ANTHROPIC,
            {
                "usage": {
                    "input_tokens": 10,
                    "cache_read_input_tokens": 2000,
                    "cache_creation_input_tokens": 300,
                }
            },
            Usage(2310, 2000, 300),
        ),
        (
            ANTHROPIC,
            {"usage": {"input_tokens": 10, "cache_read_input_tokens": 0}},
            Usage(10, 0, None),
        ),
        (ANTHROPIC, {"usage": {"cache_read_input_tokens": 5}}, Usage(None, 5, None)),
        (CHAT, {"usage": {"prompt_tokens": "many"}}, Usage(None, None, None)),
    ],
)
def test_usage(request_body, response, expected):
    assert usage_of(request_body, response) == expected


def test_litellm_reads_anthropic_cache_fields_from_openai_shaped_usage():
    payload = {
        "messages": [{"role": "user", "content": "Hi"}],
        "model_parameters": {},
        "response": {
            "usage": {
                "prompt_tokens": 2310,
                "cache_read_input_tokens": 2000,
                "cache_creation_input_tokens": 300,
            }
        },
    }
    usage = parse_line(1, json.dumps(payload).encode()).usage
    assert usage == Usage(2310, 2000, 300)


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({}, None),
        ({"gen_ai.usage.input_tokens": 40}, Usage(40, None, None)),
        (
            {"gen_ai.usage.input_tokens": 40, "gen_ai.usage.cache_read.input_tokens": 0},
            Usage(40, 0, None),
        ),
        (
            {"gen_ai.usage.prompt_tokens": 40, "gen_ai.usage.cache_creation_input_tokens": 8},
            Usage(40, None, 8),
        ),
    ],
)
def test_otel_usage(attributes, expected):
    span = {
        "attributes": {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "x", **attributes}
    }
    assert parse_line(1, json.dumps(span).encode()).usage == expected
