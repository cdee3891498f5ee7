"""The Python Qwen3 renderer against the official Jinja template, rendered as transformers does."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import jinja2.ext
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jinja2.sandbox import ImmutableSandboxedEnvironment

from prefixlint.chat import render, template_messages
from prefixlint.request import ChatRequest
from prefixlint.tokenizers import get_tokenizer

TEMPLATE = Path(__file__).parent.parent / "fixtures" / "chat_templates" / "qwen3.jinja"

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather for a city, in °C — «quoted»",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
SEARCH = {"type": "function", "name": "search", "parameters": {"type": "object"}}


def call(name, arguments, call_id="call_1", wrapped=True):
    function = {"name": name, "arguments": arguments}
    return {"id": call_id, "type": "function", "function": function} if wrapped else function


def request(messages, tools=(), system=None, format="openai-chat"):
    return ChatRequest(
        line=1, format=format, system=system, messages=tuple(messages), tools=tuple(tools)
    )


USER = {"role": "user", "content": "What's the weather in Paris?"}
SYSTEM = {"role": "system", "content": "You are a helpful assistant.\n\nBe brief."}

CASES = {
    "user only": request([USER]),
    "system and user": request([SYSTEM, USER]),
    "system field": request([USER], system="Instructions\n"),
    "tools without system": request([USER], tools=[WEATHER]),
    "tools with system": request([SYSTEM, USER], tools=[WEATHER, SEARCH]),
    "multi-turn": request(
        [
            SYSTEM,
            USER,
            {"role": "assistant", "content": "Sunny."},
            {"role": "user", "content": "And tomorrow?"},
        ]
    ),
    "tool call, dict arguments": request(
        [
            USER,
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [call("get_weather", {"city": "Paris"})],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": '{"temp": 21}'},
        ],
        tools=[WEATHER],
    ),
    "tool calls, string arguments, unwrapped, with content": request(
        [
            USER,
            {
                "role": "assistant",
                "content": "Let me check.",
                "tool_calls": [
                    call("get_weather", '{"city":"Paris"}'),
                    call("search", '{"q": "Paris"}', "call_2", wrapped=False),
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "21°C"},
            {"role": "tool", "tool_call_id": "call_2", "content": "Paris, France"},
            {"role": "assistant", "content": "It is 21°C."},
            {"role": "user", "content": "Thanks"},
        ],
        tools=[WEATHER, SEARCH],
    ),
    "reasoning after the last query": request(
        [
            USER,
            {
                "role": "assistant",
                "content": "",
                "reasoning_content": "\nNeed the tool.\n",
                "tool_calls": [call("get_weather", {"city": "Paris"})],
            },
            {"role": "tool", "content": "21"},
        ]
    ),
    "reasoning before the last query is dropped": request(
        [
            USER,
            {"role": "assistant", "content": "Sunny.", "reasoning_content": "Think."},
            {"role": "user", "content": "More?"},
            {"role": "assistant", "content": "<think>\ninline\n</think>\n\nYes."},
        ]
    ),
    "inline think in history": request(
        [
            USER,
            {"role": "assistant", "content": "<think>a</think>b"},
            {"role": "user", "content": "c"},
        ]
    ),
    "reasoning under other names": request(
        [
            USER,
            {"role": "assistant", "content": "x", "reasoning": "r1"},
            {"role": "assistant", "content": "y", "thinking": "r2"},
        ]
    ),
    "wrapped tool response is not a query": request(
        [
            USER,
            {"role": "assistant", "content": "a", "reasoning_content": "r"},
            {"role": "user", "content": "<tool_response>\nok\n</tool_response>"},
        ]
    ),
    "content as parts": request(
        [
            {"role": "developer", "content": [{"type": "text", "text": "Dev rules."}]},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Look:"},
                    {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
                    {"type": "text", "text": "what is it?"},
                ],
            },
        ]
    ),
    "second system message": request([SYSTEM, USER, {"role": "system", "content": "Late."}]),
    "unknown role renders nothing": request([USER, {"role": "critic", "content": "hidden"}]),
    "legacy function message": request(
        [USER, {"role": "function", "name": "f", "content": "result"}]
    ),
    "unicode and whitespace": request(
        [{"role": "user", "content": "  café\r\n\tnaïve 東京 😀 \u00a0 e\u0301  "}]
    ),
}


@cache
def official_template():
    """The template compiled with transformers' environment settings."""
    environment = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(
            value,
            ensure_ascii=ensure_ascii,
            indent=indent,
            separators=separators,
            sort_keys=sort_keys,
        )

    environment.filters["tojson"] = tojson
    return environment.from_string(TEMPLATE.read_text(encoding="utf-8"))


def jinja_render(messages, tools, *, enable_thinking=False):
    return official_template().render(
        messages=messages,
        tools=list(tools) or None,
        add_generation_prompt=True,
        enable_thinking=enable_thinking,
    )


def transformers_render(messages, tools, *, enable_thinking=False):
    from transformers.utils.chat_template_utils import render_jinja_template

    rendered, _ = render_jinja_template(
        conversations=[messages],
        tools=list(tools) or None,
        chat_template=TEMPLATE.read_text(encoding="utf-8"),
        add_generation_prompt=True,
        enable_thinking=enable_thinking,
    )
    return rendered[0]


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("enable_thinking", [False, True])
def test_text_equals_official_template(name, enable_thinking):
    req = CASES[name]
    ours = render(req, enable_thinking=enable_thinking)
    expected = jinja_render(template_messages(req), req.tools, enable_thinking=enable_thinking)
    assert ours.text == expected
    assert list(ours.tokens) == get_tokenizer("qwen").encode(expected)


@pytest.mark.parametrize("name", CASES)
def test_text_equals_transformers(name):
    req = CASES[name]
    expected = transformers_render(template_messages(req), req.tools)
    assert render(req).text == expected


def test_non_thinking_generation_prompt():
    assert render(CASES["user only"]).text.endswith(
        "<|im_start|>assistant\n<think>\n\n</think>\n\n"
    )
    assert render(CASES["user only"], enable_thinking=True).text.endswith("<|im_start|>assistant\n")


# ------------------------------------------------------------------ generated conversations

FRAGMENTS = st.sampled_from(
    [
        "\n",
        "\n\n",
        " ",
        "<think>",
        "</think>",
        "<tool_response>",
        "</tool_response>",
        "é",
        "e\u0301",
    ]
)
TEXT = st.lists(st.one_of(st.text(max_size=12), FRAGMENTS), max_size=5).map("".join)
ARGUMENTS = st.one_of(
    st.dictionaries(st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=5)), max_size=3),
    st.text(max_size=10),
)
TOOL_CALL = st.builds(call, st.text(max_size=8), ARGUMENTS, st.text(max_size=4), st.booleans())
REASONING = st.one_of(st.none(), TEXT)


@st.composite
def messages_strategy(draw):
    messages = []
    if draw(st.booleans()):
        messages.append(
            {"role": draw(st.sampled_from(["system", "developer"])), "content": draw(TEXT)}
        )
    for _ in range(draw(st.integers(1, 7))):
        role = draw(st.sampled_from(["user", "assistant", "tool", "system"]))
        message = {"role": role, "content": draw(st.one_of(TEXT, st.none()))}
        if role == "assistant":
            if draw(st.booleans()):
                message["tool_calls"] = draw(st.lists(TOOL_CALL, min_size=1, max_size=3))
            reasoning = draw(REASONING)
            if reasoning is not None:
                message["reasoning_content"] = reasoning
        if role == "user" and draw(st.booleans()):
            message["content"] = [
                {"type": "text", "text": draw(TEXT)},
                {"type": "text", "text": "x"},
            ]
        messages.append(message)
    return messages


TOOLS = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.just("function"),
            "function": st.fixed_dictionaries({"name": st.text(max_size=8)}),
        }
    ),
    max_size=3,
)
REQUESTS = st.builds(
    lambda messages, tools, system: request(messages, tools, system),
    messages_strategy(),
    TOOLS,
    st.one_of(st.none(), TEXT),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(REQUESTS, st.booleans())
def test_generated_requests_equal_official_template(req, enable_thinking):
    ours = render(req, enable_thinking=enable_thinking)
    expected = jinja_render(template_messages(req), req.tools, enable_thinking=enable_thinking)
    assert ours.text == expected
