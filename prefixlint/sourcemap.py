"""Maps between a source text and a view derived from it, slice by slice.

The idea is sqlfluff's ``TemplatedFile``: the source is cut into consecutive slices, each with
a source range and a rendered range. A ``literal`` slice is copied unchanged (so offsets inside
it map one to one); any other slice (a ``placeholder``, ``block`` or ``comment`` tag of a
template, an ``escape`` sequence of a JSON or YAML string, the ``indent`` of a YAML block) maps
as a whole. Two views use it: the decoded value of a string in a YAML/JSON/TOML file (rendered)
against the file (source), and the static text of a template (rendered: literal slices only)
against the template.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

LITERAL = "literal"


@dataclass(frozen=True)
class Slice:
    """``source[source_start:source_end]`` renders as ``rendered[rendered_start:rendered_end]``."""

    kind: str
    source_start: int
    source_end: int
    rendered_start: int
    rendered_end: int


class SourceMap:
    """Consecutive slices covering a source range, and the rendered text they produce."""

    def __init__(self, slices: list[Slice], rendered: str) -> None:
        self.slices = slices
        self.rendered = rendered
        self._visible = [s for s in slices if s.rendered_end > s.rendered_start]
        self._visible_starts = [s.rendered_start for s in self._visible]
        self._source_starts = [s.source_start for s in slices]

    @classmethod
    def identity(cls, text: str, offset: int = 0) -> SourceMap:
        """A view equal to ``text``, which starts at ``offset`` in its source."""
        return cls([Slice(LITERAL, offset, offset + len(text), 0, len(text))], text)

    def _slice_at_rendered(self, offset: int) -> Slice:
        """The slice that renders the character at ``offset`` (``0 <= offset < len``)."""
        return self._visible[bisect.bisect_right(self._visible_starts, offset) - 1]

    def to_source(self, offset: int) -> int:
        """Source offset of the rendered character at ``offset`` (or of the end, for the end)."""
        if not self.slices:
            return 0
        if offset >= len(self.rendered) or not self._visible:
            return self.slices[-1].source_end
        piece = self._slice_at_rendered(offset)
        if piece.kind == LITERAL:
            return piece.source_start + offset - piece.rendered_start
        return piece.source_start

    def source_range(self, start: int, end: int) -> tuple[int, int]:
        """The source range that renders ``rendered[start:end]`` (whole slices at the edges)."""
        source_start = self.to_source(start)
        if end <= start:
            return source_start, source_start
        last = self._slice_at_rendered(end - 1)
        if last.kind == LITERAL:
            return source_start, last.source_start + end - last.rendered_start
        return source_start, last.source_end

    def to_rendered(self, offset: int) -> int:
        """Rendered offset of source ``offset`` (the start of its slice for non-literals)."""
        if not self.slices:
            return 0
        index = max(bisect.bisect_right(self._source_starts, offset) - 1, 0)
        piece = self.slices[index]
        if piece.kind == LITERAL:
            return piece.rendered_start + min(offset - piece.source_start, piece.rendered_end)
        return piece.rendered_start

    def slice_at_source(self, offset: int) -> Slice | None:
        """The slice whose source range holds ``offset``."""
        index = bisect.bisect_right(self._source_starts, offset) - 1
        if index < 0 or offset >= self.slices[index].source_end:
            return None
        return self.slices[index]

    def is_literal(self, start: int, end: int) -> bool:
        """Whether ``source[start:end]`` lies in literal slices only (copied unchanged)."""
        index = max(bisect.bisect_right(self._source_starts, start) - 1, 0)
        while index < len(self.slices) and self.slices[index].source_start < end:
            piece = self.slices[index]
            if piece.source_end > start and piece.kind != LITERAL:
                return False
            index += 1
        return True


class SourceMapBuilder:
    """Collect slices left to right; literal slices next to each other are merged."""

    def __init__(self, source: str, start: int = 0) -> None:
        self.source = source
        self.position = start
        self._slices: list[Slice] = []
        self._parts: list[str] = []
        self._length = 0

    def literal(self, end: int) -> None:
        """The source up to ``end`` renders as itself."""
        if end <= self.position:
            return
        text = self.source[self.position : end]
        last = self._slices[-1] if self._slices else None
        if last and last.kind == LITERAL and last.source_end == self.position:
            self._slices[-1] = Slice(
                LITERAL, last.source_start, end, last.rendered_start, self._length + len(text)
            )
        else:
            self._slices.append(
                Slice(LITERAL, self.position, end, self._length, self._length + len(text))
            )
        self._parts.append(text)
        self._length += len(text)
        self.position = end

    def other(self, kind: str, end: int, rendered: str = "") -> None:
        """The source up to ``end`` renders as ``rendered`` (a tag, an escape, an indent)."""
        if end <= self.position and not rendered:
            return
        self._slices.append(
            Slice(kind, self.position, end, self._length, self._length + len(rendered))
        )
        self._parts.append(rendered)
        self._length += len(rendered)
        self.position = end

    def build(self) -> SourceMap:
        return SourceMap(self._slices, "".join(self._parts))
