"""Chat templates in the documented styles of the major open model families: which keep
earlier turns as a prefix of the next request, and which move the system prompt or the tools
into the last user turn (PFX503). Every template here is written for these tests."""

from __future__ import annotations

import pytest

from prefixlint.context import RuleContext
from prefixlint.sources import source_module

CODES = frozenset({"PFX503", "PFX101", "PFX102", "PFX103", "PFX104"})

# Mistral-instruct style: roles must alternate, the system prompt joins the last user turn.
SYSTEM_IN_LAST_TURN = """\
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content'] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}
{{- bos_token }}
{%- for message in loop_messages %}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant') }}
    {%- endif %}
    {%- if message['role'] == 'user' %}
        {%- if loop.last and system_message is defined %}
            {{- '[INST] ' + system_message + '\\n\\n' + message['content'] + '[/INST]' }}
        {%- else %}
            {{- '[INST] ' + message['content'] + '[/INST]' }}
        {%- endif %}
    {%- elif message['role'] == 'assistant' %}
        {{- ' ' + message['content'] + eos_token }}
    {%- else %}
        {{- raise_exception('Only user and assistant roles are supported') }}
    {%- endif %}
{%- endfor %}
"""

# The same idea, written small: no special-token variables, no generation prompt.
SMALL_SYSTEM_IN_LAST_TURN = """\
{%- set system = messages[0].content if messages[0].role == 'system' else '' -%}
{%- for message in messages if message.role != 'system' -%}
{%- if message.role == 'user' -%}
{%- if loop.last -%}
[INST] {{ system }}

{{ message.content }} [/INST]
{%- else -%}
[INST] {{ message.content }} [/INST]
{%- endif -%}
{%- else %} {{ message.content }}</s>
{%- endif -%}
{%- endfor -%}
"""

# Mistral v0.3 tool style: the tool list goes with the last user message.
TOOLS_IN_LAST_TURN = """\
{%- set user_messages = messages | selectattr('role', 'equalto', 'user') | list %}
{{- bos_token }}
{%- for message in messages %}
    {%- if message['role'] == 'user' %}
        {%- if tools and message == user_messages[-1] %}
            {{- '[AVAILABLE_TOOLS] ' + (tools | tojson) + '[/AVAILABLE_TOOLS]' }}
        {%- endif %}
        {{- '[INST] ' + message['content'] + '[/INST]' }}
    {%- elif message['role'] == 'assistant' and message['content'] %}
        {{- ' ' + message['content'] + eos_token }}
    {%- endif %}
{%- endfor %}
"""

# Llama 2 style: the system prompt inside the first user turn, which never changes.
LLAMA2 = """\
{%- if messages[0]['role'] == 'system' %}
    {%- set loop_messages = messages[1:] %}{%- set system_message = messages[0]['content'] %}
{%- else %}
    {%- set loop_messages = messages %}{%- set system_message = false %}
{%- endif %}
{%- for message in loop_messages %}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant') }}
    {%- endif %}
    {%- if loop.index0 == 0 and system_message != false %}
        {%- set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n'
            + message['content'] %}
    {%- else %}
        {%- set content = message['content'] %}
    {%- endif %}
    {%- if message['role'] == 'user' %}
        {{- bos_token + '[INST] ' + content | trim + ' [/INST]' }}
    {%- elif message['role'] == 'assistant' %}
        {{- ' ' + content | trim + ' ' + eos_token }}
    {%- endif %}
{%- endfor %}
"""

# Gemma style: no system role; the system prompt is folded into the first user turn.
GEMMA = """\
{{- bos_token }}
{%- if messages[0]['role'] == 'system' %}
    {%- set first_user_prefix = messages[0]['content'] + '\\n\\n' %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set first_user_prefix = '' %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- for message in loop_messages %}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('Conversation roles must alternate user/assistant/user/assistant') }}
    {%- endif %}
    {%- set role = 'model' if message['role'] == 'assistant' else message['role'] %}
    {{- '<start_of_turn>' + role + '\\n' + (first_user_prefix if loop.first else '') }}
    {{- message['content'] | trim + '<end_of_turn>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<start_of_turn>model\\n' }}{%- endif %}
"""

# Phi-3 style: one tag per role, plain history.
PHI3 = """\
{%- for message in messages %}
    {{- '<|' + message['role'] + '|>\\n' + message['content'] + '<|end|>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|assistant|>\\n' }}{%- else %}{{- eos_token }}{%- endif %}
"""

# DeepSeek style: the system prompt first, full-width bar tags per turn.
_DEEPSEEK_TURNS = """\
{{- bos_token }}{%- set ns = namespace(system_prompt='') -%}
{%- for message in messages -%}
    {%- if message['role'] == 'system' -%}
        {%- set ns.system_prompt = message['content'] -%}
    {%- endif -%}
{%- endfor -%}
{{- ns.system_prompt }}
{%- for message in messages -%}
    {%- if message['role'] == 'user' -%}{{- '<\uff5cUser\uff5c>' + message['content'] }}
    {%- elif message['role'] == 'assistant' and message['content'] -%}
        {%- set content = message['content'] -%}
        ANSWER
        {{- '<\uff5cAssistant\uff5c>' + content + '<\uff5cend\u2581of\u2581sentence\uff5c>' }}
    {%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}{{- '<\uff5cAssistant\uff5c>' }}{%- endif %}
"""
DEEPSEEK_V3 = _DEEPSEEK_TURNS.replace("ANSWER\n", "")
# DeepSeek R1 style: an earlier answer's reasoning is cut from the next request.
DEEPSEEK_R1 = _DEEPSEEK_TURNS.replace(
    "ANSWER",
    "{%- if '</think>' in content -%}{%- set content = content.split('</think>')[-1] -%}"
    "{%- endif -%}",
)

# A prompt template that renders a history is not a chat template: the template rules apply.
HISTORY_PROMPT = (
    "You are the support assistant of Example Corp. Today is {{ current_date }}.\n"
    + "Answer briefly, cite the knowledge base, and escalate billing questions to a person. " * 6
    + "\n{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}\n"
)


def check(name: str, text: str):
    return source_module(name, text).check(text, RuleContext(name, CODES))


@pytest.mark.parametrize(
    ("text", "moved"),
    [
        (SYSTEM_IN_LAST_TURN, "the system prompt"),
        (SMALL_SYSTEM_IN_LAST_TURN, "the system prompt"),
        (TOOLS_IN_LAST_TURN, "the tool definitions"),
    ],
)
def test_templates_that_move_parts_to_the_last_user_turn(text, moved):
    (found,) = check("chat.jinja", text)
    assert found.code == "PFX503"
    assert moved in found.extra["cause"]
    assert f"turn {found.extra['turn']}'s cached tokens" in found.message
    assert found.stable_prefix_tokens is not None and found.unstable_tokens > 0


@pytest.mark.parametrize("text", [LLAMA2, GEMMA, PHI3, DEEPSEEK_V3])
def test_templates_that_keep_earlier_turns_are_quiet(text):
    assert check("chat.jinja", text) == []


def test_a_template_that_cuts_earlier_reasoning_breaks_the_next_request():
    (found,) = check("chat.jinja", DEEPSEEK_R1)
    assert found.code == "PFX503"
    assert "reasoning" in found.message


def test_a_prompt_template_over_a_history_is_checked_as_a_prompt():
    assert [d.code for d in check("support.j2", HISTORY_PROMPT)] == ["PFX101"]


def test_a_small_history_template_with_its_own_variables_is_a_prompt_template():
    text = (
        "Today is {{ date }}.\n{% for m in messages %}{{ m.role }}: {{ m.content }}\n{% endfor %}"
    )
    assert [d.code for d in check("history.j2", text)] == []
    assert source_module("history.j2", text).__name__ == "prefixlint.sources.templates"
