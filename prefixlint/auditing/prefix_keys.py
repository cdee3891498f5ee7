"""The longest-prefix index's keys: one per full block of units, standing for the whole prefix.

Key ``i`` is ``block + sum(hash(block_j) * M_j for j <= i)``: each block's tuple hash times a
fixed random 64-bit multiplier of its position, summed as Python integers (no wrap-around).
Two prefixes get the same key only when their block hashes agree or a sum of products of
random 64-bit numbers happens to vanish, as unlikely as a collision of a 64-bit chained hash.
Unlike a chained hash, the keys come from C-speed iteration (grouping, ``map`` and
``accumulate``), with no Python step per block, and a key is extended from the previous one:
a request sharing a prefix with an earlier one starts from that one's last shared key.
The keys are worked out in order only as far as they are read (:class:`BlockKeys`): the
longest-prefix index reads a request's keys about as far as it shares them with another, so
a request whose prompt parts from every other early (a per-request timestamp) costs the
keys of its first blocks only.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Iterator, Sequence
from itertools import accumulate, islice
from typing import overload

from prefixlint.sequences import common_prefix_length

# One multiplier per block position, drawn from a fixed seed and grown as prompts need.
_MULTIPLIERS: list[int] = []
_DRAW = random.Random(0x5EED_B10C)


def _multipliers(count: int) -> list[int]:
    """The first ``count`` (at least) position multipliers."""
    while len(_MULTIPLIERS) < count:
        _MULTIPLIERS.append(_DRAW.getrandbits(64) | 1)
    return _MULTIPLIERS


class BlockKeys(Sequence[int]):
    """The keys of every full ``block`` of ``units`` (see the module docstring), worked out
    in order as far as they are read.

    ``known`` are the keys of an earlier sequence that shares its first ``shared_units``
    units with ``units``; the keys of the shared full blocks are taken from it.
    """

    __slots__ = ("_block", "_count", "_keys", "_units")

    def __init__(
        self,
        units: tuple[int, ...],
        block: int,
        known: Sequence[int] = (),
        shared_units: int = 0,
    ) -> None:
        self._units = units
        self._block = block
        self._count = len(units) // block
        self._keys = list(known[: min(shared_units // block, len(known), self._count)])

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, index: int) -> int: ...

    @overload
    def __getitem__(self, index: slice) -> list[int]: ...

    def __getitem__(self, index: int | slice) -> int | list[int]:
        if isinstance(index, slice):
            self._work_out(index.indices(self._count)[1])
            return self._keys[index]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("block key index out of range")
        if index >= len(self._keys):
            self._work_out(index + 1)
        return self._keys[index]

    def __iter__(self) -> Iterator[int]:
        self._work_out(self._count)
        return iter(self._keys)

    def agreeing(self, start: int, other: BlockKeys, position: int) -> int | None:
        """How many keys from ``start`` go on as ``other``'s do from ``position`` (where the
        two agree): the full blocks of units they share from there (equal prefixes, equal
        keys), compared as units. The one that has worked out more keys works out those
        agreeing keys and lends them to the other. ``None`` when the agreement at ``start``
        is a hash collision."""
        block = self._block
        if block != other._block or start != position:
            return None
        shared = common_prefix_length(self._units, other._units) // block
        stop = min(shared, self._count, other._count)
        if stop <= start:
            return None
        lender, borrower = (self, other) if len(self._keys) >= len(other._keys) else (other, self)
        lender._work_out(stop)  # worked out once, for both
        keys = borrower._keys
        if len(keys) < stop:
            keys += lender._keys[len(keys) : stop]
        return stop - start

    def _work_out(self, stop: int) -> None:
        """Work out the keys before ``stop`` (at most every key)."""
        done, block = len(self._keys), self._block
        stop = min(stop, self._count)
        if stop <= done:
            return
        rest = iter(self._units[done * block : stop * block])
        hashes = map(hash, zip(*[rest] * block, strict=True))
        terms = map(operator.mul, hashes, islice(_multipliers(stop), done, stop))
        keys = self._keys
        keys += islice(accumulate(terms, initial=keys[-1] if keys else block), 1, None)
