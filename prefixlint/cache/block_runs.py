"""vLLM's block pool for sequential replay, kept as runs of consecutive blocks.

What :mod:`prefixlint.cache.vllm` describes block by block (a table of cached block hashes,
an LRU free queue, later copies of a recomputed hash) is held here per run: a tree whose
nodes are runs of blocks along a request's chain, split only where a hit ends, where
requests diverge, or where eviction or a recomputed copy cuts a run. The work of a request
follows the runs it touches, not its blocks. Evicted runs stay in the tree, marked so:
the same walk gives what is cached and what an infinite cache would hold.

A request's blocks are named by units (:class:`Chain`): block ``d`` is unit
``d // per_unit`` at offset ``d % per_unit`` (one unit per block for token prompts, one per
trace block when it holds several vLLM blocks); blocks from ``known`` on (output known
only by its count) match nothing. A chain's ``space`` names the tree it joins: chains
whose units are chained block hashes (which name their whole prefix) share the tree of
their ``per_unit``; units that name a prefix only under their parents (trace ids, whose
namespace the space carries) get a tree of their own. Only the tree's path is compared, so
both give the same blocks, and a copy is named by its space and key.

The free queue is the FIFO of requests in the order they finished, one *segment* each.
Between requests every cached block is free, and its place in the queue is
``(stamp, -depth)``: ``stamp`` is the last request that held it (a request frees its tail
block first). Each run carries its stamp; a hit restamps the runs it takes, so older
segments lose them without being touched. Eviction walks the oldest segment's chain from
its deepest block towards the root, takes the runs that still carry its stamp, and
resumes there next time: no scan of deleted entries, nothing visited twice.

A block computed again while its hash is cached (the hit stops short of it: the last prompt
token is always recomputed) is cached a second time, as in vLLM: a *copy*, queued in its
request's segment but outside the tree. A hit uses the oldest copy (the tree's block);
when that one is evicted the next oldest takes its place in the tree. Copies are rare and
handled block by block.
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Callable, Hashable, Sequence

from prefixlint.sequences import common_prefix_length


class Chain:
    """A request's full blocks, named by units; see the module docstring."""

    __slots__ = ("known", "length", "per_unit", "space", "tag", "units")

    def __init__(
        self,
        units: Sequence[int],
        per_unit: int,
        known: int,
        length: int,
        space: Hashable = None,
    ) -> None:
        self.units = units
        self.per_unit = per_unit
        self.space = per_unit if space is None else space  # the tree it belongs to
        self.known = known  # leading blocks with known content
        self.length = length  # full blocks the request fills
        self.tag = object()  # names its blocks of unknown content

    def key(self, depth: int) -> Hashable:
        """What names block ``depth``: equal keys, equal blocks (under a common prefix)."""
        if depth >= self.known:
            return (self.tag, depth)
        if self.per_unit == 1:
            return self.units[depth]
        return (self.units[depth // self.per_unit], depth % self.per_unit)


class _Run:
    __slots__ = (
        "base",
        "children",
        "copied",
        "hi",
        "known",
        "lo",
        "parent",
        "per_unit",
        "space",
        "stamp",
        "tag",
        "units",
    )

    def __init__(self, chain: Chain, lo: int, hi: int, parent: _Run | None, stamp: int) -> None:
        size = chain.per_unit
        self.per_unit, self.known, self.tag, self.space = size, chain.known, chain.tag, chain.space
        self.base = lo // size
        self.units = chain.units[self.base : -(-min(hi, chain.known) // size)]
        self.lo, self.hi, self.parent, self.stamp = lo, hi, parent, stamp
        self.children: dict[Hashable, _Run] = {}
        self.copied = False  # a block of it may have copies queued

    def key(self, depth: int) -> Hashable:
        """The key of block ``depth``, as :meth:`Chain.key` gives it."""
        if depth >= self.known:
            return (self.tag, depth)
        size = self.per_unit
        if size == 1:
            return self.units[depth - self.base]
        return (self.units[depth // size - self.base], depth % size)

    def hashes(self, lo: int, hi: int) -> Sequence[int]:
        """The block hashes of ``[lo, hi)`` (chains with one unit per block)."""
        return self.units[lo - self.base : min(hi, self.known) - self.base]

    def split(self, depth: int) -> _Run:
        """Cut at ``depth``: this run keeps the deeper part; the upper part, returned, is new."""
        head = _Run.__new__(_Run)
        head.per_unit, head.known, head.tag, head.space = (
            self.per_unit,
            self.known,
            self.tag,
            self.space,
        )
        head.base, head.parent, head.lo, head.hi = self.base, self.parent, self.lo, depth
        head.stamp, head.copied = self.stamp, self.copied
        size = self.per_unit
        head.units = self.units[: -(-min(depth, self.known) // size) - self.base]
        self.parent.children[self.key(self.lo)] = head
        cut = depth // size - self.base
        self.units, self.base, self.lo, self.parent = self.units[cut:], depth // size, depth, head
        head.children = {self.key(depth): self}
        return head


def cached_end(runs: list[_Run], seen: int) -> int:
    """Where the cached blocks along ``runs`` end: the first evicted run, else ``seen``."""
    for run in runs:
        if not run.stamp:
            return run.lo
    return seen


def path_to(run: _Run, end: int) -> list[_Run]:
    """The runs from the root down to ``run`` that start above depth ``end``. Splitting
    keeps a run's object for its deeper part, so ``run`` still ends the path it ended."""
    path = []
    while run.parent is not None:
        if run.lo < end:
            path.append(run)
        run = run.parent
    path.reverse()
    return path


def shared_end(chain: Chain, run: _Run, depth: int) -> int:
    """How far from ``depth`` (a block both share) ``chain`` follows ``run``."""
    end = min(run.hi, chain.known, run.known)
    size = chain.per_unit
    first, last = depth // size, -(-end // size)
    mine = chain.units[first:last]
    theirs = run.units[first - run.base : last - run.base]
    if mine == theirs:
        return end
    return min((first + common_prefix_length(mine, theirs)) * size, end)


class _Segment:
    __slots__ = ("copies", "run", "stamp", "top")

    def __init__(self, stamp: int, run: _Run, top: int) -> None:
        self.stamp = stamp
        self.run: _Run | None = run  # holds, or lies below, its deepest queued block
        self.top = top  # its queued blocks lie below this depth
        self.copies: set[int] | None = None  # depths of its queued copies, once it has any


class RunPool:
    """Blocks seen as runs, cached or evicted; with ``capacity`` (in blocks), vLLM's LRU
    free queue.

    ``on_evict(hash)`` is called when the last copy of a block leaves the pool, for
    chains of one unit per block (the unit is then the block hash); ``hash in pool`` says
    whether such a block is cached: a set lookup in a pool with ``on_evict`` (which keeps
    that set, as a caller mapping hashes to slots needs both), else a scan of the runs.
    """

    def __init__(
        self, capacity: int | None = None, on_evict: Callable[[int], None] | None = None
    ) -> None:
        self.capacity = capacity
        self.on_evict = on_evict
        self._roots: dict[Hashable, _Run] = {}
        self._queue: deque[_Segment] = deque()
        self._queued = 0  # blocks in the free queue, copies included
        # (tree, block key) -> segments holding a copy, oldest first
        self._copies: dict[tuple[Hashable, Hashable], list[_Segment]] = {}
        self._resident: set[int] = set()
        self._stamps = itertools.count(1)

    def __contains__(self, block_hash: int) -> bool:
        if self.on_evict is not None:
            return block_hash in self._resident
        return any(block_hash in run.hashes(run.lo, run.hi) for run in self._runs() if run.stamp)

    def _runs(self) -> list[_Run]:
        """Every run of one-unit-per-block chains."""
        runs, stack = [], [self._roots[1]] if 1 in self._roots else []
        while stack:
            run = stack.pop()
            runs.append(run)
            stack.extend(run.children.values())
        return runs

    def admit(self, chain: Chain, lookup: int, held: int) -> tuple[int, int]:
        """Run one request: hit its cached leading blocks (at most ``lookup``), make room
        for the ``held`` blocks it takes, cache its full blocks and free them all. Returns
        the hit and what an infinite cache would have hit, in blocks."""
        stamp = next(self._stamps)
        runs, seen = self._descend(chain)
        hit = min(cached_end(runs, seen), lookup)
        runs = self._take(runs, hit, stamp)
        bounded = self.capacity is not None
        if bounded:
            self._queued -= hit
            excess = held - self.capacity + self._queued
            if excess > 0:
                self._evict(excess)  # it may split runs along the chain: find them again
                runs = path_to(runs[-1], seen) if runs else runs
        cached = cached_end(runs, seen)
        runs, last = self._insert(chain, runs, cached, seen, stamp)
        if bounded:
            segment = _Segment(stamp, last, chain.length)
            if cached > hit:
                self._add_copies(segment, chain, runs, hit, cached)
            self._queued += chain.length
            self._queue.append(segment)
        return hit, min(seen, lookup)

    def _root(self, chain: Chain) -> _Run:
        root = self._roots.get(chain.space)
        if root is None:
            empty = Chain((), chain.per_unit, 0, 0, chain.space)
            root = self._roots[chain.space] = _Run(empty, 0, 0, None, 0)
        return root

    def _descend(self, chain: Chain) -> tuple[list[_Run], int]:
        """The runs along ``chain`` (the last one possibly in part), cached or evicted, and
        the blocks matched."""
        runs: list[_Run] = []
        node = self._root(chain)
        depth = 0
        while depth < chain.known:
            child = node.children.get(chain.key(depth))
            if child is None:
                break
            runs.append(child)
            depth = shared_end(chain, child, depth)
            if depth < child.hi:
                break
            node = child
        return runs, depth

    @staticmethod
    def _cut(runs: list[_Run], depth: int) -> list[_Run]:
        """``runs`` with the one across ``depth`` split there."""
        for index, run in enumerate(runs):
            if run.lo < depth < run.hi:
                return [*runs[:index], run.split(depth), *runs[index:]]
        return runs

    def _take(self, runs: list[_Run], hit: int, stamp: int) -> list[_Run]:
        """Take the first ``hit`` blocks off the free queue: restamp their runs."""
        runs = self._cut(runs, hit)
        for run in runs:
            if run.lo >= hit:
                break
            run.stamp = stamp
        return runs

    def _insert(
        self, chain: Chain, runs: list[_Run], cached: int, seen: int, stamp: int
    ) -> tuple[list[_Run], _Run]:
        """Cache the blocks after ``cached``: the evicted runs up to ``seen`` again, the rest
        as a new run. Returns the runs and the run of the chain's last block."""
        runs = self._cut(runs, seen)
        above = [run for run in runs if run.lo < seen]
        for run in above:
            if run.lo >= cached:
                run.stamp = stamp
        tracked = self.on_evict is not None and chain.space == 1
        if tracked and seen > cached:
            self._resident.update(chain.units[cached:seen])
        parent = above[-1] if above else self._root(chain)
        if seen >= chain.length:
            return runs, parent
        leaf = _Run(chain, seen, chain.length, parent, stamp)
        parent.children[chain.key(seen)] = leaf
        if tracked:
            self._resident.update(leaf.hashes(seen, chain.length))
        return runs, leaf

    def _add_copies(
        self, segment: _Segment, chain: Chain, runs: list[_Run], lo: int, hi: int
    ) -> None:
        """The request computed the cached blocks ``[lo, hi)`` again: queue its copies."""
        for run in runs:
            if run.hi > lo and run.lo < hi:
                run.copied = True
        for depth in range(lo, hi):
            self._copies.setdefault((chain.space, chain.key(depth)), []).append(segment)
        segment.copies = set(range(lo, hi))

    def _evict(self, count: int) -> None:
        """Evict ``count`` blocks from the head of the free queue."""
        while count > 0:
            segment = self._queue[0]
            count -= self._drain(segment, count)
            if segment.run is None:
                self._queue.popleft()

    def _drain(self, segment: _Segment, count: int) -> int:
        """Evict up to ``count`` of ``segment``'s blocks, deepest first; return how many.
        ``segment.run`` becomes ``None`` once it has none left."""
        run, top, evicted, stamp = segment.run, segment.top, 0, segment.stamp
        while run.parent is not None and evicted < count:
            end = run.hi if run.hi < top else top  # (min() costs a call)
            if run.stamp == stamp and end > run.lo:
                if run.copied:
                    done, top, run = self._drain_copied(run, end, count - evicted)
                    evicted += done
                    continue
                cut = end - count + evicted
                self._remove(run, cut if cut > run.lo else run.lo)
                evicted, top = evicted + end - run.lo, run.lo
            elif segment.copies and end > run.lo:
                done, top = self._drop_copies(segment, run, end, count - evicted)
                evicted += done
            else:
                top = run.lo
            if top <= run.lo:
                run = run.parent
        segment.run, segment.top = (run if run.parent is not None else None), top
        self._queued -= evicted
        return evicted

    def _remove(self, run: _Run, depth: int) -> None:
        """Evict the blocks of ``run`` from ``depth`` on (its deepest blocks, no copies):
        they become a run of their own, marked evicted, below the rest (``run.parent``)."""
        if self.on_evict is not None and run.space == 1:
            hashes = run.hashes(depth, run.hi)
            self._resident.difference_update(hashes)
            for block_hash in reversed(hashes):
                self.on_evict(block_hash)
        if depth > run.lo:
            run.split(depth)
        run.stamp = 0

    def _drain_copied(self, run: _Run, end: int, count: int) -> tuple[int, int, _Run]:
        """Evict the top blocks of a run that may have copies: a block with a queued copy
        stays, now in the segment of its oldest copy. Returns the blocks evicted, the new
        top and the run to go on from."""
        lo, depth, done = run.lo, end, 0
        while depth > lo and done < count:
            depth -= 1
            done += 1
            key = (run.space, run.key(depth))
            later = self._copies.get(key)
            if not later:
                self._remove(run, depth)
                run = run.parent
                continue
            heir = later.pop(0)
            if not later:
                del self._copies[key]
            heir.copies.discard(depth)
            if depth > lo:
                run.split(depth)
            run.stamp = heir.stamp
            run = run.parent
        return done, depth, run

    def _drop_copies(self, segment: _Segment, run: _Run, end: int, count: int) -> tuple[int, int]:
        """Evict ``segment``'s copies of blocks of ``run`` below ``end``, deepest first."""
        depths = sorted((d for d in segment.copies if run.lo <= d < end), reverse=True)
        for depth in depths[:count]:
            segment.copies.discard(depth)
            key = (run.space, run.key(depth))
            self._copies[key].remove(segment)
            if not self._copies[key]:
                del self._copies[key]
        if len(depths) > count:
            return count, depths[count - 1]
        return len(depths), run.lo
