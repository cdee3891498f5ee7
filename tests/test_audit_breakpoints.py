"""cache_control advice: candidate breakpoints and logged ones, replayed and priced by hand."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.auditing.breakpoints import BreakpointAdvisor, candidate_ends, logged_kind
from prefixlint.auditing.report_html import render_html
from prefixlint.auditing.report_json import to_dict
from prefixlint.cache.query import build_query
from prefixlint.cli.audit import audit
from prefixlint.request import ChatRequest, Component, Rendered

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
MODEL = "claude-sonnet-4-5"  # minimum 1,024 tokens


def _request(index, *, system=2, message=None, time=0.0, marks=(), model=MODEL, tools=2000):
    """Tools of ``tools`` tokens, a system prompt of 1,000 tokens of id ``system``, one user
    message of 100 tokens (id ``message``, default: new on every request)."""
    message = 100 + index if message is None else message
    tokens = (1,) * tools + (system,) * 1000 + (message,) * 100
    ends = (tools, tools + 1000, tools + 1100)
    names = ("tools[0]", "system", "messages[0]")
    starts = (0, *ends[:-1])
    spans = zip(names, starts, ends, strict=True)
    components = tuple(Component(n, s, e, s, e) for n, s, e in spans)
    request = ChatRequest(
        line=index + 1,
        format="anthropic",
        model=model,
        system="s",
        messages=({"role": "user", "content": "u"},),
        tools=({"name": "t"},),
        timestamp=time,
        session_id="s1",
        cache_breakpoints=marks,
    )
    return request, Rendered("", tokens, components, "test")


def _advise(requests, always=False):
    advisor = BreakpointAdvisor(always=always)
    for request, rendered in requests:
        advisor.feed(request, rendered, build_query(request, rendered))
    return advisor.advice()


def _row(values, component, ttl):
    return next(v for v in values if (v.component, v.ttl) == (component, ttl))


def test_stable_tools_and_system_pay_a_new_message_does_not():
    advice = _advise([_request(i, time=60.0 * i) for i in range(3)])
    assert advice.requests == 3
    tools = _row(advice.candidates, "tools", "5m")
    # One write of 2,000 tokens, two reads of 2,000: 0.9 * 4,000 - 0.25 * 2,000.
    assert (tools.token_position, tools.writes, tools.reads) == (2000, 1, 2)
    assert (tools.write_tokens, tools.read_tokens) == (2000, 4000)
    assert tools.net_tokens_saved == 3100
    assert _row(advice.candidates, "tools", "1h").net_tokens_saved == 3600 - 2000
    system = _row(advice.candidates, "system", "5m")
    assert system.net_tokens_saved == 0.9 * 6000 - 0.25 * 3000  # 4,650
    assert system.recommended and tools.recommended
    # The last message differs every time: three writes of 3,100 tokens, nothing read.
    messages = _row(advice.candidates, "messages", "5m")
    assert (messages.writes, messages.reads, messages.write_tokens) == (3, 0, 9300)
    assert messages.net_tokens_saved == -2325 and not messages.pays
    assert not any(v.recommended for v in advice.candidates if v.component == "messages")
    assert advice.logged == []


def test_requests_ten_minutes_apart_need_the_one_hour_ttl():
    advice = _advise([_request(i, time=600.0 * i) for i in range(3)])
    five, hour = _row(advice.candidates, "tools", "5m"), _row(advice.candidates, "tools", "1h")
    assert (five.writes, five.reads, five.net_tokens_saved) == (3, 0, -1500)
    assert (hour.writes, hour.reads, hour.net_tokens_saved) == (1, 2, 1600)
    assert hour.recommended and not five.recommended


def test_prefix_below_the_model_minimum_is_never_cached():
    # claude-opus-4-5 caches from 4,096 tokens; the tools end at 300.
    advice = _advise([_request(i, model="claude-opus-4-5", tools=300) for i in range(2)])
    tools = _row(advice.candidates, "tools", "5m")
    assert (tools.below_minimum, tools.minimum_tokens, tools.writes, tools.reads) == (2, 4096, 0, 0)
    assert tools.net_tokens_saved == 0 and not tools.pays and not tools.recommended


def test_logged_breakpoint_after_a_volatile_system_prompt_is_flagged():
    marks = (("system", 300.0),)
    advice = _advise([_request(i, system=10 + i, time=i, marks=marks) for i in range(3)])
    (system,) = advice.logged
    assert (system.component, system.ttl, system.requests) == ("system", "5m", 3)
    assert (system.writes, system.reads, system.net_tokens_saved) == (3, 0, -2250)
    assert system.volatile_component == "system"
    assert system.problem == "never read: the prefix before it changes at system"


def test_logged_breakpoint_that_pays_has_no_problem():
    marks = (("tools[0]", 3600.0),)
    advice = _advise([_request(i, time=i, marks=marks) for i in range(2)])
    (tools,) = advice.logged
    assert (tools.component, tools.ttl, tools.net_tokens_saved) == ("tools", "1h", 1800 - 2000)
    assert tools.problem == "reads (2,000 tokens) do not repay the writes (2,000)"
    advice = _advise([_request(i, time=i, marks=marks) for i in range(3)])
    assert advice.logged[0].problem is None and advice.logged[0].pays


def test_only_anthropic_requests_unless_the_anthropic_model_is_audited():
    request, rendered = _request(0)
    openai = ChatRequest(line=1, format="openai-chat", messages=request.messages)
    assert _advise([(openai, rendered)]) is None
    assert _advise([(openai, rendered)], always=True).requests == 1


def test_component_names():
    request, rendered = _request(0)
    assert candidate_ends(request, rendered) == {"tools": 2000, "system": 3000, "messages": 3100}
    messages, tools = ({"role": "user"},) * 5, ({},) * 14
    five = ChatRequest(line=1, format="anthropic", messages=messages, tools=tools)
    assert logged_kind("messages[4]", five) == "messages"
    assert logged_kind("messages[2]", five) == "messages[-3]"
    assert logged_kind("tools[13]", five) == "tools"
    assert logged_kind("tools[0]", five) == "tools[-14]"
    assert logged_kind("system", five) == "system"


@pytest.mark.parametrize("caches", [("anthropic",), ("vllm",)])
def test_audit_reports_advice_for_an_anthropic_log(caches):
    log = str(LOGS / "tau_anthropic_breakers.jsonl")
    report = run_audit([log], AuditOptions(caches=caches, what_if=False))
    data = to_dict(report)["cache_control"]
    assert data["requests"] == len(report.records) // len(caches)
    assert {(c["component"], c["ttl"]) for c in data["candidates"]} == {
        (c, t) for c in ("tools", "system", "messages") for t in ("5m", "1h")
    }
    assert {c["component"] for c in data["logged"]} == {"tools", "system", "messages"}
    row = data["candidates"][0]
    assert set(row) >= {"component", "token_position", "ttl", "writes", "reads"}
    assert row["pays"] == (row["net_tokens_saved"] > 0)
    assert row["net_tokens_saved"] == round(
        0.9 * row["read_tokens"] - 0.25 * row["write_tokens"], 2
    )
    json.dumps(data, allow_nan=False)
    assert "Where cache_control pays" in render_html(report)


def test_no_advice_for_an_openai_log_on_engine_models():
    log = str(LOGS / "tau_openai_clean.jsonl")
    report = run_audit([log], AuditOptions(caches=("vllm",), what_if=False))
    assert report.cache_control is None and to_dict(report)["cache_control"] is None


def test_terminal_report_names_where_to_place_breakpoints():
    log = str(LOGS / "tau_anthropic_clean.jsonl")
    result = CliRunner().invoke(audit, [log, "--cache", "anthropic", "--no-what-if"])
    assert result.exit_code == 0, result.output
    assert "Where cache_control pays (63 requests)" in result.output
    assert "place here" in result.output
    assert "cache_control breakpoints the log places" in result.output


def test_requests_without_tools_get_no_tools_candidate():
    request, rendered = _request(0)
    bare = Rendered("", rendered.tokens, rendered.components[1:], "test")
    advice = _advise([(request, bare)])
    assert {v.component for v in advice.candidates} == {"system", "messages"}


def test_a_logged_breakpoint_missing_from_one_request_is_replayed_on_its_own():
    marked = (("tools[0]", 300.0),)
    requests = [_request(i, time=60.0 * i, marks=marked if i != 1 else ()) for i in range(3)]
    advice = _advise(requests)
    assert _row(advice.candidates, "tools", "5m").net_tokens_saved == 3100
    (tools,) = advice.logged
    # Requests 0 and 2 only: one write of 2,000, one read of 2,000.
    assert (tools.requests, tools.writes, tools.reads) == (2, 1, 1)
    assert tools.net_tokens_saved == 0.9 * 2000 - 0.25 * 2000


def test_a_leading_system_message_is_the_system_candidate():
    _, rendered = _request(0)
    names = ("tools[0]", "messages[0]", "messages[1]")
    components = tuple(
        Component(name, c.char_start, c.char_end, c.token_start, c.token_end)
        for name, c in zip(names, rendered.components, strict=True)
    )
    messages = ({"role": "system", "content": "s"}, {"role": "user", "content": "u"})
    openai = ChatRequest(line=1, format="openai-chat", messages=messages)
    ends = candidate_ends(openai, Rendered("", rendered.tokens, components, "test"))
    assert ends == {"tools": 2000, "system": 3000, "messages": 3100}
