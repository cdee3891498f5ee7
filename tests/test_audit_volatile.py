"""Volatile values are found line by line, each distinct line scanned once, exactly as a scan
of the whole text finds them."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint import vocabulary
from prefixlint.auditing import volatile
from prefixlint.auditing.volatile import VolatileValue, find_values, value_at, without_values

LINES = [
    "You are a helpful airline agent.",
    "Current date and time: 2026-11-30 09:12:44 UTC",
    "The current time is 2024-05-15 15:00:00 EST.",
    "Request ID: req_8fJ2kL9x77",
    "session_id = 'c0ffee00-1234-4abc-8def-0123456789ab'",
    "Today is Monday, January 5, 2026; call 1741000000 at 10:30 pm.",
    "  - Reservation 4471 for user mia_li_3668",
    "",
    "Region: eu-west-1, host: api-3b1d8",
]


def _whole_text_scan(text):
    """The values a scan of the whole text finds (the patterns never cross a line)."""
    found = [
        VolatileValue(code, m.start(), m.end())
        for code, pattern in (
            (vocabulary.TIMESTAMP, volatile.DATE_TIME),
            (vocabulary.UNIQUE_ID, volatile.UNIQUE_ID),
        )
        for m in pattern.finditer(text)
    ]
    for match in volatile._LABELLED.finditer(text):
        code = vocabulary.classify_name(match.group("label"))
        if code:
            found.append(VolatileValue(code, match.start("value"), match.end("value")))
    return sorted(found, key=lambda v: (v.start, -v.end))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(LINES) | st.text(max_size=40), max_size=12))
def test_line_by_line_equals_a_scan_of_the_whole_text(lines):
    text = "\n".join(lines)
    assert list(find_values(text)) == _whole_text_scan(text)


def test_no_pattern_crosses_a_line():
    for pattern in (volatile.DATE_TIME, volatile.UNIQUE_ID, volatile._LABELLED):
        for match in pattern.finditer("\n".join(LINES) + "\nMonday,\nJanuary 5\n10:30\nPM"):
            assert "\n" not in match.group(), (pattern.pattern[:30], match.group())


def test_values_found_in_each_line():
    text = "\n".join(LINES)
    stamp = text.index("2026-11-30")
    assert value_at(text, stamp + 12).code == vocabulary.TIMESTAMP
    request_id = value_at(text, text.index("req_8f"))
    assert text[request_id.start : request_id.end] == "req_8fJ2kL9x77"
    kept, removed = without_values("Time: 2026-11-30 09:12\nBe brief.")
    assert kept == "Time: \nBe brief." and removed == ("2026-11-30 09:12",)


def test_a_distinct_line_is_scanned_once():
    volatile._line_values.cache_clear()
    prompts = [
        f"Policy line.\nCurrent date and time: 2026-11-30 09:{m:02d}:00 UTC\nMore."
        for m in range(5)
    ]
    for prompt in prompts:
        list(find_values(prompt))
    info = volatile._line_values.cache_info()
    assert (info.misses, info.hits) == (2 + 5, 10 - 2)  # two shared lines, five date lines
    assert info.maxsize is not None


def _value_at_by_scan(text: str, offset: int) -> VolatileValue | None:
    best = None
    for value in find_values(text):
        covers = value.start <= offset <= value.end and value.start < value.end
        if covers and (best is None or value.end - value.start > best.end - best.start):
            best = value
    return best


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(LINES),
        max_size=6,
    ),
    st.integers(0, 200),
)
def test_value_at_looks_at_the_line_of_the_offset_only(lines, offset):
    text = "\n".join(lines)
    offset = min(offset, len(text))
    assert value_at(text, offset) == _value_at_by_scan(text, offset)


@pytest.mark.parametrize(
    ("line", "expected"),
    (
        # Prose labels: "label is value", the possessive read as its noun.
        ("The user's name is Dana and they are on the pro plan.",
         [("PFX103", "Dana and they are on the pro plan")]),
        ("The user\u2019s timezone is Europe/Oslo", [("PFX103", "Europe/Oslo")]),
        ("The working directory is /srv/app.", [("PFX104", "/srv/app")]),
        # A value ends with its sentence, not at a dot inside it.
        ("User locale: en-GB.v2. Be brief.", [("PFX103", "en-GB.v2")]),
        # Quiet: labels that name nothing that changes per request.
        ("The answer is 42.", []),
        ("Your name is Claude.", []),
        ("Tools are listed below.", []),
    ),
)  # fmt: skip
def test_labelled_values_in_prose(line, expected):
    assert [(v.code, line[v.start : v.end]) for v in find_values(line)] == expected
