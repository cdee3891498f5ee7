"""common_prefix_length and common_suffix_length against element-by-element loops, for every
sequence type."""

from __future__ import annotations

from array import array

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.sequences import (
    SameItemsMemo,
    common_prefix_length,
    common_suffix_length,
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
