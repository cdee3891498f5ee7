"""From ``(component name, text)`` pieces to a :class:`~prefixlint.request.Rendered` prompt."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from prefixlint.request import Component, Rendered

if TYPE_CHECKING:
    from prefixlint.chat_formats.memo import SegmentEncoder

Piece = tuple[str, str]


def merge_pieces(pieces: Sequence[Piece]) -> list[Piece]:
    """Join neighbouring pieces of the same component and drop empty ones."""
    merged: list[Piece] = []
    for name, text in pieces:
        if not text:
            continue
        if merged and merged[-1][0] == name:
            merged[-1] = (name, merged[-1][1] + text)
        else:
            merged.append((name, text))
    return merged


def assemble(pieces: Sequence[Piece], encoder: SegmentEncoder, template: str) -> Rendered:
    """Concatenate the pieces, tokenize, and place each component in characters and tokens.

    A token belongs to the component where its first character lies, so component token
    ranges partition the tokens even when a token straddles two components.
    """
    merged = merge_pieces(pieces)
    texts = [text for _, text in merged]
    tokens, token_starts = encoder.encode_pieces(texts)
    components = []
    char_start = 0
    for index, (name, text) in enumerate(merged):
        last = index == len(merged) - 1
        token_end = len(tokens) if last else token_starts[index + 1]
        char_end = char_start + len(text)
        components.append(Component(name, char_start, char_end, token_starts[index], token_end))
        char_start = char_end
    return Rendered("".join(texts), tuple(tokens), tuple(components), template)
