"""The sliding-window test tries only the shifts where a window can start: the same answers
as trying every shift."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.auditing import classify

MESSAGES = st.lists(
    st.builds(
        lambda role, text: {"role": role, "content": text},
        st.sampled_from(["user", "assistant", "system"]),
        st.sampled_from(["a", "b", "c"]),
    ),
    max_size=8,
)


def every_shift(before, after, min_overlap):
    """The test as first written: every shift tried."""
    old, new = classify._non_system(before), classify._non_system(after)
    for shift in range(1, len(old) - min_overlap + 1):
        kept = old[shift:]
        if new[: len(kept)] == kept:
            return True
        replaced = shift >= 2 and len(kept) >= 2 and new[1 : 1 + len(kept)] == kept
        if replaced and new[0] not in old[:shift]:
            return True
    return False


@settings(max_examples=1000, deadline=None)
@given(MESSAGES, MESSAGES, st.sampled_from([0, 1, 2]))
def test_skipping_shifts_changes_no_answer(before, after, min_overlap):
    expected = every_shift(before, after, min_overlap)
    assert classify.is_sliding_window(before, after, min_overlap) == expected


def test_a_window_and_a_summary_are_found():
    talk = [{"role": "user", "content": c} for c in "abcde"]
    summary = {"role": "user", "content": "summary"}
    assert classify.is_sliding_window(talk, talk[2:])
    assert classify.is_sliding_window(talk, [summary, *talk[2:]])
    assert not classify.is_sliding_window(talk, [summary, *talk[:1]])
