"""From ``(component name, text)`` pieces to a :class:`~prefixlint.request.Rendered` prompt.

Pieces are encoded in blocks (:class:`Block`): a block holds the text, token ids and component
places of some consecutive pieces. Where every block starts or ends at a special token, no
token spans two blocks, so a prompt's tokens are its blocks' tokens end to end and a block
seen before (a message repeated by the next request of a conversation) is reused whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TypeVar

from prefixlint.chat.memo import SegmentEncoder
from prefixlint.lru import LRU
from prefixlint.request import Component, Rendered, pack_tokens

Piece = tuple[str, str]
# (component name, char start, char end, token start, token end), relative to the block;
# a name of None stands for the name the block is given when it is placed (see join_blocks).
Part = tuple[str | None, int, int, int, int]
Name = TypeVar("Name", str, str | None)


def merge_pieces(pieces: Sequence[tuple[Name, str]]) -> list[tuple[Name, str]]:
    """Join neighbouring pieces of the same component and drop empty ones."""
    merged: list[tuple[Name, str]] = []
    for name, text in pieces:
        if not text:
            continue
        if merged and merged[-1][0] == name:
            merged[-1] = (name, merged[-1][1] + text)
        else:
            merged.append((name, text))
    return merged


@dataclass(frozen=True, slots=True, eq=False)
class Block:
    """Consecutive pieces encoded together: text, ids (also packed, as ``array("q")`` bytes),
    each component's place, and whether the text starts and ends at a special token."""

    text: str
    ids: tuple[int, ...]
    packed: bytes
    parts: tuple[Part, ...]
    cut_before: bool
    cut_after: bool


def encode_block(pieces: Sequence[tuple[str | None, str]], encoder: SegmentEncoder) -> Block:
    """Encode the pieces and place each component in characters and tokens.

    A token belongs to the component where its first character lies, so component token
    ranges partition the tokens even when a token straddles two components.
    """
    merged = merge_pieces(pieces)
    texts = [text for _, text in merged]
    tokens, token_starts = encoder.encode_pieces(texts)
    parts: list[Part] = []
    char_start = 0
    for index, (name, text) in enumerate(merged):
        token_end = len(tokens) if index == len(merged) - 1 else token_starts[index + 1]
        char_end = char_start + len(text)
        parts.append((name, char_start, char_end, token_starts[index], token_end))
        char_start = char_end
    return Block(
        "".join(texts),
        tokens,
        pack_tokens(tokens),
        tuple(parts),
        bool(texts) and encoder.cuts_before(texts[0]),
        bool(texts) and encoder.cuts_after(texts[-1]),
    )


def separable(blocks: Sequence[Block]) -> bool:
    """Whether a special token separates every two neighbouring blocks (none may be empty)."""
    return all(before.cut_after or after.cut_before for before, after in pairwise(blocks))


# A block's components at a place: (block, name, char start, token start) -> components.
Placed = LRU[tuple[Block, str, int, int], tuple[Component, ...]]


def join_blocks(
    blocks: Sequence[Block], names: Sequence[str], template: str, placed: Placed | None = None
) -> Rendered:
    """The prompt made of ``blocks`` end to end; ``names[i]`` names ``blocks[i]``'s unnamed
    parts. Equal to encoding all their pieces at once when the blocks are :func:`separable`.

    ``placed`` remembers the components of a block at a place (the next request of a
    conversation has its earlier messages where the previous one had them).
    """
    components: list[Component] = []
    tokens: list[int] = []
    char_base = 0
    for block, name in zip(blocks, names, strict=True):
        key = (block, name, char_base, len(tokens))
        found = None if placed is None else placed.recall(key)
        if found is None:
            found = _place(block, name, char_base, len(tokens))
            if placed is not None:
                placed.remember(key, found)
        components += found
        tokens += block.ids
        char_base += len(block.text)
    return Rendered(
        "".join([block.text for block in blocks]),
        tuple(tokens),
        tuple(components),
        template,
        b"".join([block.packed for block in blocks]),
    )


def _place(block: Block, block_name: str, char_base: int, token_base: int) -> tuple[Component, ...]:
    return tuple(
        Component(
            block_name if name is None else name,
            char_base + char_start,
            char_base + char_end,
            token_base + token_start,
            token_base + token_end,
        )
        for name, char_start, char_end, token_start, token_end in block.parts
    )


def assemble(pieces: Sequence[Piece], encoder: SegmentEncoder, template: str) -> Rendered:
    """Concatenate the pieces, tokenize, and place each component in characters and tokens."""
    return join_blocks([encode_block(pieces, encoder)], [""], template)
