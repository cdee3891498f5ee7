"""Exact-prefix cache entries with expiry, for breakpoint-based provider caches."""

from __future__ import annotations

from collections.abc import Hashable


class PrefixEntries:
    """Prefix keys (see :func:`prefixlint.cache.base.prefix_digests`) with expiry times.

    ``now=None`` means no clock: entries never expire. ``ever`` keeps every key written, for
    what the cache would hold had nothing expired.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._entries: dict[Hashable, tuple[float, float]] = {}
        self.ever: set[Hashable] = set()

    def alive(self, key: Hashable, now: float | None) -> bool:
        entry = self._entries.get(key)
        if entry is None:
            return False
        if now is not None and entry[0] < now:
            del self._entries[key]
            return False
        return True

    def write(self, key: Hashable, now: float | None, ttl: float) -> None:
        self._entries[key] = (float("inf") if now is None else now + ttl, ttl)
        self.ever.add(key)

    def refresh(self, key: Hashable, now: float | None) -> None:
        """Restart an alive entry's lifetime with its own TTL (a free refresh on a hit)."""
        self.write(key, now, self._entries[key][1])
