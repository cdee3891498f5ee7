"""Cached blocks ordered by heap entries, the smallest evicted first (Belady, the sweep's
policies).

An entry is a tuple whose last item is the block's hash; it is live while ``cached`` maps
that block to it. Re-keying a block pushes a new entry and leaves the old one in the heap, to
be skipped when popped and dropped when :func:`compact` rebuilds the heap.
"""

from __future__ import annotations

import heapq
from collections.abc import Container
from typing import Any, TypeVar

Entry = TypeVar("Entry", bound=tuple[Any, ...])


def evict(
    heap: list[Entry], cached: dict[int, Entry], count: int, pinned: Container[int]
) -> list[int]:
    """Drop ``count`` blocks from ``cached``, smallest live entry first, never a block in
    ``pinned``; the blocks dropped."""
    dropped: list[int] = []
    skipped = []
    while len(dropped) < count:
        entry = heapq.heappop(heap)
        block: int = entry[-1]
        if cached.get(block) is not entry:
            continue
        if block in pinned:
            skipped.append(entry)
            continue
        del cached[block]
        dropped.append(block)
    for entry in skipped:
        heapq.heappush(heap, entry)
    return dropped


def compact(heap: list[Entry], cached: dict[int, Entry]) -> None:
    """Rebuild ``heap`` from the live entries once stale ones outnumber them."""
    if len(heap) > 2 * len(cached) + 1024:
        heap[:] = cached.values()
        heapq.heapify(heap)
