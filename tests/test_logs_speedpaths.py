"""Fast paths of the log reader give exactly what the general path gives."""

from __future__ import annotations

import json
import math
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.sources.logs import openai_chat_messages, parse_line, read_log
from prefixlint.sources.logs.json_lines import PROBE, LineDecoder

LOGS = Path(__file__).parent.parent / "fixtures" / "logs"
PAD = "p" * PROBE


def exact(a, b) -> bool:
    """Equal with the same types and key order throughout (``1 == 1.0 == True`` is not)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(exact(a[key], b[key]) for key in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(map(exact, a, b))
    if isinstance(a, float):
        return repr(a) == repr(b)
    return a == b


def decode_all(lines, decoder=None):
    decoder = decoder or LineDecoder()
    return [decoder(line) for line in lines]


def errors(decode, text):
    try:
        decode(text)
    except (ValueError, RecursionError) as exc:
        return type(exc), str(exc)
    return None


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | st.sampled_from([PAD, PAD + "\u00e9", "\U0001f600" + PAD]),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=4), children, max_size=4)
    ),
    max_leaves=12,
)
SEPARATORS = st.sampled_from([None, (",", ":"), (" ,  ", " :\t"), (",\n", ":\r\n")])


@settings(max_examples=200, deadline=None)
@given(
    elements=st.lists(JSON, min_size=1, max_size=6),
    picks=st.lists(st.lists(st.integers(0, 5), max_size=8), min_size=1, max_size=6),
    separators=st.lists(SEPARATORS, min_size=6, max_size=6),
    indent=st.sampled_from([None, 0, 2]),
    capacity=st.sampled_from([1 << 20, 3 * PROBE]),
)
def test_decoder_matches_json_loads(elements, picks, separators, indent, capacity):
    lines = []
    for number, pick in enumerate(picks):
        messages = [{"pad": PAD, "value": elements[i % len(elements)]} for i in pick]
        messages += [elements[i % len(elements)] for i in pick]
        record = {"ts": number, "request": {"messages": messages, "tools": messages[:1]}}
        text = json.dumps(record, separators=separators[number % 6], indent=indent)
        lines.extend([text, json.dumps(messages, separators=separators[number % 6])])
    decoded = decode_all(lines, LineDecoder(capacity))
    assert all(exact(new, json.loads(line)) for new, line in zip(decoded, lines, strict=True))


@pytest.mark.parametrize(
    "literals",
    [
        ("1", "1.0", "true", "1e0", "10"),
        ('"a"', '"\\u0061"', '"b"'),
        ("null", "[]", "{}", '{"k": 0}', '{"k": 0, "j": 1}', '{"j": 1, "k": 0}'),
    ],
)
def test_elements_differing_after_the_probe_are_told_apart(literals):
    lines = [f'{{"messages": [{{"pad": "{PAD}", "v": {literal}}}]}}' for literal in literals]
    lines += lines[::-1]
    decoded = decode_all(lines)
    assert all(exact(new, json.loads(line)) for new, line in zip(decoded, lines, strict=True))


def test_repeated_elements_are_decoded_once():
    message = {"role": "user", "content": PAD}
    tool = {"type": "function", "function": {"name": "f", "description": PAD}}
    first, second, third = decode_all(
        [
            json.dumps({"request": {"messages": [message], "tools": [tool]}}),
            json.dumps({"messages": [message, {"x": 1}], "tools": [tool]}),
            json.dumps({"messages": [message, {"x": 1}, message], "tools": [tool]}),
        ]
    )
    assert first["request"]["tools"][0] is second["tools"][0]
    assert first["request"]["messages"][0] is second["messages"][0] is third["messages"][2]
    assert first["request"]["tools"] is not second["tools"] is third["tools"]
    assert second["messages"] is not third["messages"]


A = f'{{"role": "system", "content": "{PAD}"}}'
B = f'{{"role": "user", "content": "{PAD}b"}}'
C = f'{{"role": "user", "content": "{PAD}c"}}'


@pytest.mark.parametrize(
    "arrays",
    [
        # a conversation growing turn by turn, two sessions interleaved
        [[A, B], [A, C], [A, B, "1", C], [A, C, B], [A, B, "1", C, B], [A, C, B, "2"]],
        # what follows a remembered run differs, or ends in a number or a string
        [[A, B, "12"], [A, B, "123"], [A, B, '"x"'], [A, B, '"x" ', "7"], [A, B, '"xy"']],
        [[A, B, C], [A, B], [A, B, C, C], [A, B, C], [A, B, C, B]],
        [[A, "[]", B], [A, "[ ]", B], [A, "[]", B, "{}"], [A, "[]"], [A, "[]", B]],
    ],
)
@pytest.mark.parametrize("separator", [", ", ",", " ,\n "])
def test_runs_of_remembered_elements_match_json_loads(arrays, separator):
    lines = [f'{{"messages": [{separator.join(array)}]}}' for array in arrays]
    lines += lines
    decoded = decode_all(lines)
    assert all(exact(new, json.loads(line)) for new, line in zip(decoded, lines, strict=True))
    assert decoded[0]["messages"][0] is decoded[1]["messages"][0]


def test_walking_goes_on_after_lines_that_do_not_repeat():
    """An interleaved log opens with many first turns: later repeats are still shared."""
    unique = [json.dumps({"messages": [{"content": f"{PAD}{n}"}]}) for n in range(40)]
    repeated = json.dumps({"messages": [{"content": PAD * 4}]})
    lines = unique + [repeated] * 3
    decoded = decode_all(lines, LineDecoder())
    assert all(exact(new, json.loads(line)) for new, line in zip(decoded, lines, strict=True))
    shared = [a["messages"][0] is b["messages"][0] for a, b in pairwise(decoded[40:])]
    assert shared == [True, True]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        '{"a": 1,}',
        '{"a" 1}',
        '{"a": 1 "b": 2}',
        '{"a": 1]"b": 2}',
        '{"messages": [1}, 2]}',
        "{'a': 1}",
        '{"messages": [1, 2',
        '{"messages": [1, 2,]}',
        '{"messages": [1 2]}',
        f'{{"messages": [{{"pad": "{PAD}"}} {{"pad": "{PAD}"}}]}}',
        f'{{"messages": [{{"pad": "{PAD}"',
        '{"a": 1} x',
        '{"a": 1}{"b": 2}',
        "\ufeff{}",
        '{"a": "\x01"}',
        '{"a": NaN, "b": [Infinity, -Infinity]}',
        "1 2",
        '"text"',
        "[" * 50000 + "]" * 50000,
        "{" * 100000,
        '{"a": ' * 50000 + "1" + "}" * 50000,
    ],
)
def test_malformed_or_unusual_lines_behave_like_json_loads(text):
    decoder = LineDecoder()
    decoder(f'{{"messages": [{{"pad": "{PAD}"}}]}}')
    assert errors(decoder, text) == errors(json.loads, text)
    if errors(json.loads, text) is None:
        new, old = decoder(text), json.loads(text)
        assert exact(new, old) or (math.isnan(old["a"]) and math.isnan(new["a"]))


@pytest.mark.parametrize("path", sorted(LOGS.glob("*.jsonl")), ids=lambda p: p.name)
def test_read_log_matches_parsing_each_line_with_json_loads(path):
    expected = [parse_line(i, raw) for i, raw in enumerate(path.read_bytes().splitlines(True), 1)]
    assert list(read_log(path)) == expected


def test_tau_log_read_twice_in_one_stream_matches_line_by_line(tmp_path):
    text = (LOGS / "tau_openai_breakers.jsonl").read_bytes()
    path = tmp_path / "twice.jsonl"
    path.write_bytes(text + text)
    expected = [parse_line(i, raw) for i, raw in enumerate((text + text).splitlines(True), 1)]
    items = list(read_log(path))
    assert items == expected
    assert [repr(item) for item in items] == [repr(item) for item in expected]


@pytest.mark.parametrize(
    ("messages", "copied"),
    [
        ([{"role": "user", "content": "Hi"}], [False]),
        ([{"role": "assistant", "content": None, "tool_calls": []}], [False]),
        ([{"role": "function", "name": "f", "content": "ok"}], [True]),
        ([{"role": "assistant", "content": None, "function_call": {"name": "f"}}], [True]),
        ([{"role": "assistant", "function_call": None}, {"role": "user"}], [True, False]),
    ],
)
def test_messages_are_copied_only_when_converted(messages, copied):
    before = json.loads(json.dumps(messages))
    normalised = openai_chat_messages(messages)
    assert [new is not old for new, old in zip(normalised, messages, strict=True)] == copied
    assert messages == before


def test_anthropic_messages_are_converted_once_and_as_when_converted_afresh():
    from prefixlint.sources.logs import anthropic

    path = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
    log = path / "tau_anthropic_breakers.jsonl"
    shared = list(read_log(log))
    fresh = []
    for number, line in enumerate(log.read_bytes().splitlines(), 1):
        anthropic._converted.clear()
        fresh.append(parse_line(number, line, "auto", LineDecoder()))
    assert [(r.messages, r.cache_breakpoints) for r in shared] == [
        (r.messages, r.cache_breakpoints) for r in fresh
    ]
    # A message repeated without its breakpoint is converted once, for every later line.
    assert shared[1].session_id == shared[2].session_id
    assert shared[1].messages[0] is shared[2].messages[0]
