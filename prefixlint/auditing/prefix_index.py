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

Keys are read only as far as the index needs them (a request's keys are worked out lazily,
:class:`prefixlint.auditing.prefix_keys.BlockKeys`): where two runs stop agreeing is found
by comparing one key, then twice as many, from the first; and the run that forgetting cuts
(the oldest, at most one at a time) is left *headless*, its new first key not worked out: a
lookup that arrives where that run now starts compares its own key there with the run's. A
run that another request's keys cut down to at most half its keys keeps only those, so that
the index holds about twice its keys' worth of units at most (and the headless run's).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Sequence

from prefixlint.auditing.prefix_keys import BlockKeys


class _Held:
    """The keys a request holds: ``keys[start:]``, ``keys[0]`` being key ``base`` of its key
    list (0: ``keys`` is the whole list)."""

    __slots__ = ("base", "keys", "start")

    def __init__(self, keys: Sequence[Hashable], start: int) -> None:
        self.keys = keys
        self.start = start
        self.base = 0


class PrefixIndex:
    """Chained block keys -> the latest request that held them, at most ``limit`` keys."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.size = 0
        # seq -> the keys it holds (the end of its key list), oldest request first
        self.runs: OrderedDict[int, _Held] = OrderedDict()
        self.starts: dict[Hashable, int] = {}
        self.headless: int | None = None  # the run whose first key ``starts`` lacks

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
            self._cut(holder, end - start, keep_start=True)
        if keys:
            self.runs[seq] = _Held(keys, 0)
            self.starts[keys[0]] = seq
            self.size += len(keys)
        while self.size > self.limit:
            self._cut(next(iter(self.runs)), self.size - self.limit, keep_start=False)

    def _steps(self, keys: Sequence[Hashable]) -> list[tuple[int, int, int]]:
        """``(holder, start, end)`` for the runs that hold ``keys[start:end]``, one after the
        other from the first key up to the first key the index lacks."""
        steps, position = [], 0
        while position < len(keys):
            key = keys[position]
            holder = self.starts.get(key)
            if holder is None:
                holder = self._headless_at(position, key)
                if holder is None:
                    break
            held = self.runs[holder]
            end = position + _shared_run(held.keys, held.start, keys, position)
            steps.append((holder, position, end))
            position = end
        return steps

    def _headless_at(self, position: int, key: Hashable) -> int | None:
        """The headless run, if it starts with ``key`` at ``position`` of its key list too
        (equal keys name equal prefixes, so they sit at one position)."""
        if self.headless is None:
            return None
        held = self.runs[self.headless]
        if held.base + held.start != position or held.keys[held.start] != key:
            return None
        return self.headless

    def _cut(self, holder: int, count: int, *, keep_start: bool) -> None:
        """Forget the first ``count`` keys of ``holder``'s run (all of it at most); with
        ``keep_start`` its new first key goes into ``starts``, else the run is headless."""
        held = self.runs[holder]
        keys, start = held.keys, held.start
        if holder == self.headless:
            self.headless = None
        elif self.starts.get(keys[start]) == holder:  # another run's only on a hash collision
            del self.starts[keys[start]]
        left = len(keys) - start
        if count >= left:
            del self.runs[holder]
            self.size -= left
            return
        start += count
        held.start = start
        self.size -= count
        if not keep_start:
            self.headless = holder
            return
        self.starts[keys[start]] = holder
        if start >= len(keys) - start:
            # Once as many keys are cut as are left, the run keeps those alone (not its
            # request's units): working them out costs no more than the keys cut.
            held.keys, held.base, held.start = keys[start:], held.base + start, 0


def _shared_run(
    run: Sequence[Hashable], start: int, keys: Sequence[Hashable], position: int
) -> int:
    """How many keys of ``run`` from ``start`` (``run[start]`` is ``keys[position]``) go on as
    ``keys`` do from ``position``. Block keys compare their units
    (:meth:`~prefixlint.auditing.prefix_keys.BlockKeys.agreeing`). Other keys: a chained key
    stands for its whole prefix, so the two agree up to some point and never after it: one key,
    then twice as many at a time, then a binary search between the last two tried find that
    point, reading about as many keys as agree."""
    if isinstance(run, BlockKeys) and isinstance(keys, BlockKeys):
        agreeing = run.agreeing(start, keys, position)
        if agreeing is not None:
            return agreeing
    limit = min(len(run) - start, len(keys) - position)
    low, step = 1, 1
    high = limit
    while low < limit:
        probe = min(limit, low + step)
        if run[start + probe - 1] != keys[position + probe - 1]:
            high = probe - 1
            break
        low, step = probe, 2 * step
    while low < high:
        middle = (low + high + 1) // 2
        if run[start + middle - 1] == keys[position + middle - 1]:
            low = middle
        else:
            high = middle - 1
    return low
