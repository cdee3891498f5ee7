"""Miss classification: each cause only when the comparison proves it."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.auditing import classify
from prefixlint.auditing.diff import escape, window
from prefixlint.request import ChatRequest
from prefixlint.sequences import common_prefix_length


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ((1, 2, 3), (1, 2, 3), 3),
        ((1, 2, 3), (1, 2), 2),
        ((), (1,), 0),
        (tuple(range(1000)), (*range(700), -1, *range(701, 1000)), 700),
        ("hello world", "hello there", 6),
    ],
)
def test_common_prefix_length(a, b, expected):
    assert common_prefix_length(a, b) == expected


def test_window_is_short_escaped_and_marked():
    text = "a" * 100 + "\n\u00a0tail" + "b" * 100
    shown = window(text, 100)
    assert shown.startswith("…") and shown.endswith("…")
    assert "⟦\\n\\u00a0tail" in shown
    assert len(shown) < 80
    assert escape("é\t") == "é\\t"


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        # Dates and times.
        ("Now: 2024-05-15 15:00 EST.\nRules", "Now: 2024-05-15 15:05 EST.\nRules", "PFX101"),
        (
            "Today is Monday, May 20, 2024. Be nice.",
            "Today is Tuesday, May 21, 2024. Be nice.",
            "PFX101",
        ),
        # Ids.
        (
            "trace 7f3a2b1c-1111-2222-3333-444455556666 ok",
            "trace 0e3a2b1c-1111-2222-3333-444455556666 ok",
            "PFX102",
        ),
        ("request req_8fJ2kL9x done", "request req_93hAa7Qz done", "PFX102"),
        # A labelled per-user value.
        (
            "user email: bob@example.com\nBe brief.",
            "user email: amy@example.com\nBe brief.",
            "PFX103",
        ),
        # Whitespace drift, by kind.
        ("one\r\ntwo\r\nthree", "one\ntwo\nthree", "PFX401"),
        ("one\n\ntwo three four", "one\ntwo three four", "PFX402"),
        ("one two  \nthree", "one two\nthree", "PFX402"),
        ("caf\u0065\u0301 au lait", "caf\u00e9 au lait", "PFX403"),
        ("hello\u00a0world and more", "hello world and more", "PFX403"),
        # A line holding a date and an id: the kind of the value that changed, whichever
        # comes first on the line.
        (
            "[sent 2025-06-01 10:01:00] Archive: flash_c8429a43.zip\nfile list\nmore",
            "Archive: flash_c8429a43.zip\nfile list\nmore",
            "PFX101",
        ),
        (
            "Archive: flash_c8429a43.zip\nfile list\nmore",
            "[sent 2025-06-01 10:01:00] Archive: flash_c8429a43.zip\nfile list\nmore",
            "PFX101",
        ),
        (
            "[sent 2025-06-01 10:01:00] Archive: flash_c8429a43.zip\nfile list\nmore",
            "[sent 2025-06-01 10:01:00] Archive: flash_d00d1e55.zip\nfile list\nmore",
            "PFX102",
        ),
        # Not provable: a counter, a rewritten sentence, a value followed by other changes.
        ("You have 5 turns left.", "You have 4 turns left.", None),
        ("Be concise.", "Be thorough.", None),
        ("At 2024-05-15 we start. Rule A.", "At 2024-05-16 we stop. Rule B applies.", None),
        ("one\n\ntwo", "one\nthree", None),
    ],
)
def test_text_change_code(before, after, expected):
    assert classify.text_change_code(before, after) == expected


def tool(name, description="d", **extra):
    return {"type": "function", "function": {"name": name, "description": description, **extra}}


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ([tool("a"), tool("b")], [tool("b"), tool("a")], "PFX201"),
        ([tool("a"), tool("b")], [tool("a"), tool("b"), tool("c")], "PFX204"),
        ([tool("a"), tool("b")], [tool("a")], "PFX204"),
        ([tool("a"), tool("b")], [tool("a"), tool("c")], "PFX204"),
        (
            [tool("a", parameters={"type": "object", "properties": {}})],
            [
                {
                    "type": "function",
                    "function": {
                        "parameters": {"properties": {}, "type": "object"},
                        "description": "d",
                        "name": "a",
                    },
                }
            ],
            "PFX202",
        ),
        ([tool("a", "Find flights.")], [tool("a", "Find  flights.")], "PFX402"),
        ([tool("a", "Find flights.")], [tool("a", "Book hotels.")], "content-changed"),
    ],
)
def test_tools_code(before, after, expected):
    assert classify.tools_code(before, after) == expected


def m(role, content, **extra):
    return {"role": role, "content": content, **extra}


SYSTEM = m("system", "You help.")
U1, A1, U2, A2, U3 = (
    m("user", "hi"),
    m("assistant", "hello"),
    m("user", "book"),
    m("assistant", "ok"),
    m("user", "thanks"),
)
CALL = m(
    "assistant",
    "",
    tool_calls=[{"id": "c1", "function": {"name": "f", "arguments": '{"a": 1, "b": 2}'}}],
)
RESULT = m("tool", '{"x": 1, "y": 2}', tool_call_id="c1")
NOTE = m("user", "(earlier turns left out)")


def call(arguments):
    return m(
        "assistant",
        "",
        tool_calls=[{"id": "c1", "function": {"name": "f", "arguments": arguments}}],
    )


@pytest.mark.parametrize(
    ("before", "after", "index", "same", "expected"),
    [
        # A sliding window drops turns from the front and keeps the rest.
        ([SYSTEM, U1, A1, U2, A2], [SYSTEM, U2, A2, U3], 1, True, "PFX502"),
        # ... or puts a note in place of the turns it drops; a note in place of the first
        # message alone is that message edited.
        ([SYSTEM, U1, A1, U2, A2, U3], [SYSTEM, NOTE, A2, U3, A1], 1, True, "PFX502"),
        ([SYSTEM, U1, A1, U2, A2], [SYSTEM, NOTE, A1, U2, A2, U3], 1, True, "PFX501"),
        # An earlier message removed, inserted or edited.
        ([SYSTEM, U1, A1, U2, A2], [SYSTEM, U1, U2, A2, U3], 2, True, "PFX501"),
        # A turn removed or inserted with its tool results.
        ([SYSTEM, U1, CALL, RESULT, A2, U2], [SYSTEM, U1, A2, U2, A1], 2, True, "PFX501"),
        ([SYSTEM, U1, A1, U2], [SYSTEM, U1, CALL, RESULT, A1, U2], 2, True, "PFX501"),
        ([SYSTEM, U1, A1, U2], [SYSTEM, U1, m("user", "extra"), A1, U2], 2, True, "PFX501"),
        ([SYSTEM, U1, A1, U2, A2], [SYSTEM, U1, m("assistant", "hey"), U2, A2], 2, True, "PFX501"),
        # Tool results rewritten, or re-serialised with another key order.
        (
            [SYSTEM, U1, CALL, RESULT, A2],
            [SYSTEM, U1, CALL, m("tool", "[elided]", tool_call_id="c1"), A2],
            3,
            True,
            "PFX504",
        ),
        (
            [SYSTEM, U1, CALL, RESULT, A2],
            [SYSTEM, U1, CALL, m("tool", '{"y": 2, "x": 1}', tool_call_id="c1"), A2],
            3,
            True,
            "PFX202",
        ),
        # Tool-call arguments re-serialised, with another key order or other spacing.
        (
            [SYSTEM, U1, CALL, RESULT],
            [SYSTEM, U1, call('{"b": 2, "a": 1}'), RESULT],
            2,
            True,
            "tool-arguments-reserialised",
        ),
        (
            [SYSTEM, U1, CALL, RESULT],
            [SYSTEM, U1, call('{"a":1,"b":2}'), RESULT],
            2,
            True,
            "tool-arguments-reserialised",
        ),
        # Other arguments: an edit.
        (
            [SYSTEM, U1, CALL, RESULT],
            [SYSTEM, U1, call('{"a": 3, "b": 2}'), RESULT],
            2,
            True,
            "PFX501",
        ),
        # Whitespace drift in an earlier message.
        ([SYSTEM, m("user", "hi\n"), A1, U2], [SYSTEM, m("user", "hi"), A1, U2], 1, True, "PFX402"),
        # Another conversation that only shares the system prompt: new content, not an edit.
        ([SYSTEM, U1, A1, U2], [SYSTEM, m("user", "hello there"), A1], 1, False, "first-seen"),
        # A branch at the predecessor's last message (no session known): new content.
        ([SYSTEM, U1, A1, U2], [SYSTEM, U1, A1, m("user", "cancel")], 3, False, "first-seen"),
        # The same edit within a known session is an edit.
        ([SYSTEM, U1, A1, U2], [SYSTEM, U1, A1, m("user", "cancel"), A2], 3, True, "PFX501"),
        # Several different changes at once: not provable.
        (
            [SYSTEM, U1, A1, U2, A2],
            [SYSTEM, U1, m("assistant", "x"), m("user", "y"), A2],
            2,
            True,
            "content-changed",
        ),
        # Equal messages: the difference comes from elsewhere.
        ([SYSTEM, U1], [SYSTEM, U1, A1], 1, True, None),
    ],
)
def test_messages_code(before, after, index, same, expected):
    assert classify.messages_code(before, after, index, same) == expected


def request(**fields):
    return ChatRequest(line=1, format="openai-chat", **fields)


@pytest.mark.parametrize(
    ("before", "after", "component", "expected"),
    [
        # The component is unchanged but a parameter that renders into it changed.
        (
            request(messages=(SYSTEM, U1), params={"reasoning_effort": "low"}),
            request(messages=(SYSTEM, U1), params={"reasoning_effort": "high"}),
            "messages[0]",
            ("PFX601", "params.reasoning_effort"),
        ),
        (
            request(model="a", messages=(SYSTEM, U1)),
            request(model="b", messages=(SYSTEM, U1)),
            "messages[0]",
            ("PFX601", "model"),
        ),
        # Tools added where there were none change the system turn that holds them.
        (
            request(messages=(SYSTEM, U1)),
            request(messages=(SYSTEM, U1), tools=(tool("a"),)),
            "messages[0]",
            ("PFX204", "tools"),
        ),
        # Nothing in the request changed: the template rendered the same message differently.
        (
            request(messages=(SYSTEM, U1, A1, U2)),
            request(messages=(SYSTEM, U1, A1, U2, A2)),
            "messages[2]",
            ("PFX503", "messages[2]"),
        ),
        # The predecessor had just ended with its generation prompt.
        (
            request(messages=(SYSTEM, U1)),
            request(messages=(SYSTEM, U1, A1)),
            "generation_prompt",
            ("first-seen", "generation_prompt"),
        ),
        # The system prompt's date changed.
        (
            request(system="Date: 2024-05-15. Help.", messages=(U1,)),
            request(system="Date: 2024-05-16. Help.", messages=(U1,)),
            "system",
            ("PFX101", "system"),
        ),
    ],
)
def test_classify(before, after, component, expected):
    assert classify.classify(before, after, component, same_conversation=True) == expected


def whitespace_code_of_whole_rests(a: str, b: str, offset: int) -> str | None:
    """``classify.whitespace_code`` normalising both texts to their ends."""
    start = offset
    while start > 0 and classify._is_blank(a[start - 1]):
        start -= 1
    start = max(0, min(start, offset - 1))
    blank = any(classify._is_blank(c) for c in (a[offset : offset + 1] + b[offset : offset + 1]))
    rest_a, rest_b = a[start:], b[start:]
    for code, normalise in classify._WHITESPACE_STEPS:
        if code != classify.INVISIBLE and not blank:
            return None
        rest_a, rest_b = normalise(rest_a), normalise(rest_b)
        if rest_a[: classify.RESYNC_CHARS] == rest_b[: classify.RESYNC_CHARS]:
            return code
    return None


# Words, blanks, line endings, invisible characters, a combining mark and what it composes
# with: the characters each whitespace normalisation acts on or across.
PIECES = st.sampled_from(
    [
        *("ab", "abcdefghij", "a" * 30, ".", " ", "  ", "\t", "\n", "\r\n"),
        *("\u200b", "\u00a0", "e\u0301", "\u00e9", "\u0301"),
    ]
)


@st.composite
def drifted(draw):
    """A text of pieces and the same text with a few pieces replaced, inserted or removed."""
    pieces = draw(st.lists(PIECES, max_size=40))
    changed = list(pieces)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(changed)))
        changed[at : at + draw(st.integers(0, 1))] = draw(st.lists(PIECES, max_size=2))
    return "".join(pieces), "".join(changed)


@settings(max_examples=2000, deadline=None)
@given(drifted())
def test_whitespace_code_compares_a_front_as_it_would_whole_texts(pair):
    a, b = pair
    offset = common_prefix_length(a, b)
    expected = whitespace_code_of_whole_rests(a, b, offset)
    assert classify.whitespace_code(a, b, offset) == expected
    assert classify.whitespace_code(b, a, offset) == whitespace_code_of_whole_rests(b, a, offset)


def test_whitespace_code_normalises_a_front_of_a_long_text():
    text = "Rules:  keep it short. " * 20
    front = classify._resync_front(text + "\u00a0x" * 1000, 0)
    assert len(front) < 100 and (text + "\u00a0x" * 1000).startswith(front)
    assert classify._resync_front("é" * 30 + "a" * 10, 0) == "é" * 30 + "a" * 10  # too few
