"""Rendering as each engine's OpenAI server does, against transformers' own rendering of the
official Qwen3 template with that engine's preprocessing applied by hand."""

from __future__ import annotations

from pathlib import Path

import pytest
from audit_logs import breaker, log_line, plan
from click.testing import CliRunner

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.chat import TemplateError, engine_tokenizer, get_renderer, template_messages
from prefixlint.cli import main
from prefixlint.request import ChatRequest
from prefixlint.tokenizers import get_tokenizer

TEMPLATE = Path(__file__).parent.parent / "fixtures" / "chat_templates" / "qwen3.jinja"
LOGS = Path(__file__).parent.parent / "fixtures" / "logs"
USER = {"role": "user", "content": "Find my booking."}
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [
        {
            "id": "c1",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"user_id":"x","n":2}'},
        }
    ],
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": "found"}
PARSED_CALL = {
    **CALL,
    "tool_calls": [
        {
            **CALL["tool_calls"][0],
            "function": {"name": "lookup", "arguments": {"user_id": "x", "n": 2}},
        }
    ],
}


def request(messages, **params):
    return ChatRequest(line=1, format="openai-chat", messages=tuple(messages), params=params)


def transformers_text(messages, **kwargs):
    """transformers' ``render_jinja_template`` of the official Qwen3 template."""
    from transformers.utils.chat_template_utils import render_jinja_template

    kwargs.setdefault("add_generation_prompt", True)
    rendered, _ = render_jinja_template(
        conversations=[messages], chat_template=TEMPLATE.read_text(encoding="utf-8"), **kwargs
    )
    return rendered[0]


def rendered(req, engine):
    renderer = get_renderer(tokenizer=engine_tokenizer(None, engine), engine=engine)
    return renderer.render(req)


def prepared(messages):
    return template_messages(request(messages))


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_tool_call_arguments_are_parsed_and_written_back_by_tojson(engine):
    req = request([USER, CALL, RESULT])
    ours = rendered(req, engine)
    # The server parses the logged string; the template's tojson writes it with spaces.
    assert ours.text == transformers_text(prepared([USER, PARSED_CALL, RESULT]))
    assert '"arguments": {"user_id": "x", "n": 2}' in ours.text
    assert list(ours.tokens) == get_tokenizer("qwen").encode(ours.text)


def test_transformers_keeps_the_logged_string_and_llamacpp_parses_it():
    req = request([USER, CALL, RESULT], chat_template_kwargs={"enable_thinking": False})
    assert '"arguments": {"user_id":"x","n":2}' in rendered(req, "transformers").text
    # llama-server parses the string and the template's tojson writes it back spaced.
    assert '"arguments": {"user_id": "x", "n": 2}' in rendered(req, "llamacpp").text
    # llama.cpp tokenizes without NFC normalisation.
    assert engine_tokenizer(None, "llamacpp") == "qwen-raw"
    assert engine_tokenizer("qwen", "llamacpp") == "qwen"


@pytest.mark.parametrize(
    ("arguments", "parsed_value"),
    [('{"a": 1}', {"a": 1}), ("[1, 2]", [1, 2]), ("null", None), ({"b": "c"}, {"b": "c"})],
)
def test_llamacpp_parses_arguments_as_json_whatever_they_hold(arguments, parsed_value):
    call = {**CALL, "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": arguments}}]}
    function = {"name": "f", "arguments": parsed_value}
    parsed = {**CALL, "tool_calls": [{"id": "c1", "function": function}]}
    ours = rendered(request([USER, call, RESULT]), "llamacpp")
    assert ours.text == transformers_text(prepared([USER, parsed, RESULT]))


@pytest.mark.parametrize("arguments", ["", "not json", "{"])
def test_llamacpp_rejects_arguments_that_are_not_json(arguments):
    call = {**CALL, "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": arguments}}]}
    with pytest.raises(TemplateError, match="llama-server rejects"):
        rendered(request([USER, call, RESULT]), "llamacpp")


@pytest.mark.parametrize(
    ("arguments", "vllm"),
    [("", {}), ("not json", {}), ("[1, 2]", {}), ('{"a": 1}', {"a": 1})],
)
def test_vllm_coerces_arguments_that_are_not_an_object(arguments, vllm):
    call = {**CALL, "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": arguments}}]}
    parsed = {**CALL, "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": vllm}}]}
    ours = rendered(request([USER, call, RESULT]), "vllm")
    assert ours.text == transformers_text(prepared([USER, parsed, RESULT]))


def test_sglang_rejects_invalid_arguments():
    call = {**CALL, "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{x"}}]}
    with pytest.raises(TemplateError, match="sglang rejects"):
        rendered(request([USER, call, RESULT]), "sglang")


def test_vllm_drops_an_empty_tool_call_list():
    empty = {"role": "assistant", "content": "Hello.", "tool_calls": []}
    ours = rendered(request([USER, empty, USER]), "vllm")
    assert ours.text == transformers_text(
        prepared([USER, {"role": "assistant", "content": "Hello."}, USER])
    )


@pytest.mark.parametrize("engine", ["vllm", "sglang", "llamacpp"])
@pytest.mark.parametrize("kwargs", [{}, {"enable_thinking": False}, {"enable_thinking": True}])
def test_chat_template_kwargs_reach_the_template(engine, kwargs):
    req = request([USER], chat_template_kwargs=kwargs)
    ours = rendered(req, engine)
    # Without the kwarg, Qwen3 thinks: the prompt ends with the bare assistant header.
    assert ours.text == transformers_text(prepared([USER]), **kwargs)
    assert ours.text.endswith("<think>\n\n</think>\n\n") == (kwargs.get("enable_thinking") is False)


def test_the_default_engine_ignores_server_parameters():
    req = request(
        [USER], chat_template_kwargs={"enable_thinking": True}, add_generation_prompt=False
    )
    assert rendered(req, "transformers").text == transformers_text(
        prepared([USER]), enable_thinking=False
    )


@pytest.mark.parametrize("engine", ["vllm", "llamacpp"])
def test_no_generation_prompt(engine):
    req = request(
        [USER], add_generation_prompt=False, chat_template_kwargs={"enable_thinking": False}
    )
    ours = rendered(req, engine)
    assert ours.text == transformers_text(
        prepared([USER]), add_generation_prompt=False, enable_thinking=False
    )
    assert list(ours.tokens) == get_tokenizer(engine_tokenizer(None, engine)).encode(ours.text)


def test_vllm_continue_final_message_leaves_it_open():
    partial = {"role": "assistant", "content": "Your booking is"}
    req = request([USER, partial], add_generation_prompt=False, continue_final_message=True)
    ours = rendered(req, "vllm")
    expected = transformers_text(
        prepared([USER, partial]), add_generation_prompt=False, continue_final_message=True
    )
    assert ours.text == expected and ours.text.endswith("Your booking is")
    assert ours.components[-1].name == "messages[1]"


def test_vllm_rejects_continue_final_message_with_a_generation_prompt():
    partial = {"role": "assistant", "content": "Your booking is"}
    with pytest.raises(TemplateError, match="vllm rejects"):
        rendered(request([USER, partial], continue_final_message=True), "vllm")


def test_sglang_final_assistant_message():
    partial = {"role": "assistant", "content": "Your booking is"}
    # Without continue_final_message it becomes a user message.
    ours = rendered(request([USER, partial]), "sglang")
    assert ours.text == transformers_text(
        prepared([USER, {"role": "user", "content": "Your booking is"}])
    )
    # With it, the message is removed and its text encoded on its own after the prompt.
    ours = rendered(request([USER, partial], continue_final_message=True), "sglang")
    prompt = transformers_text(prepared([USER]))
    tokenizer = get_tokenizer("qwen")
    assert ours.text == prompt + "Your booking is"
    assert list(ours.tokens) == tokenizer.encode(prompt) + tokenizer.encode("Your booking is")
    assert ours.components[-1].name == "messages[1]"


def test_template_kwargs_sent_to_a_server():
    req = request([USER], chat_template_kwargs={"enable_thinking": True, "x": 1})
    assert get_renderer().template_kwargs(req) == {"enable_thinking": False, "x": 1}
    assert get_renderer(engine="vllm").template_kwargs(req) == {"enable_thinking": True, "x": 1}


def test_reserialised_arguments_break_transformers_but_not_vllm(tmp_path):
    planned = plan(seed=5, sessions=2, breakers=(breaker("arguments-reserialised"),))
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join(log_line(p, "openai") for p in planned) + "\n", encoding="utf-8")
    causes = {}
    for engine in ("transformers", "vllm"):
        report = run_audit([str(path)], AuditOptions(what_if=False, engine=engine))
        causes[engine] = {(r.cause, r.component) for r in report.records if r.cause != "first-seen"}
    # messages[0] is the system prompt, messages[2] the first tool call.
    assert causes["transformers"] == {("tool-arguments-reserialised", "messages[2]")}
    # vLLM parses every arguments string and writes it back the same way.
    assert causes["vllm"] == set()


@pytest.mark.parametrize("command", ["audit", "replay"])
def test_an_unusable_template_or_log_exits_2_with_one_line(command, tmp_path):
    runner = CliRunner()
    result = runner.invoke(
        main, [command, str(LOGS / "tau_openai_clean.jsonl"), "--template", "hf:/missing"]
    )
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0 and "/missing" in result.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n[1]\n", encoding="utf-8")
    result = runner.invoke(main, [command, str(bad)])
    assert result.exit_code == 2
    assert result.output.strip().count("\n") == 0
    assert f"{bad}:1:" in result.output and "no line could be read" in result.output


def test_unknown_engine_is_a_usage_error():
    result = CliRunner().invoke(
        main, ["audit", str(LOGS / "tau_openai_clean.jsonl"), "--engine", "tgi"]
    )
    assert result.exit_code == 2


def test_llamacpp_rebuilds_each_tool_in_its_own_key_order():
    # Logged with its keys in another order and an extra field: llama-server reads name,
    # description and parameters and writes {"type", "function": {name, description,
    # parameters}}; the keys inside parameters keep their logged order.
    parameters = {"required": ["id"], "type": "object", "properties": {"id": {"type": "string"}}}
    logged = {
        "function": {"parameters": parameters, "name": "f", "strict": True},
        "type": "function",
    }
    req = ChatRequest(line=1, format="openai-chat", messages=(USER,), tools=(logged,))
    server = {
        "type": "function",
        "function": {"name": "f", "description": "", "parameters": parameters},
    }
    ours = rendered(req, "llamacpp")
    assert ours.text == transformers_text(prepared([USER]), tools=[server])
    assert '{"required": ["id"], "type": "object"' in ours.text
    # Another engine prints the tool as logged.
    assert '{"function": {"parameters"' in rendered(req, "vllm").text


def test_llamacpp_rejects_a_tool_without_a_string_name():
    tool = {"type": "function", "function": {"description": "no name"}}
    req = ChatRequest(line=1, format="openai-chat", messages=(USER,), tools=(tool,))
    with pytest.raises(TemplateError, match="llama-server rejects a tool"):
        rendered(req, "llamacpp")
