"""Whole blocks of packed token ids whose chained vLLM hashes are worked out when first read.

A request's blocks after its first miss are new to the cache; most are never looked up
again (a prompt that carries its own timestamp shares nothing past it). A chain or run of
the vLLM model (:mod:`prefixlint.cache.block_runs`) keeps such blocks as
:class:`PendingBlocks` and hashes them only as far as a later request's lookup reads them,
or takes the hashes of a later request whose blocks have the same content (equal parent
hash and equal tokens: equal hash).
"""

from __future__ import annotations

from struct import Struct

from prefixlint.cache.chain_memo import extend_chain
from prefixlint.sequences import common_prefix_length

Extras = tuple[tuple[int, ...], tuple[int, ...]]


class PendingBlocks:
    """Blocks ``[first, end)`` of a chain as packed token ids (``data``), those before
    ``done`` hashed by their holder, the others not yet; ``extras`` are the chain's
    :func:`prefixlint.cache.chain_memo.block_extras`."""

    __slots__ = ("data", "done", "end", "extras", "first", "unpack")

    def __init__(
        self, data: bytes, first: int, done: int, end: int, extras: Extras, unpack: Struct
    ) -> None:
        self.data = data
        self.first = first
        self.done = done
        self.end = end
        self.extras = extras
        self.unpack = unpack  # one block of token ids

    def _bytes(self, lo: int, hi: int) -> bytes:
        width = self.unpack.size
        return self.data[(lo - self.first) * width : (hi - self.first) * width]

    def hash_into(self, hashes: list[int], stop: int) -> None:
        """Append the hashes of blocks ``[done, stop)`` to ``hashes`` (the chain up to
        ``done``: empty only when ``done`` is 0)."""
        width = self.unpack.size
        view = memoryview(self.data)[(self.done - self.first) * width : (stop - self.first) * width]
        extend_chain(hashes, self.unpack.iter_unpack(view), self.extras)
        self.done = stop

    def same_content(self, other: PendingBlocks, lo: int, hi: int) -> int:
        """How many blocks from ``lo`` (both hold it) on, up to ``hi``, ``other`` has with
        the same tokens."""
        hi = min(hi, self.end, other.end)
        width = self.unpack.size
        mine = self.data if lo == self.first and hi == self.end else self._bytes(lo, hi)
        # mostly all of them (a conversation's next request repeats this one's blocks)
        if other.data.startswith(mine, (lo - other.first) * width):
            return hi - lo
        return common_prefix_length(mine, other._bytes(lo, hi)) // width

    def part(self, lo: int, hi: int) -> PendingBlocks:
        """A copy of blocks ``[lo, hi)``, none of them hashed, holding only their bytes."""
        return PendingBlocks(self._bytes(lo, hi), lo, lo, hi, self.extras, self.unpack)
