"""The longest-prefix index of attribution: which request last held each chained block key.

It behaves exactly like an LRU map ``key -> seq`` of at most ``limit`` keys into which every
request puts all its keys in order (the shared ones refreshed, the new ones added) and which
then forgets its least recently put keys. It stores that map by request instead of by key, so
that putting a request costs a few dictionary operations per request that shares keys with it,
not one per key.

Why this is the same map: a key is the chained hash of a token prefix, so a request that holds
a key holds every shorter key on its path. The request that last put a key (its *holder*) is
the latest request holding it; the keys a request still holds are therefore the end of its
key list, and the LRU order is by (holder, position in the holder's list). Forgetting the
least recent keys removes the front of the oldest holder's run. So every request holds one
contiguous *run* of its key list, from some position to its end, and along any request's
path the holders change only where a run starts: the index keeps the runs (oldest first) and
a map from the first key of each run to its request.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence


class PrefixIndex:
    """Chained block keys -> the latest request that held them, at most ``limit`` keys."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        # seq -> the keys it holds (the end of its key list), oldest request first
        self.runs: OrderedDict[int, Sequence[Hashable]] = OrderedDict()
        self.starts: dict[Hashable, int] = {}

    def holders(self, keys: Sequence[Hashable]) -> list[int]:
        """The holder of each leading run of ``keys`` that the index has, up to the first key
        it lacks (the requests that share ever shorter prefixes with ``keys``, newest first)."""
        return [seq for seq, _, _ in self._steps(keys)]

    def put(self, keys: Sequence[Hashable], seq: int) -> None:
        """Record that request ``seq`` (newer than any before) holds ``keys``, then forget the
        least recently put keys beyond the limit. ``keys`` is kept, never modified."""
        # Past a key the index lacks, only the front of the oldest run can still hold keys of
        # this path (the keys before it were forgotten, so the index is full). Those keys are
        # left there, counted twice, until the trim below: it forgets more keys than there
        # are past the gap, oldest first, so exactly those first.
        for holder, start, end in self._steps(keys):
            self._cut(holder, end - start)
        if keys:
            self.runs[seq] = keys
            self.starts[keys[0]] = seq
            self.size += len(keys)
        while self.size > self.limit:
            self._cut(next(iter(self.runs)), self.size - self.limit)

    def _steps(self, keys: Sequence[Hashable]) -> list[tuple[int, int, int]]:
        """``(holder, start, end)`` for the runs that hold ``keys[start:end]``, one after the
        other from the first key up to the first key the index lacks."""
        steps, position = [], 0
        while position < len(keys):
            holder = self.starts.get(keys[position])
            if holder is None:
                break
            end = position + _shared_run(self.runs[holder], keys, position)
            steps.append((holder, position, end))
            position = end
        return steps

    def _cut(self, holder: int, count: int) -> None:
        """Forget the first ``count`` keys of ``holder``'s run (all of it at most)."""
        run = self.runs[holder]
        if self.starts.get(run[0]) == holder:  # another run's only on a hash collision
            del self.starts[run[0]]
        if count >= len(run):
            del self.runs[holder]
            self.size -= len(run)
            return
        rest = run[count:]
        self.runs[holder] = rest
        self.starts[rest[0]] = holder
        self.size -= count


def _shared_run(run: Sequence[Hashable], keys: Sequence[Hashable], position: int) -> int:
    """How many keys of ``run`` (whose first key is ``keys[position]``) go on as ``keys`` do
    from ``position``. A chained key stands for its whole prefix, so the two agree up to some
    point and never after it: a binary search finds that point."""
    low, high = 1, min(len(run), len(keys) - position)
    while low < high:
        middle = (low + high + 1) // 2
        if run[middle - 1] == keys[position + middle - 1]:
            low = middle
        else:
            high = middle - 1
    return low
