"""prefixlint.testing.assert_prefix_stable on prompt builders that keep or break the prefix."""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import time
from datetime import datetime, timezone

import pytest

from prefixlint.testing import assert_prefix_stable, call

SYSTEM = "You are the support assistant of Example Corp. Answer from the manual only."
DOCUMENT = "Manual, chapter 1: the device restarts when the red button is held for ten seconds."
TOOL_NAMES = ("search", "fetch", "summarise", "translate", "calculate", "lookup")
TOOLS = {
    name: {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name.title()} something.",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    for name in TOOL_NAMES
}
HISTORY = (
    ("How do I restart it?", "Hold the red button for ten seconds."),
    ("And to reset it?", "Hold both buttons for twenty seconds."),
    ("Thanks! Is there a manual online?", "Yes, on the support site."),
)
MORNING = datetime(2026, 1, 15, 9, 0, tzinfo=timezone.utc)
EVENING = datetime(2026, 1, 15, 21, 0, tzinfo=timezone.utc)
NEXT_DAY = datetime(2026, 1, 16, 9, 0, tzinfo=timezone.utc)


def stable_chat(question):
    return {
        "messages": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": question},
        ],
        "tools": [TOOLS[name] for name in sorted(TOOL_NAMES)],
    }


def dated_chat(question):
    today = datetime.now().strftime("%Y-%m-%d")
    return [
        {"role": "system", "content": f"{SYSTEM} Today is {today}."},
        {"role": "user", "content": question},
    ]


def set_ordered_tools(question):
    return {
        "messages": [{"role": "user", "content": question}],
        "tools": [TOOLS[name] for name in set(TOOL_NAMES)],
    }


def personalised(question, user):
    return [
        {"role": "system", "content": f"{SYSTEM} The user is {user}."},
        {"role": "user", "content": question},
    ]


def fails_in_worker(question):
    if os.environ.get("PYTHONHASHSEED") == "1":
        raise RuntimeError("no configuration in this process")
    return question


def stamped_string(question):
    return f"Session {time.strftime('%H:%M:%S')}\n{DOCUMENT}\nQuestion: {question}"


def document_first(question):
    return f"{DOCUMENT}\n\nQuestion: {question}"


def question_first(question):
    return f"Asked: {question}\n{DOCUMENT}\n\nQuestion: {question}"


def turn(count):
    """The request of turn ``count``: the history so far, then the next question."""
    messages = [{"role": "system", "content": SYSTEM}]
    for question, answer in HISTORY[:count]:
        messages += [
            {"role": "user", "content": question},
            {"role": "assistant", "content": answer},
        ]
    return [*messages, {"role": "user", "content": HISTORY[count][0]}]


def turn_with_counter(count):
    messages = turn(count)
    messages[1] = {**messages[1], "content": f"[turn {count}] {messages[1]['content']}"}
    return messages


QUESTIONS = [call("How do I restart it?"), call("Where is the red button?")]


@pytest.mark.parametrize(
    ("build", "kwargs"),
    (
        (stable_chat, {"calls": QUESTIONS}),
        ("test_testing_assert:stable_chat", {"calls": QUESTIONS}),
        (stable_chat, {"calls": QUESTIONS, "clocks": [MORNING, NEXT_DAY]}),
        (dated_chat, {"calls": QUESTIONS, "clocks": [MORNING, EVENING]}),
        (document_first, {"calls": QUESTIONS, "variable_from": "Question:"}),
        (turn, {"calls": [0, 1, 2], "turns": True}),
        (stable_chat, {"calls": QUESTIONS[:1], "hash_seeds": [1, 2, 3]}),
    ),
)
def test_stable_builders_pass(build, kwargs):
    assert assert_prefix_stable(build, **kwargs) > 10


@pytest.mark.parametrize(
    ("build", "kwargs", "expected"),
    (
        (
            dated_chat,
            {"calls": QUESTIONS[:1], "clocks": [MORNING, NEXT_DAY]},
            ["PFX101", "in messages[0]", "2026-01-15", "2026-01-16"],
        ),
        (
            stamped_string,
            {"calls": ["q"], "clocks": [MORNING, EVENING], "variable_from": "Question:"},
            ["PFX101", "Session"],
        ),
        (
            set_ordered_tools,
            {"calls": ["q"], "hash_seeds": [1, 2, 3, 4, 5, 6]},
            ["PFX201", "PYTHONHASHSEED="],
        ),
        (
            personalised,
            {"calls": [call("q", user="Ann"), call("q", user="Bob")]},
            [
                "call 2 personalised('q', user='Bob') differs from call 1",
                "content-changed in messages[0]",
                "The user is⟦ Bob.",
            ],
        ),
        (
            question_first,
            {"calls": QUESTIONS, "variable_from": "Question:"},
            ["at token 2", "content-changed"],
        ),
        (turn_with_counter, {"calls": [1, 2], "turns": True}, ["does not continue", "PFX501"]),
    ),
)
def test_unstable_builders_fail_with_token_and_cause(build, kwargs, expected):
    with pytest.raises(AssertionError) as info:
        assert_prefix_stable(build, **kwargs)
    message = str(info.value)
    assert message.startswith("prompt prefix is not stable:")
    assert "⟦" in message
    for words in expected:
        assert words in message


def test_missing_marker_is_reported():
    with pytest.raises(AssertionError, match="marker 'Answer:' is not in the prompt"):
        assert_prefix_stable(document_first, ["q"], variable_from="Answer:")


def test_hash_seeds_need_an_importable_builder():
    with pytest.raises(ValueError, match="module level"):
        assert_prefix_stable(lambda q: q, ["q"], hash_seeds=[1])


def test_builder_failure_in_subprocess_is_an_assertion():
    with pytest.raises(AssertionError, match="PYTHONHASHSEED=1"):
        assert_prefix_stable("test_testing_assert:fails_in_worker", ["q"], hash_seeds=[1])


def test_rejects_results_it_cannot_render():
    with pytest.raises(TypeError, match="must return a string"):
        assert_prefix_stable(lambda: 42)


def test_stable_token_count_stops_at_the_last_user_message():
    from prefixlint.chat import render
    from prefixlint.request import ChatRequest

    count = assert_prefix_stable(stable_chat, QUESTIONS)
    rendered = render(ChatRequest(line=0, format="openai-chat", **_request(stable_chat("x"))))
    [user] = [c for c in rendered.components if c.name == "messages[1]"]
    assert count == user.token_start


def _request(data):
    return {"messages": tuple(data["messages"]), "tools": tuple(data["tools"])}


PLUGIN_TEST = """
import time
import prefix_builder

def test_fixture(frozen_clock):
    frozen_clock(1_700_000_000, prefix_builder)
    assert prefix_builder.now() == 1_700_000_000
    assert time.time() != 1_700_000_000
"""


def test_frozen_clock_fixture_through_the_plugin(tmp_path):
    (tmp_path / "prefix_builder.py").write_text(
        "import time\n\ndef now():\n    return time.time()\n"
    )
    (tmp_path / "test_plugin.py").write_text(PLUGIN_TEST)
    installed = any(
        entry.value == "prefixlint.testing"
        for entry in importlib.metadata.entry_points(group="pytest11")
    )
    load = [] if installed else ["-p", "prefixlint.testing"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *load, "-q", str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
