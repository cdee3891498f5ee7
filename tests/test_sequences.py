"""common_prefix_length and common_suffix_length against element-by-element loops, for every
sequence type; differing_lines against the split line lists."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.sequences import (
    SameItemsMemo,
    common_prefix_length,
    common_suffix_length,
    differing_lines,
    same_items,
)


def loop_prefix_length(a, b) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


@st.composite
def pairs(draw):
    """Two token lists that share a prefix, and a guess at its length (right or wrong)."""
    shared = draw(st.lists(st.integers(0, 3), max_size=300))
    tails = st.lists(st.integers(0, 3), max_size=70)
    a, b = shared + draw(tails), shared + draw(tails)
    likely = draw(st.one_of(st.integers(-5, 400), st.just(len(shared))))
    return a, b, likely


@settings(max_examples=400, deadline=None)
@given(pairs())
def test_common_prefix_length_is_the_loop(pair):
    a, b, likely = pair
    expected = loop_prefix_length(a, b)
    assert common_prefix_length(tuple(a), tuple(b)) == expected
    assert common_prefix_length(tuple(a), tuple(b), likely) == expected
    assert common_prefix_length(a, b, likely) == expected
    text_a, text_b = "".join(map(str, a)), "".join(map(str, b))
    assert common_prefix_length(text_a, text_b, likely) == expected
    assert common_prefix_length(bytes(a), bytes(b), likely) == expected
    packed_a, packed_b = array("q", a).tobytes(), array("q", b).tobytes()
    assert common_prefix_length(packed_a, packed_b, likely * 8) // 8 == expected


@st.composite
def ending_alike(draw):
    """Two token lists that share an ending (up to a few hundred tokens: past one gallop)."""
    shared = draw(st.lists(st.integers(0, 3), max_size=300))
    heads = st.lists(st.integers(0, 3), max_size=70)
    return draw(heads) + shared, draw(heads) + shared


@settings(max_examples=400, deadline=None)
@given(ending_alike())
def test_common_suffix_length_is_the_loop(pair):
    a, b = pair
    expected = loop_prefix_length(a[::-1], b[::-1])
    assert common_suffix_length(tuple(a), tuple(b)) == expected
    assert common_suffix_length(a, b) == expected
    text_a, text_b = "".join(map(str, a)), "".join(map(str, b))
    assert common_suffix_length(text_a, text_b) == expected
    assert common_suffix_length(bytes(a), bytes(b)) == expected


@pytest.mark.parametrize(
    ("a", "b", "length"),
    [
        ("", "", 0),
        ("", "abc", 0),
        ("abc", "abc", 3),
        ("xbc", "abc", 2),
        ("bc", "abc", 2),  # one is the other's ending
        ("abc", "abd", 0),
        ("é" * 200 + "z", "e" + "é" * 200 + "z", 201),
    ],
)
def test_common_suffix_length_edges(a, b, length):
    assert common_suffix_length(a, b) == length
    assert common_suffix_length(b, a) == length


def split_differing_lines(a: str, b: str) -> tuple[list[str], list[str]]:
    """What is left of both line lists past their common head, then their common tail."""
    lines_a, lines_b = a.split("\n"), b.split("\n")
    head = loop_prefix_length(lines_a, lines_b)
    rest_a, rest_b = lines_a[head:], lines_b[head:]
    tail = loop_prefix_length(rest_a[::-1], rest_b[::-1])
    return rest_a[: len(rest_a) - tail], rest_b[: len(rest_b) - tail]


# Lines over a small alphabet, so that texts share lines, line starts and line ends often.
LINES = st.lists(st.text("ab\n", max_size=4), max_size=6).map("\n".join)


@st.composite
def texts_alike(draw):
    """Two texts that share a head and a tail (of whole lines or not)."""
    head, tail = draw(LINES), draw(LINES)
    return head + draw(LINES) + tail, head + draw(LINES) + tail


@settings(max_examples=1000, deadline=None)
@given(texts_alike())
def test_differing_lines_is_what_the_line_lists_leave(pair):
    a, b = pair
    assert differing_lines(a, b) == split_differing_lines(a, b)
    assert differing_lines(b, a) == split_differing_lines(b, a)


@pytest.mark.parametrize(
    ("a", "b", "middle"),
    [
        ("", "", ([], [])),
        ("x", "x", ([], [])),
        ("x\n", "x", ([""], [])),  # a last, empty line
        ("x", "x\ny", ([], ["y"])),
        ("q\nx", "r\nx", (["q"], ["r"])),
        ("a\nDate: 1\nb", "a\nDate: 2\nb", (["Date: 1"], ["Date: 2"])),
        ("a\nb\nc", "a\nc", (["b"], [])),  # a line removed
        ("ab\nc", "a\nc", (["ab"], ["a"])),  # lines that differ in their end only
    ],
)
def test_differing_lines_edges(a, b, middle):
    assert differing_lines(a, b) == middle
    assert split_differing_lines(a, b) == middle


ONE, TWO = {"name": "a"}, {"name": "a"}


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ((), (), True),
        ((ONE,), (ONE,), True),
        ([ONE, TWO], (ONE, TWO), True),
        ((ONE,), (TWO,), False),  # equal, but not the same object
        ((ONE, TWO), (TWO, ONE), False),
        ((ONE,), (ONE, ONE), False),
    ],
)
def test_same_items(a, b, same):
    assert same_items(a, b) is same


def test_same_items_memo_recomputes_unless_the_very_same_objects_come_again():
    calls = []
    memo = SameItemsMemo(lambda items: calls.append(list(items)) or len(calls))
    assert [memo((ONE,)), memo([ONE]), memo((TWO,)), memo((TWO,)), memo(())] == [1, 1, 2, 2, 3]
    assert calls == [[ONE], [TWO], []]
