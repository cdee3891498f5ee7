"""Rendering turn by turn from remembered blocks gives exactly what rendering whole gives."""

from __future__ import annotations

import dataclasses
from array import array
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_chat_qwen3 import CASES, REQUESTS

from prefixlint.chat import Renderer, message_key
from prefixlint.chat.pieces import separable
from prefixlint.request import ChatRequest, Rendered
from prefixlint.sources.logs import read_log

LOGS = Path(__file__).parent.parent / "fixtures" / "logs"


def assert_same(rendered: Rendered, whole: Rendered) -> None:
    assert rendered == whole
    assert rendered.packed == array("q", whole.tokens).tobytes()


def prefixes(request):
    """The request as a log shows it turn by turn: every prefix of its messages."""
    for count in range(1, len(request.messages) + 1):
        yield dataclasses.replace(request, messages=request.messages[:count])


@pytest.mark.parametrize("name", CASES)
@pytest.mark.parametrize("format", ["openai-chat", "anthropic"])
@pytest.mark.parametrize("enable_thinking", [False, True])
def test_cases_render_as_whole(name, format, enable_thinking):
    renderer = Renderer(enable_thinking=enable_thinking)
    whole = Renderer(enable_thinking=enable_thinking)
    for request in [*prefixes(dataclasses.replace(CASES[name], format=format))] * 2:
        assert_same(renderer.render(request), whole.render_whole(request))
    assert renderer.turns.hits > 0


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(REQUESTS, min_size=1, max_size=3), st.sampled_from(["openai-chat", "anthropic"]))
def test_generated_conversations_render_as_whole(requests, format):
    renderer = Renderer(cache_size=8)  # small, so that blocks are also forgotten and redone
    for request in requests:
        for turn in prefixes(dataclasses.replace(request, format=format)):
            assert_same(renderer.render(turn), Renderer().render_whole(turn))


@pytest.mark.parametrize(
    "name", ["tau_openai_breakers", "tau_anthropic_breakers", "responses_small", "otel_spans"]
)
def test_fixture_logs_render_as_whole(name):
    renderer = Renderer()
    whole = Renderer()
    for request in read_log(str(LOGS / f"{name}.jsonl")):
        assert_same(renderer.render(request), whole.render_whole(request))
    assert renderer.turns.hits > 0


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ({"role": "user", "content": "1"}, {"role": "user", "content": 1}),
        ({"role": "user", "content": 1}, {"role": "user", "content": True}),
        ({"role": "user", "content": 1}, {"role": "user", "content": 1.0}),
        ({"role": "user", "content": ""}, {"role": "user", "content": None}),
        ({"role": "user", "content": "a"}, {"role": "system", "content": "a"}),
        ({"role": "tool", "content": "a"}, {"role": "function", "content": "a"}),
        (
            {"role": "user", "content": [{"type": "text", "text": "a"}]},
            {"role": "user", "content": [{"type": "text", "text": "b"}]},
        ),
        (
            {"role": "assistant", "content": "a", "reasoning_content": "r"},
            {"role": "assistant", "content": "a", "thinking": "s"},
        ),
        (
            {"role": "assistant", "content": "a"},
            {"role": "assistant", "content": "a", "reasoning": ""},
        ),
        (
            {"role": "assistant", "content": "a", "tool_calls": [{"name": "f", "arguments": 1}]},
            {"role": "assistant", "content": "a", "tool_calls": [{"name": "f", "arguments": True}]},
        ),
        (
            {"role": "assistant", "content": "a", "tool_calls": [{"name": ["f"]}]},
            {"role": "assistant", "content": "a", "tool_calls": [{"name": ("f",)}]},
        ),
    ],
)
def test_messages_that_may_render_differently_have_different_keys(one, other):
    assert message_key(one) != message_key(other)


@pytest.mark.parametrize(
    ("message", "key"),
    [
        ({"role": "user", "content": "a", "tool_call_id": "x"}, ("user", "a")),
        ({"role": "assistant", "content": None, "tool_calls": []}, ("assistant", None, None, None)),
        ({"role": "user", "content": object()}, None),  # no exact stand-in: not remembered
        ({"role": "assistant", "content": "a", "reasoning_content": 3}, None),
    ],
)
def test_message_keys(message, key):
    assert message_key(message) == key


class PairTokenizer:
    """A toy tokenizer whose tokens are character pairs, so tokens span any boundary."""

    def encode(self, text: str) -> list[int]:
        return [hash(text[i : i + 2]) & 0xFFFF for i in range(0, len(text), 2)]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return [(i, min(i + 2, len(text))) for i in range(0, len(text), 2)]


def test_inseparable_blocks_render_whole():
    renderer = Renderer(tokenizer=PairTokenizer())
    request = CASES["multi-turn"]
    assert not separable(renderer._blocks(request, False)[0])
    assert_same(renderer.render(request), Renderer(tokenizer=PairTokenizer()).render_whole(request))


def test_packed_is_computed_when_not_given():
    rendered = Rendered("ab", (1, 2, 1 << 40), (), "qwen3")
    assert rendered.packed == array("q", [1, 2, 1 << 40]).tobytes()
    assert dataclasses.replace(rendered, tokens=(7,)).packed == array("q", [7]).tobytes()
    assert Rendered("ab", (1,), (), "qwen3", b"given").packed == b"given"


def test_tool_lists_are_rekeyed_unless_they_hold_the_same_objects():
    # A log reader shares a repeated tool list's dicts between requests; the renderer
    # reuses their key only for the very same dicts, never for a different list.
    weather = {"type": "function", "function": {"name": "weather", "parameters": {}}}
    clock = {"type": "function", "function": {"name": "clock", "parameters": {}}}
    messages = ({"role": "user", "content": "Hi"},)
    renderer = Renderer()
    for tools in [(weather,), (weather,), (clock,), (dict(clock),), (weather, clock)]:
        request = ChatRequest(line=1, format="openai-chat", messages=messages, tools=tools)
        assert_same(renderer.render(request), Renderer().render_whole(request))
