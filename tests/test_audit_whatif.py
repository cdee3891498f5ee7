"""What-if canonicalisers and the re-simulation that ranks fixes."""

import json

import pytest

from prefixlint.auditing import AuditOptions, canonical, run_audit
from prefixlint.request import ChatRequest


def request(line=1, **fields):
    return ChatRequest(line=line, format="openai-chat", **fields)


def tool(name, **parameters):
    return {"type": "function", "function": {"name": name, "parameters": parameters}}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a\r\nb\rc", "a\nb\nc"),
        ("a  \n\n\nb\t\n", "a\nb"),
        ("\ufeffcafe\u0301\u00a0x\u200b", "caf\u00e9 x"),
        ("already clean\ntext", "already clean\ntext"),
    ],
)
def test_normalise_whitespace(text, expected):
    assert canonical.normalise_whitespace(text) == expected


def test_order_sorts_tools_keys_and_keeps_one_tool_set_per_conversation():
    fix = canonical.Order()
    first = fix.rewrite(request(tools=(tool("b", z=1, a=2), tool("a"))), conversation=1)
    assert [t["function"]["name"] for t in first.tools] == ["a", "b"]
    assert list(first.tools[1]["function"]["parameters"]) == ["a", "z"]
    assert list(first.tools[0]) == ["function", "type"]
    # A later request of the conversation that drops a tool still sends the full set.
    later = fix.rewrite(request(tools=(tool("a"),)), conversation=1)
    assert [t["function"]["name"] for t in later.tools] == ["a", "b"]
    other = fix.rewrite(request(tools=(tool("a"),)), conversation=2)
    assert [t["function"]["name"] for t in other.tools] == ["a"]


def test_order_sorts_json_in_tool_calls_and_results():
    call = {"id": "c", "function": {"name": "f", "arguments": '{"b": 1, "a": 2}'}}
    messages = (
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "content": '{"y": 1, "x": 2}', "tool_call_id": "c"},
        {"role": "tool", "content": "plain text", "tool_call_id": "d"},
    )
    fixed = canonical.Order().rewrite(request(messages=messages), conversation=1)
    assert fixed.messages[0]["tool_calls"][0]["function"]["arguments"] == '{"a": 2, "b": 1}'
    assert fixed.messages[1]["content"] == '{"x": 2, "y": 1}'
    assert fixed.messages[2]["content"] == "plain text"


def test_volatile_moves_values_after_the_stable_part():
    messages = (
        {"role": "system", "content": "Today is 2024-05-15. Request id req_8fJ2kL9x."},
        {"role": "user", "content": "Book it."},
    )
    fixed = canonical.Volatile().rewrite(request(messages=messages), conversation=1)
    assert fixed.messages[0]["content"] == "Today is . Request id ."
    assert fixed.messages[1]["content"] == "Book it.\n\n2024-05-15; req_8fJ2kL9x"


def test_volatile_strips_each_tool_list_it_is_given():
    # Tool lists are remembered; the same dicts again reuse the result, another list never.
    fix = canonical.Volatile()
    first = (tool("book", note={"description": "Fares as of 2024-05-15."}),)
    second = (tool("book", note={"description": "Fares as of 2024-05-16."}),)
    user = ({"role": "user", "content": "Book it."},)
    cases = [(first, "2024-05-15"), (first, "2024-05-15"), (second, "2024-05-16")]
    for conversation, (tools, date) in enumerate(cases):
        fixed = fix.rewrite(request(messages=user, tools=tools), conversation=conversation)
        assert fixed.tools == (tool("book", note={"description": "Fares as of ."}),)
        assert fixed.messages[-1]["content"] == f"Book it.\n\n{date}"


def test_volatile_values_stay_with_the_message_that_carried_them():
    fix = canonical.Volatile()
    first = (m("system", "Today is 2024-05-15."), m("user", "Hi"))
    fix.rewrite(request(messages=first), conversation=1)
    second = (m("system", "Today is 2024-05-16."), m("user", "Hi"), m("assistant", "Hello"))
    second += (m("user", "Book"),)
    fixed = fix.rewrite(request(messages=second), conversation=1)
    assert [x["content"] for x in fixed.messages] == [
        "Today is .",
        "Hi\n\n2024-05-15",
        "Hello",
        "Book\n\n2024-05-16",
    ]
    # The same date again: the conversation already carries it.
    third = (*second, m("assistant", "Done"), m("user", "Thanks"))
    fixed = fix.rewrite(request(messages=third), conversation=1)
    assert [x["content"] for x in fixed.messages[3:]] == ["Book\n\n2024-05-16", "Done", "Thanks"]


def test_volatile_leaves_a_request_without_values_alone():
    messages = ({"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi"})
    original = request(messages=messages)
    assert canonical.Volatile().rewrite(original, conversation=1) == original


def m(role, content):
    return {"role": role, "content": content}


def test_history_is_append_only():
    fix = canonical.History()
    system, u1, a1, u2, a2, u3 = (
        m("system", "S"),
        m("user", "1"),
        m("assistant", "a"),
        m("user", "2"),
        m("assistant", "b"),
        m("user", "3"),
    )
    first = fix.rewrite(request(messages=(system, u1, a1, u2)), conversation=1)
    assert first.messages == (system, u1, a1, u2)
    # A sliding window dropped u1 and a1; the fixed application keeps them.
    windowed = fix.rewrite(request(messages=(system, u2, a2, u3)), conversation=1)
    assert windowed.messages == (system, u1, a1, u2, a2, u3)
    # An edit of an earlier message is not carried into the rewritten history.
    edited = fix.rewrite(
        request(messages=(system, m("user", "1!"), a1, u2, a2, u3, a1, m("user", "4"))),
        conversation=1,
    )
    assert edited.messages == (system, u1, a1, u2, a2, u3, a1, m("user", "4"))


def test_params_keep_the_conversations_first_choice():
    fix = canonical.Params()
    fix.rewrite(request(model="a", params={"tool_choice": "auto"}), conversation=1)
    later = fix.rewrite(request(model="b", params={"tool_choice": "none"}), conversation=1)
    assert (later.model, later.params) == ("a", {"tool_choice": "auto"})


def test_every_family_has_a_canonicaliser_and_together_applies_all():
    fixes = canonical.canonicalisers()
    assert [f.family for f in fixes] == [
        "volatile",
        "order",
        "whitespace",
        "history",
        "params",
        "all",
    ]
    codes = {code for f in fixes[:-1] for code in f.codes}
    assert set(fixes[-1].codes) == codes
    assert {"PFX101", "PFX201", "PFX202", "PFX204", "PFX402", "PFX501", "PFX502", "PFX601"} <= codes


SYSTEM = "The current time is {time}.\n" + "Always follow the airline policy. " * 40


def test_what_if_recovers_a_timestamp_in_the_system_prompt(tmp_path):
    # Two turns of one session whose system prompt carries the request time. As logged, the
    # second turn diverges at the minutes; with the time moved after the stable part it
    # continues the first turn, and the volatile fix (and all fixes together) gain.
    turn1 = [m("system", SYSTEM.format(time="10:00")), m("user", "Hi")]
    turn2 = [m("system", SYSTEM.format(time="10:05")), m("user", "Hi"), m("assistant", "Hello")]
    turn2.append(m("user", "Book a flight"))
    log = tmp_path / "log.jsonl"
    log.write_text(
        "".join(
            json.dumps({"session_id": "s", "request": {"model": "gpt-4o", "messages": t}}) + "\n"
            for t in (turn1, turn2)
        )
    )
    report = run_audit([str(log)], AuditOptions(caches=("unlimited",)))
    assert report.records[1].cause == "PFX101"
    # Only the fix for the cause found is simulated.
    assert [(w.fix, w.model_cache) for w in report.what_if] == [("volatile", "unlimited")]
    assert report.what_if[0].gain > 0.3


def test_what_if_only_simulates_fixes_for_causes_found():
    fixes = canonical.canonicalisers({"PFX201", "first-seen"})
    assert [f.family for f in fixes] == ["order"]
    fixes = canonical.canonicalisers({"PFX201", "PFX502"})
    assert [f.family for f in fixes] == ["order", "history", "all"]
    assert fixes[-1].codes == ("PFX201", "PFX202", "PFX204", "PFX501", "PFX502", "PFX504")
    assert canonical.canonicalisers(set()) == []
