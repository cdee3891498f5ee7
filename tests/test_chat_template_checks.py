"""Chat templates run on a synthetic conversation: PFX503, PFX101 and PFX304."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from prefixlint.context import RuleContext
from prefixlint.rules.chat_template.chat_template_tool_placement import tool_placement
from prefixlint.rules.chat_template.non_monotonic_chat_template import first_break
from prefixlint.sources import chat_template
from prefixlint.sources.chat_template import conversation
from prefixlint.tokenizers import get_tokenizer

TEMPLATES = Path(__file__).parent.parent / "fixtures" / "chat_templates"
CODES = frozenset({"PFX503", "PFX101", "PFX304"})


def _findings(path: str, text: str, codes=CODES):
    return chat_template.check(text, RuleContext(path, codes))


def _fixture(name: str) -> str:
    return (TEMPLATES / name).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "expected"),
    (
        ("qwen3.jinja", {("PFX503", 39)}),  # the `if` that drops earlier reasoning
        ("hermes.jinja", {("PFX304", 5)}),
        ("chatml.jinja", set()),
        ("llama3.jinja", {("PFX101", 5)}),
        ("mistral_v03.jinja", {("PFX503", 18)}),
    ),
)
def test_fixture_findings(name, expected):
    found = _findings(name, _fixture(name))
    assert {(f.code, f.span.line) for f in found} == expected


def test_tools_before_the_system_prompt_are_reported():
    [found] = _findings("hermes.jinja", _fixture("hermes.jinja"), frozenset({"PFX304"}))
    assert found.extra["placement"] == "start"
    assert found.severity.value == "info"
    assert "before the system prompt" in found.message


@pytest.mark.parametrize(
    ("name", "placement"),
    (
        ("qwen3.jinja", "after-system"),  # the layout to use
        ("chatml.jinja", "after-system"),
        ("llama3.jinja", "after-system"),
        ("mistral_v03.jinja", "last-turn"),  # PFX503 reports the move
    ),
)
def test_other_tool_placements_are_quiet(name, placement):
    [document] = chat_template.parse(name, _fixture(name))
    found = tool_placement(document, get_tokenizer())
    assert found is not None and found.kind == placement
    assert _findings(name, _fixture(name), frozenset({"PFX304"})) == []


@pytest.mark.parametrize(
    ("style", "breaks"),
    (("none", False), ("content", True), ("field", True)),
)
def test_qwen3_is_monotonic_only_without_reasoning(style, breaks):
    [document] = chat_template.parse("qwen3.jinja", _fixture("qwen3.jinja"))
    found = first_break(document, document.with_reasoning(style), get_tokenizer())
    assert (found is not None) == breaks
    if breaks:
        # the tool loop keeps reasoning; the next user question drops it
        assert found.turn == 2
        assert "reasoning of message 2" in found.cause
        assert found.window["left"].startswith("<think>")
        assert found.lost_tokens > 0


def test_pfx503_message_names_turn_tokens_and_lines():
    [found] = _findings("qwen3.jinja", _fixture("qwen3.jinja"), frozenset({"PFX503"}))
    assert "turn 2's cached tokens are not a prefix of turn 3's prompt" in found.message
    assert "'<think>" in found.message
    assert found.extra["cached_template_line"] == 41
    assert found.stable_prefix_tokens == found.extra["window"]["token"]


def test_mistral_names_what_moves():
    [found] = _findings("m.jinja", _fixture("mistral_v03.jinja"), frozenset({"PFX503"}))
    assert found.extra["cause"] == "the system prompt and the tool definitions move every turn"


LAST_TURN_SYSTEM = """\
{%- set system = messages[0].content if messages[0].role == 'system' else '' %}
{%- for message in messages if message.role != 'system' %}
{%- if message.role == 'user' and loop.last %}
{{- '[INST] ' + system + '\\n\\n' + message.content + '[/INST]' }}
{%- elif message.role == 'user' %}
{{- '[INST] ' + message.content + '[/INST]' }}
{%- else %}
{{- ' ' + message.content + '</s>' }}
{%- endif %}
{%- endfor %}
"""


def test_the_branch_that_attaches_the_system_prompt_to_the_last_turn_is_blamed():
    [found] = _findings("t.jinja", LAST_TURN_SYSTEM, frozenset({"PFX503"}))
    assert found.extra["cause"].startswith("the system prompt")
    assert found.span.line == 4
    assert found.extra["template_line"] == 6  # where the next prompt renders that turn


TOOLS_AND_SYSTEM_LAST = """\
{%- set system = messages[0].content if messages[0].role == 'system' else '' %}
{%- set users = messages | selectattr('role', 'equalto', 'user') | list %}
{%- for message in messages if message.role != 'system' %}
{%- if message.role == 'user' %}
{%- if tools and message == users[-1] %}{{- '[TOOLS]' + (tools | tojson) + '[/TOOLS]' }}{%- endif %}
{%- if loop.last %}{{- '[INST] ' + system + '\\n\\n' + message.content + '[/INST]' }}
{%- else %}{{- '[INST] ' + message.content + '[/INST]' }}{%- endif %}
{%- elif message.role == 'tool' %}{{- '[RESULT]' + message.content + '[/RESULT]' }}
{%- else %}{{- ' ' + (message.content or '') + '</s>' }}{%- endif %}
{%- endfor %}
"""


def test_each_line_to_blame_is_reported_from_the_first_turn_it_breaks():
    found = _findings("t.jinja", TOOLS_AND_SYSTEM_LAST, frozenset({"PFX503"}))
    causes = {f.span.line: f.extra["cause"] for f in found}
    assert causes == {
        6: "the system prompt is dropped from the next prompt",
        5: "the tool definitions move every turn",
    }


THINK_OPENER = """\
{{- bos_token }}
{%- for message in messages %}
{%- if message.role == 'user' %}{{- '<U>' + message.content }}
{%- elif message.role == 'assistant' %}
{{- '<A>' + message.content.split('</think>')[-1] + '<E>' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<A><think>\\n' }}{% endif %}
"""


def test_a_generation_prompt_that_history_does_not_repeat_is_named():
    [found] = _findings("t.jinja", THINK_OPENER, frozenset({"PFX503"}))
    assert found.extra["cause"] == (
        "the next prompt renders the answer without the generation prompt's '<think>\\n', so"
        " what the model generated after it is not reused"
    )
    assert found.span.line == 5  # the line that renders the answer in history


MINUTE_CLOCK = """\
{{- '<|im_start|>system\\nNow: ' + strftime_now('%Y-%m-%d %H:%M') + '<|im_end|>\\n' }}
{%- for message in messages %}
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}
"""
FIXED_DATE = """\
{%- set date_string = date_string if date_string is defined else '26 Jul 2024' %}
{{- 'Today Date: ' + date_string + '\\n' }}
{%- for message in messages %}
{{- message.role + ': ' + message.content + '\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- 'assistant: ' }}{%- endif %}
"""
LAST_TURN_CLOCK = """\
{%- for message in messages %}
{{- message.role + ': ' }}
{%- if loop.last and message.role == 'user' %}
{{- '(' + strftime_now('%Y-%m-%d') + ') ' }}
{%- endif %}
{{- message.content + '\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- 'assistant: ' }}{%- endif %}
"""
EVERY_USER_TURN_CLOCK = LAST_TURN_CLOCK.replace("loop.last and ", "")
MONTH_CLOCK = FIXED_DATE.replace("'26 Jul 2024'", "strftime_now('%B %Y')")
UNUSED_CLOCK = FIXED_DATE.replace("'26 Jul 2024'", "'x' if strftime_now('%Y') else 'y'")


@pytest.mark.parametrize(
    ("text", "granularity"),
    (
        (MINUTE_CLOCK, "minute"),
        (_fixture("llama3.jinja"), "day"),
        (MONTH_CLOCK, "month"),
        (FIXED_DATE, None),
        (UNUSED_CLOCK, None),
        # only in the newest user turn: no cached token depends on it (PFX503 reports the move)
        (LAST_TURN_CLOCK, None),
        # in every user turn, earlier ones included: the cached history rolls over
        (EVERY_USER_TURN_CLOCK, "day"),
    ),
)
def test_clock_granularity(text, granularity):
    found = _findings("t.jinja", text, frozenset({"PFX101"}))
    assert [f.extra["granularity"] for f in found] == ([granularity] if granularity else [])


DEFAULT_SYSTEM_CLOCK = """\
{%- set today = strftime_now('%Y-%m-%d') %}
{%- set default_system = 'You are a helpful assistant. The current date is ' + today + '.' %}
{%- if messages[0]['role'] == 'system' %}
{%- set system = messages[0]['content'] %}{%- set rest = messages[1:] %}
{%- else %}
{%- set system = default_system %}{%- set rest = messages %}
{%- endif %}
{{- '[SYS]' + system + '[/SYS]' }}
{%- for message in rest %}
{{- '[' + message.role + ']' + message.content }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '[assistant]' }}{%- endif %}
"""
# the same template without the clock: a fixed default system prompt
DEFAULT_SYSTEM_FIXED = DEFAULT_SYSTEM_CLOCK.replace("strftime_now('%Y-%m-%d')", "'2024-07-26'")
# the default system prompt takes the clock, but a request's own system message replaces it
# only where one is given: both conversations render
DEFAULT_SYSTEM_REFUSED = DEFAULT_SYSTEM_CLOCK.replace(
    "{%- set system = default_system %}",
    "{{- raise_exception('a system message is required') }}{%- set system = default_system %}",
)


# Mistral's way: the default system prompt holds ``{today}`` for mistral-common to fill
DEFAULT_SYSTEM_SLOT = DEFAULT_SYSTEM_CLOCK.replace(
    "{%- set today = strftime_now('%Y-%m-%d') %}\n", "{%- set today = '{today}' %}\n"
)
# a field that names no date is left alone
DEFAULT_SYSTEM_NAMED = DEFAULT_SYSTEM_SLOT.replace("{today}", "{model_name}")


@pytest.mark.parametrize(
    ("text", "granularity"),
    (
        # the clock is only in the system prompt used when a request sends none
        (DEFAULT_SYSTEM_CLOCK, "day"),
        (DEFAULT_SYSTEM_SLOT, "day"),
        (DEFAULT_SYSTEM_NAMED, None),
        (DEFAULT_SYSTEM_FIXED, None),
        # a template that refuses a conversation without a system message never shows it
        (DEFAULT_SYSTEM_REFUSED, None),
    ),
)
def test_clock_in_the_default_system_prompt(text, granularity):
    found = _findings("t.jinja", text, frozenset({"PFX101"}))
    assert [f.extra["granularity"] for f in found] == ([granularity] if granularity else [])
    assert all("default system prompt" in f.message for f in found)
    assert all(f.span.line == 1 for f in found)


def test_a_clock_shown_in_a_long_rendered_line_is_cut_around_it():
    text = DEFAULT_SYSTEM_CLOCK.replace("helpful assistant.", "helpful assistant. " + "x" * 200)
    [found] = _findings("t.jinja", text, frozenset({"PFX101"}))
    assert "The current date is 2026-01-15." in found.message
    assert "x" * 100 not in found.message


def test_a_clock_in_the_newest_turn_only_is_a_moving_text():
    found = _findings("t.jinja", LAST_TURN_CLOCK)
    assert [f.code for f in found] == ["PFX503"]


def test_clock_finding_points_at_strftime_now_call():
    [found] = _findings("t.jinja", MINUTE_CLOCK, frozenset({"PFX101"}))
    assert found.span.line == 1
    assert "every minute" in found.message
    assert "Now: 2026-01-15 10:30" in found.message
    assert 0 < found.stable_prefix_tokens < found.stable_prefix_tokens + found.unstable_tokens


def _config(template, **extra) -> str:
    return json.dumps({"bos_token": "<s>", "chat_template": template, **extra}, indent=2)


def test_tokenizer_config_string_template_points_at_its_json_line():
    text = _config(_fixture("qwen3.jinja"))
    found = _findings("tokenizer_config.json", text)
    assert {f.code for f in found} == {"PFX503"}
    assert {f.span.line for f in found} == {3}
    assert all("template line" in f.message for f in found if f.code == "PFX503")


def test_tokenizer_config_named_templates():
    templates = [
        {"name": "default", "template": _fixture("chatml.jinja")},
        {"name": "tool_use", "template": _fixture("mistral_v03.jinja")},
    ]
    text = json.dumps({"chat_template": templates}, indent=2)
    found = _findings("tokenizer_config.json", text, frozenset({"PFX503"}))
    [finding] = found
    assert "template 'tool_use' line 23" in finding.message
    assert (
        finding.span.line
        == text.splitlines().index(
            next(line for line in text.splitlines() if "[AVAILABLE_TOOLS]" in line)
        )
        + 1
    )


def test_features_fall_back_when_the_template_refuses_tools():
    text = """\
{%- if tools %}{{- raise_exception('tools are not supported') }}{%- endif %}
{%- for message in messages %}
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}
"""
    [document] = chat_template.parse("t.jinja", text)
    assert document.features == conversation.Features(tools=False)
    assert _findings("t.jinja", text) == []


STRIPS_EVERYWHERE = """\
{%- for message in messages %}
{%- if message.role == 'assistant' %}
{%- set content = message.content.split('</think>')[-1].lstrip() %}
{{- '<|im_start|>assistant\\n' + content + '<|im_end|>\\n' }}
{%- else %}
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}
"""


def test_reasoning_stripped_even_from_the_last_turn_still_breaks_the_cache():
    """The model wrote the reasoning and the engine cached it, whatever the template shows."""
    [found] = _findings("r1.jinja", STRIPS_EVERYWHERE, frozenset({"PFX503"}))
    assert found.span.line == 4
    assert found.extra["turn"] == 1
    assert "reasoning of message 2" in found.extra["cause"]


@pytest.mark.parametrize(
    ("name", "knows"),
    (("qwen3.jinja", True), ("chatml.jinja", False), ("hermes.jinja", False)),
)
def test_only_reasoning_templates_get_reasoning_conversations(name, knows):
    [document] = chat_template.parse(name, _fixture(name))
    assert document.knows_reasoning is knows
    assert (document.with_reasoning("field") is not None) is knows


INDENTED_TOOL_END = """\
{%- for message in messages %}
{%- if message.role == 'tool' %}
{{- '<|im_start|>tool\\n' + message.content + '<|im_end|>\\n' }}
{%- elif message.role == 'assistant' and loop.previtem and loop.previtem.role == 'tool' %}
    {{ '<|im_start|>assistant\\n' + message.content + '<|im_end|>\\n' }}
{%- else %}
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}
"""


def test_whitespace_that_differs_between_turns_is_named():
    [found] = _findings("ws.jinja", INDENTED_TOOL_END, frozenset({"PFX503"}))
    assert found.extra["cause"] == (
        "the whitespace around earlier turns is rendered differently in the next request"
    )


def test_a_break_of_one_token_is_counted_in_the_singular():
    # The generation prompt's own line break stays after it (no ``-`` trims it), while the
    # answer in the next prompt follows ``assistant\n`` directly: one token differs.
    template = (
        "{% for message in messages %}"
        "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' }}"
        "{% endfor %}{% if add_generation_prompt %}\n{{ '<|im_start|>assistant\\n' }}\n"
        "{% endif %}"
    )
    (finding,) = _findings("chat_template.jinja", template)
    assert finding.code == "PFX503"
    assert finding.message.endswith("; 1 cached token is recomputed")
