"""Convert between character offsets and 1-based line/column positions of a text."""

from __future__ import annotations

import bisect
import re
from itertools import accumulate

_PYTHON_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def python_lines(text: str) -> list[str]:
    """The lines of ``text`` as the Python parser counts them (``\\r\\n``, ``\\r`` and
    ``\\n`` each end one), without their line endings."""
    if "\r" not in text:  # most files: a plain split, several times faster than the pattern
        return text.split("\n")
    return _PYTHON_LINE_BREAK.split(text)


def python_line_starts(text: str) -> list[int]:
    """The offset at which each of :func:`python_lines` starts."""
    if "\r" in text:
        return [0, *(m.end() for m in _PYTHON_LINE_BREAK.finditer(text))]
    lengths = [len(line) + 1 for line in text.split("\n")]
    lengths.pop()
    return list(accumulate(lengths, initial=0))


class LineIndex:
    """Line starts of a text; lines end at ``\\n`` (a ``\\r`` before it belongs to the line)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0]
        position = text.find("\n")
        while position != -1:
            self.starts.append(position + 1)
            position = text.find("\n", position + 1)

    def position(self, offset: int) -> tuple[int, int]:
        """``(line, column)``, both 1-based, of character ``offset``."""
        line = bisect.bisect_right(self.starts, offset) - 1
        return line + 1, offset - self.starts[line] + 1

    def offset(self, line: int, column: int) -> int:
        """The character offset of 1-based ``line`` and ``column`` (clamped to the text)."""
        line = min(max(line, 1), len(self.starts))
        return min(self.starts[line - 1] + max(column, 1) - 1, len(self.text))

    def line_text(self, line: int) -> str:
        """Line ``line`` (1-based) without its line ending."""
        if not 1 <= line <= len(self.starts):
            return ""
        start = self.starts[line - 1]
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.text)
        return self.text[start:end].rstrip("\r")

    def line_bounds(self, line: int) -> tuple[int, int]:
        """Offsets of the start of ``line`` and of the end of its text (before the newline)."""
        start = self.starts[line - 1]
        end = self.starts[line] - 1 if line < len(self.starts) else len(self.text)
        return start, end
