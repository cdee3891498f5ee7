"""Source maps between a text and a view derived from it."""

import pytest

from prefixlint.sourcemap import SourceMap, SourceMapBuilder


def build_map():
    """``ab{{x}}cd\\\\nef``: a placeholder rendered as nothing, an escape rendered as a newline."""
    source = "ab{{x}}cd\\nef"
    builder = SourceMapBuilder(source)
    builder.literal(2)
    builder.other("placeholder", 7)
    builder.literal(9)
    builder.other("escape", 11, "\n")
    builder.literal(len(source))
    return source, builder.build()


def test_rendered_text():
    _, source_map = build_map()
    assert source_map.rendered == "abcd\nef"


@pytest.mark.parametrize(
    ("rendered", "source"),
    [(0, 0), (1, 1), (2, 7), (3, 8), (4, 9), (5, 11), (6, 12), (7, 13)],
)
def test_to_source(rendered, source):
    _, source_map = build_map()
    assert source_map.to_source(rendered) == source


@pytest.mark.parametrize(
    ("source", "rendered"),
    [(0, 0), (2, 2), (4, 2), (7, 2), (8, 3), (9, 4), (10, 4), (11, 5), (13, 7)],
)
def test_to_rendered(source, rendered):
    _, source_map = build_map()
    assert source_map.to_rendered(source) == rendered


def test_source_range_covers_whole_escapes():
    _, source_map = build_map()
    assert source_map.source_range(3, 5) == (8, 11)


@pytest.mark.parametrize(
    ("start", "end", "literal"),
    [(0, 2, True), (1, 3, False), (7, 9, True), (9, 10, False), (11, 13, True)],
)
def test_is_literal_on_source_ranges(start, end, literal):
    _, source_map = build_map()
    assert source_map.is_literal(start, end) is literal


def test_identity_map_with_offset():
    source_map = SourceMap.identity("hello", offset=10)
    assert source_map.to_source(0) == 10
    assert source_map.to_source(5) == 15
    assert source_map.to_rendered(12) == 2


def test_adjacent_literals_merge():
    builder = SourceMapBuilder("abcdef")
    builder.literal(2)
    builder.literal(4)
    builder.other("comment", 4)
    builder.literal(6)
    assert [s.kind for s in builder.build().slices] == ["literal"]
