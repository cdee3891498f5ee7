"""The longest-prefix index's keys: one per full block of units, standing for the whole prefix.

Key ``i`` is ``block + sum(hash(block_j) * M_j for j <= i)``: each block's tuple hash times a
fixed random 64-bit multiplier of its position, summed as Python integers (no wrap-around).
Two prefixes get the same key only when their block hashes agree or a sum of products of
random 64-bit numbers happens to vanish, as unlikely as a collision of a 64-bit chained hash.
Unlike a chained hash, the keys come from C-speed iteration (grouping, ``map`` and
``accumulate``), with no Python step per block, and a key is extended from the previous one:
a request sharing a prefix with an earlier one starts from that one's last shared key.
"""

from __future__ import annotations

import operator
import random
from collections.abc import Sequence
from itertools import accumulate, islice

# One multiplier per block position, drawn from a fixed seed and grown as prompts need.
_MULTIPLIERS: list[int] = []
_DRAW = random.Random(0x5EED_B10C)


def _multipliers(count: int) -> list[int]:
    """The first ``count`` (at least) position multipliers."""
    while len(_MULTIPLIERS) < count:
        _MULTIPLIERS.append(_DRAW.getrandbits(64) | 1)
    return _MULTIPLIERS


def block_keys(
    units: tuple[int, ...], block: int, known: Sequence[int] = (), shared_units: int = 0
) -> list[int]:
    """The keys of every full ``block`` of ``units`` (see the module docstring).

    ``known`` are the keys of an earlier sequence that shares its first ``shared_units``
    units with ``units``; the keys of the shared full blocks are taken from it.
    """
    shared = min(shared_units // block, len(known))
    count = len(units) // block
    keys = list(known[:shared])
    if shared >= count:
        return keys
    rest = iter(units[shared * block : count * block])
    hashes = map(hash, zip(*[rest] * block, strict=True))
    terms = map(operator.mul, hashes, islice(_multipliers(count), shared, count))
    keys += islice(accumulate(terms, initial=keys[-1] if keys else block), 1, None)
    return keys
