import pytest

from prefixlint.linting.fixer import apply_edits
from prefixlint.types import Applicability, Edit, Fix


def fix(*edits):
    return Fix(tuple(Edit(*e) for e in edits), Applicability.SAFE, "t")


@pytest.mark.parametrize(
    ("text", "fixes", "expected", "applied"),
    (
        pytest.param("abc", [], "abc", 0, id="no fixes"),
        pytest.param("abc", [fix((1, 2, "X"))], "aXc", 1, id="replace"),
        pytest.param("abc", [fix((0, 0, ">"))], ">abc", 1, id="insert at start"),
        pytest.param("abc", [fix((3, 3, "<"))], "abc<", 1, id="insert at end"),
        pytest.param("abc", [fix((2, 3, "")), fix((0, 1, ""))], "b", 2, id="sorted"),
        pytest.param(
            "abcdef", [fix((0, 3, "X")), fix((2, 4, "Y"))], "Xdef", 1, id="overlap skipped"
        ),
        pytest.param("abcd", [fix((0, 2, "X")), fix((2, 3, "Y"))], "Xcd", 1, id="touching waits"),
        pytest.param("abc", [fix((0, 1, "X")), fix((0, 1, "X"))], "Xbc", 1, id="duplicate once"),
        pytest.param("abc", [fix((0, 1, "X"), (2, 3, "Z"))], "XbZ", 1, id="multi-edit fix"),
        pytest.param("abc", [fix((0, 2, "X"), (1, 3, "Z"))], "abc", 0, id="self-overlap"),
        pytest.param("abc", [fix((2, 9, "X"))], "abc", 0, id="past the end"),
        pytest.param(
            "abcdef",
            [fix((0, 1, "X"), (4, 5, "Y")), fix((2, 3, "Z"))],
            "XbcdYf",
            1,
            id="fix spanning another is applied whole or not at all",
        ),
    ),
)
def test_apply_edits(text, fixes, expected, applied):
    new_text, done = apply_edits(text, fixes)
    assert new_text == expected
    assert len(done) == applied
