"""The one bounded memo every stage uses: a dict that forgets its least recently used entries."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(OrderedDict[K, V]):
    """At most ``size`` entries, the least recently stored or recalled forgotten first;
    ``hits`` and ``misses`` count what :meth:`recall` found."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size
        self.hits = 0
        self.misses = 0

    def recall(self, key: K) -> V | None:
        """The value stored for ``key`` (now the most recently used), or None."""
        found = self.get(key)
        if found is not None:
            self.hits += 1
            self.move_to_end(key)
        else:
            self.misses += 1
        return found

    def remember(self, key: K, value: V) -> None:
        """Store ``value`` for ``key`` as the most recently used entry."""
        self[key] = value
        self.move_to_end(key)
        if len(self) > self.size:
            self.popitem(last=False)
