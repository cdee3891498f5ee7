"""Components of a rendered prompt: names, order, and lookup by token or character."""

from __future__ import annotations

from itertools import pairwise

import pytest
from test_chat_qwen3 import CASES, USER, jinja_render

from prefixlint.chat import content_text, render, template_messages
from prefixlint.request import ChatRequest

TOOLS = (
    {"name": "get_user", "description": "Look up a user.", "input_schema": {"type": "object"}},
    {"name": "book", "description": "Book a flight.", "input_schema": {"type": "object"}},
)
ANTHROPIC = ChatRequest(
    line=1,
    format="anthropic",
    system="You are an airline agent.",
    messages=({"role": "user", "content": "Hi"},),
    tools=TOOLS,
)


@pytest.mark.parametrize("name", CASES)
def test_components_partition_text_and_tokens(name):
    rendered = render(CASES[name])
    components = rendered.components
    assert components[0].char_start == 0 and components[0].token_start == 0
    assert components[-1].char_end == len(rendered.text)
    assert components[-1].token_end == len(rendered.tokens)
    for before, after in pairwise(components):
        assert before.char_end == after.char_start
        assert before.token_end == after.token_start
    assert components[-1].name == "generation_prompt"


@pytest.mark.parametrize("name", CASES)
def test_each_token_maps_to_the_component_holding_its_first_character(name):
    from prefixlint.tokenizers import get_tokenizer

    rendered = render(CASES[name], tokenizer="qwen-raw")
    offsets = get_tokenizer("qwen-raw").offsets(rendered.text)
    for index, (start, _) in enumerate(offsets):
        assert rendered.component_at_token(index) == rendered.component_at_char(start)


def test_component_names_follow_the_request():
    rendered = render(CASES["tools with system"])
    assert [c.name for c in rendered.components] == [
        "messages[0]",
        "tools",
        "tools[0]",
        "tools[1]",
        "tools",
        "messages[1]",
        "generation_prompt",
    ]
    user = rendered.components[5]
    assert rendered.text[user.char_start : user.char_end] == (
        "<|im_start|>user\nWhat's the weather in Paris?<|im_end|>\n"
    )


def test_system_field_is_named_system():
    rendered = render(CASES["system field"])
    assert [c.name for c in rendered.components] == ["system", "messages[0]", "generation_prompt"]


def test_anthropic_requests_put_tools_before_system():
    rendered = render(ANTHROPIC)
    assert rendered.template == "qwen3+anthropic-order"
    names = [c.name for c in rendered.components]
    assert names == [
        "tools",
        "tools[0]",
        "tools[1]",
        "tools",
        "system",
        "messages[0]",
        "generation_prompt",
    ]
    text = rendered.text
    assert text.index('"get_user"') < text.index('"book"') < text.index("You are an airline agent.")
    assert text.startswith("<|im_start|>system\n# Tools\n")


def test_anthropic_tool_change_invalidates_the_system_prompt_too():
    changed = ChatRequest(
        line=2,
        format="anthropic",
        system=ANTHROPIC.system,
        messages=ANTHROPIC.messages,
        tools=TOOLS[:1],
    )
    first, second = render(ANTHROPIC), render(changed)
    shared = next(
        i for i, (a, b) in enumerate(zip(first.tokens, second.tokens, strict=False)) if a != b
    )
    assert first.component_at_token(shared).name in {"tools[1]", "tools"}
    system = next(c for c in first.components if c.name == "system")
    assert system.token_start > shared


def test_component_lookup_outside_the_prompt():
    rendered = render(CASES["user only"])
    assert rendered.component_at_token(len(rendered.tokens)) is None
    assert rendered.component_at_token(-1) is None
    assert rendered.component_at_char(0).name == "messages[0]"


@pytest.mark.parametrize(
    ("content", "text"),
    [
        (None, ""),
        ("plain", "plain"),
        ([{"type": "text", "text": "a"}, {"type": "input_text", "text": "b"}], "a\nb"),
        (
            [{"type": "image_url", "image_url": {"url": "x"}}],
            "<|vision_start|><|image_pad|><|vision_end|>",
        ),
        ({"type": "text", "text": "one part"}, "one part"),
        (["bare", "strings"], "bare\nstrings"),
        ([{"text": "untyped"}], "untyped"),
        (
            {"reservation_id": "UM3OG5", "cabin": "économie"},
            '{"reservation_id": "UM3OG5", "cabin": "économie"}',
        ),
        ([1, {"a": None}], '1\n{"a": null}'),
        (42, "42"),
    ],
)
def test_content_text(content, text):
    assert content_text(content) == text


def test_remembered_tool_blocks_keep_key_order_and_types():
    function = {"name": "f", "description": "d", "parameters": {"type": "object", "x": 1}}
    variants = [
        {"type": "function", "function": function},
        {"function": function, "type": "function"},
        {"type": "function", "function": {**function, "parameters": {"x": 1, "type": "object"}}},
        {"type": "function", "function": {**function, "parameters": {"type": "object", "x": 1.0}}},
        {"type": "function", "function": {**function, "parameters": {"type": "object", "x": True}}},
    ]
    texts = set()
    for tool in variants * 2:  # the second round comes from the memo
        request = ChatRequest(line=1, format="openai-chat", messages=(USER,), tools=(tool,))
        rendered = render(request)
        assert rendered.text == jinja_render(template_messages(request), request.tools)
        texts.add(rendered.text)
    assert len(texts) == len(variants)


def test_a_role_that_is_not_a_string_renders_no_turn():
    # The log readers refuse such a role; the renderer, called directly, gives it no turn
    # (the template matches no role) instead of failing to look up its alias.
    odd = ChatRequest(line=1, format="openai", messages=({"role": ["user"], "content": "x"}, USER))
    plain = ChatRequest(line=1, format="openai", messages=(USER,))
    assert render(odd).text == render(plain).text
