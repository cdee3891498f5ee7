"""Lines of Python source as the parser counts them, and where each starts."""

import re

import pytest

from prefixlint.lines import python_line_starts, python_lines

# What the parser ends a line at: the definition the fast paths must agree with.
_BREAK = re.compile(r"\r\n|\r|\n")


@pytest.mark.parametrize(
    "text",
    (
        pytest.param("", id="empty"),
        pytest.param("x = 1", id="no line break"),
        pytest.param("x = 1\ny = 2\n", id="newlines"),
        pytest.param("x = 1\r\ny = 2\r\n", id="crlf"),
        pytest.param("x = 1\ry = 2", id="a lone carriage return"),
        pytest.param("a\r\n\rb\n\n", id="mixed"),
        pytest.param("s = 'é'\n# ü\n\n", id="non-ascii"),
        pytest.param(
            "a\x0cb\x0bc\u2028d\n", id="breaks that str.splitlines takes but the parser does not"
        ),
    ),
)
def test_lines_and_starts_agree_with_the_parser_s_line_breaks(text):
    assert python_lines(text) == _BREAK.split(text)
    assert python_line_starts(text) == [0] + [m.end() for m in _BREAK.finditer(text)]
