"""Recognising, loading and sandboxing chat templates."""

from __future__ import annotations

import json

import pytest

from prefixlint.context import RuleContext, SourceError
from prefixlint.sources import chat_template, source_module
from prefixlint.sources.chat_template import sandbox

CHATML = """\
{%- for message in messages %}
{{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}
"""


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    (
        ("chat_template.jinja", CHATML, True),
        ("t.j2", "{% for m in loop_messages %}{{ bos_token }}{{ m.content }}{% endfor %}", True),
        ("t.jinja", "{% set h = messages[1:] %}{{ add_generation_prompt }}", True),
        ("prompt.jinja", "Summarise: {% for m in messages %}{{ m.content }}{% endfor %}", False),
        # a name set inside the loop is the template's own, not one it is given
        (
            "t.jinja",
            "{%- for m in messages %}{%- if m.role == 'user' %}[INST] {{ m.content }} [/INST]"
            "{%- else %}{%- set c = m.content or '' %}{{ c }}{%- endif %}{%- endfor %}",
            True,
        ),
        (
            "t.jinja",
            "{%- for m in messages %}{%- if m.role == 'user' %}{{ user_name }}: {{ m.content }}"
            "{%- endif %}{%- endfor %}",
            False,
        ),
        ("prompt.jinja", "Explain how messages and add_generation_prompt work.", False),
        ("chat.txt", CHATML, False),
        ("tokenizer_config.json", json.dumps({"chat_template": CHATML}), True),
        ("chat_template.json", json.dumps({"chat_template": CHATML}), True),
        ("tokenizer_config.json", json.dumps({"bos_token": "<s>"}), False),
        ("config.json", json.dumps({"chat_template": CHATML}), False),
    ),
)
def test_looks_like_chat_template(path, text, expected):
    assert chat_template.looks_like_chat_template(path, text) is expected


def test_source_dispatch_picks_the_chat_template_module():
    assert source_module("chat_template.jinja", CHATML) is chat_template


@pytest.mark.parametrize(
    ("path", "text", "line", "words"),
    (
        ("t.jinja", CHATML.replace("{%- endfor %}", "{%- endfor"), 4, "syntax error"),
        (
            "t.jinja",
            "{{- raise_exception('Conversation roles must alternate') }}\n" + CHATML,
            1,
            "raise_exception at line 1: Conversation roles must alternate",
        ),
        ("t.jinja", CHATML.replace("message.role +", "message.role + 1 +"), 2, "TypeError"),
        ("tokenizer_config.json", '{"chat_template": ', 1, "invalid JSON"),
        ("tokenizer_config.json", '{"chat_template": 3}', 1, "must be a string or a list"),
        (
            "tokenizer_config.json",
            '{\n  "bos_token": "<s>",\n  "chat_template": "{{ raise_exception(\'no\') }}"\n}',
            3,
            "template line 1: no",
        ),
    ),
)
def test_template_errors_are_source_errors_with_a_line(path, text, line, words):
    with pytest.raises(SourceError) as info:
        chat_template.check(text, RuleContext(path, frozenset({"PFX503"})))
    assert info.value.line == line
    assert words in info.value.message


def test_sandbox_refuses_python_internals():
    text = CHATML + "{{ ''.__class__.__mro__[1].__subclasses__() }}\n"
    with pytest.raises(SourceError) as info:
        chat_template.check(text, RuleContext("t.jinja", frozenset({"PFX503"})))
    assert "SecurityError" in info.value.message


def test_rendering_traces_each_chunk_to_its_line():
    template = sandbox.compile_template(CHATML)
    messages = [{"role": "user", "content": "hi"}]
    clock = sandbox.FakeClock(now=__import__("datetime").datetime(2026, 1, 1))
    rendering = sandbox.render(
        template, {"messages": messages, "add_generation_prompt": True}, clock
    )
    assert rendering.text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    assert rendering.line_at(0) == 2
    assert rendering.line_at(len(rendering.text) - 1) == 4


def test_render_matches_transformers():
    """Same text as transformers' own renderer for the Qwen3 template and a tool conversation."""
    chat_template_utils = pytest.importorskip("transformers.utils.chat_template_utils")
    from pathlib import Path

    from prefixlint.sources.chat_template import conversation

    source = (Path(__file__).parent.parent / "fixtures/chat_templates/qwen3.jinja").read_text()
    [document] = chat_template.parse("qwen3.jinja", source)
    convo = conversation.build(conversation.Features(reasoning="field"))
    ours = document.render(convo, len(convo.messages), add_generation_prompt=True).text
    theirs, _ = chat_template_utils.render_jinja_template(
        conversations=[convo.template_messages(len(convo.messages))],
        tools=convo.template_tools(),
        chat_template=source,
        add_generation_prompt=True,
    )
    assert ours == theirs[0]


def test_template_file_in_prefers_chat_template_jinja(tmp_path):
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": CHATML}))
    assert chat_template.template_file_in(tmp_path).name == "tokenizer_config.json"
    (tmp_path / "chat_template.jinja").write_text(CHATML)
    assert chat_template.template_file_in(tmp_path).name == "chat_template.jinja"
    with pytest.raises(FileNotFoundError):
        chat_template.template_file_in(tmp_path / "missing")
