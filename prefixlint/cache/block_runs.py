"""vLLM's block pool for sequential replay, kept as runs of consecutive blocks.

What :mod:`prefixlint.cache.vllm` describes block by block (a table of cached block hashes,
an LRU free queue, later copies of a recomputed hash) is held here per run: a tree whose
nodes are runs of blocks along a request's chain, split only where a hit ends, where
requests diverge, or where eviction or a recomputed copy cuts a run; a request that hits a
leaf run to its end extends it with its new blocks. The work of a request follows the runs
it touches, not its blocks. Evicted runs stay in the tree, marked so:
the same walk gives what is cached and what an infinite cache would hold.

A request's blocks are named by units (:class:`Chain`): block ``d`` is unit
``d // per_unit`` at offset ``d % per_unit`` (one unit per block for token prompts, one per
trace block when it holds several vLLM blocks); blocks from ``known`` on (output known
only by its count) match nothing. A chain's ``space`` names the tree it joins: chains
whose units are chained block hashes (which name their whole prefix) share the tree of
their ``per_unit``; units that name a prefix only under their parents (trace ids, whose
namespace the space carries) get a tree of their own. Only the tree's path is compared, so
both give the same blocks, and a copy is named by its space and key.

A token chain may leave its blocks after the ones it has hashed pending
(:mod:`prefixlint.cache.pending_blocks`): its hashes are worked out only as far as the walk
down the tree reads them. A run made from such a chain keeps the blocks it has not hashed
pending too; a later chain that walks into them takes its own hashes for the blocks with
the same tokens (or hashes them, if it too left them pending), so a block is hashed only
when some request shares the prefix that ends with it, or when eviction or ``in`` asks.
Block counts, and so the free queue and eviction, never wait for a hash.

The free queue is a doubly linked list of runs (and copies), oldest first. Between
requests every cached block is free; a request frees its blocks tail first, so a run's
blocks leave the queue deepest first. A hit unlinks the runs it takes (O(1) each) and the
request, when it ends, appends its runs deepest first; eviction takes blocks from the
head run's cached end (a run is cached up to ``end`` and evicted below it, so eviction
splits nothing). Nothing stale is left in the queue, so nothing is scanned.

A block computed again while its hash is cached (the hit stops short of it: the last prompt
token is always recomputed) is cached a second time, as in vLLM: a *copy*, queued with its
request's blocks but outside the tree. A hit uses the oldest copy (the tree's block);
when that one is evicted the next oldest takes its place in the tree and, the tree's block
now being that copy, in the queue. Copies are rare and handled block by block.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Hashable, Sequence
from typing import cast

from prefixlint.cache.pending_blocks import PendingBlocks
from prefixlint.sequences import common_prefix_length


class Chain:
    """A request's full blocks, named by units; see the module docstring."""

    __slots__ = ("known", "length", "pending", "per_unit", "space", "tag", "units")

    def __init__(
        self,
        units: Sequence[int],
        per_unit: int,
        known: int,
        length: int,
        space: Hashable = None,
        pending: PendingBlocks | None = None,
    ) -> None:
        self.units = units  # with ``pending``, a list of the hashes of its first blocks
        self.pending = pending  # all its blocks, from the first, those past ``units`` unhashed
        self.per_unit = per_unit
        self.space = per_unit if space is None else space  # the tree it belongs to
        self.known = known  # leading blocks with known content
        self.length = length  # full blocks the request fills
        # names its blocks of unknown content, if it has any
        self.tag = object() if length > known else None

    def key(self, depth: int) -> Hashable:
        """What names block ``depth``: equal keys, equal blocks (under a common prefix)."""
        if depth >= self.known:
            return (self.tag, depth)
        size = self.per_unit
        if size == 1:
            self.hash_to(depth + 1)
            return self.units[depth]
        return self.units[depth // size] * size + depth % size  # (unit, offset), packed

    def hash_to(self, stop: int) -> None:
        """Hash the chain's pending blocks before ``stop``."""
        pending = self.pending
        if pending is not None and pending.done < stop:
            pending.hash_into(cast(list[int], self.units), stop)

    def pending_part(self, hi: int) -> PendingBlocks | None:
        """The blocks after the hashed ones, up to ``hi``, for a run to keep, if any."""
        pending, done = self.pending, len(self.units)
        return None if pending is None or done >= hi else pending.part(done, hi)


class _Entry:
    """A place in the free queue: a run of cached blocks, a copy of one, or the queue's ends.
    Out of the queue it is linked to itself."""

    __slots__ = ("next", "prev")

    def __init__(self) -> None:
        self.prev: _Entry = self
        self.next: _Entry = self


class _Copy(_Entry):
    __slots__ = ("key",)

    def __init__(self, key: tuple[Hashable, Hashable]) -> None:
        super().__init__()
        self.key = key  # (tree, block key) of the block it copies


class _Run(_Entry):
    __slots__ = (
        "base",
        "children",
        "copied",
        "end",
        "hi",
        "known",
        "lo",
        "parent",
        "pending",
        "per_unit",
        "space",
        "tag",
        "units",
    )

    def __init__(self, chain: Chain, lo: int, hi: int, parent: _Run | None) -> None:
        self.prev = self.next = self
        size, known = chain.per_unit, chain.known
        self.per_unit, self.known, self.tag = size, known, chain.tag
        self.space: Hashable = chain.space if parent is None else parent.space  # one per tree
        self.base = lo // size
        stop = hi if hi < known else known
        if lo < stop:
            chain.hash_to(lo + 1)  # its key, if the chain left it pending
        self.units = chain.units[self.base : -(-stop // size)]
        # the blocks after its hashed ones ``units``, unhashed, if any (token chains)
        self.pending = chain.pending_part(stop)
        self.lo, self.hi, self.parent = lo, hi, parent
        self.children: dict[Hashable, _Run] = {}
        self.end = hi  # [lo, end) cached, [end, hi) evicted (kept for an infinite cache)
        self.copied = False  # a block of it may have copies queued

    def key(self, depth: int) -> Hashable:
        """The key of block ``depth``, as :meth:`Chain.key` gives it."""
        if depth >= self.known:
            return (self.tag, depth)
        size = self.per_unit
        if size == 1:
            self.hash_to(depth + 1)
            return self.units[depth - self.base]
        return self.units[depth // size - self.base] * size + depth % size

    def hash_to(self, stop: int) -> None:
        """Hash the run's pending blocks before ``stop``."""
        pending = self.pending
        if pending is not None and pending.done < stop:
            pending.hash_into(cast(list[int], self.units), stop)
            if pending.done >= pending.end:
                self.pending = None

    def adopt(self, chain: Chain, stop: int) -> int:
        """Take ``chain``'s hashes for the pending blocks, from the first, that have its
        tokens, up to ``stop``; ``chain`` follows this run up to them. Returns where the
        run's hashed blocks now end."""
        pending = self.pending
        assert pending is not None and chain.pending is not None
        done = pending.done
        same = done + pending.same_content(chain.pending, done, stop)
        chain.hash_to(same)
        cast(list[int], self.units).extend(chain.units[done:same])
        pending.done = same
        if same >= pending.end:
            self.pending = None
        return same

    def extend(self, chain: Chain) -> None:
        """Take on the blocks of ``chain`` past this run, which it follows to the end."""
        size, known, length = chain.per_unit, chain.known, chain.length
        self.known, self.tag = known, chain.tag
        stop = length if length < known else known
        self.units = chain.units[self.base : -(-stop // size)]
        self.pending = chain.pending_part(stop)
        self.hi = self.end = length

    def hashes(self, lo: int, hi: int) -> Sequence[int]:
        """The block hashes of ``[lo, hi)`` (chains with one unit per block)."""
        self.hash_to(min(hi, self.known))
        return self.units[lo - self.base : min(hi, self.known) - self.base]

    def split(self, depth: int) -> _Run:
        """Cut at ``depth``: this run keeps the deeper part; the upper part, returned, is new.
        A queued run's upper part is queued right after it (a run frees its deepest first);
        the deeper part leaves the queue if it has no cached block."""
        self.hash_to(min(depth + 1, self.known))
        head = _Run.__new__(_Run)
        head.pending = None
        head.per_unit, head.known, head.tag, head.space = (
            self.per_unit,
            self.known,
            self.tag,
            self.space,
        )
        parent = self.parent
        assert parent is not None, "the root is never split"
        head.base, head.parent, head.lo, head.hi = self.base, parent, self.lo, depth
        end = self.end
        head.end, head.copied = (end if end < depth else depth), self.copied
        size = self.per_unit
        head.units = self.units[: -(-min(depth, self.known) // size) - self.base]
        parent.children[self.key(self.lo)] = head
        cut = depth // size - self.base
        self.units, self.base, self.lo, self.parent = self.units[cut:], depth // size, depth, head
        head.children = {self.key(depth): self}
        if end <= depth:
            self.end = depth
        after = self.next
        if after is self:
            head.prev = head.next = head
            return head
        head.prev, head.next, after.prev, self.next = self, after, head, head
        if end <= depth:
            _unlink(self)
        return head


def cached_end(runs: list[_Run], seen: int) -> int:
    """Where the cached blocks along ``runs`` (matched up to ``seen``) end."""
    for run in runs:
        if run.end < run.hi:
            return run.end if run.end < seen else seen
    return seen


def _followed(chain: Chain, run: _Run, depth: int, end: int) -> int:
    """How far, up to ``end``, a chain of one unit per block follows ``run`` from ``depth``
    (a block both share), with the hashes of both worked out that far and no further than
    needed: the run's hashed blocks are compared with the chain's, hashed as it goes; its
    pending blocks take the chain's hashes where their tokens agree (or are hashed, when
    the chain has no tokens to compare)."""
    hashed = run.base + len(run.units)
    if hashed > end:
        hashed = end
    depth = _agreeing(chain, run, depth, hashed)
    if depth < hashed or depth == end:
        return depth
    if chain.pending is not None:
        return run.adopt(chain, end)
    run.hash_to(end)
    return _agreeing(chain, run, depth, end)


def _agreeing(chain: Chain, run: _Run, depth: int, end: int) -> int:
    """Where, up to ``end``, the chain's hashes stop agreeing with the run's (hashed up to
    ``end``) from ``depth``; the chain's pending blocks are hashed one, then twice as many
    at a time, so that a chain that leaves the run soon hashes little past it."""
    units, theirs, base = chain.units, run.units, run.base
    step = 1
    while depth < end:
        stop = len(units)
        if stop <= depth:
            stop = depth + step
            step *= 2
        if stop > end:
            stop = end
        chain.hash_to(stop)
        mine = units[depth:stop]
        other = theirs[depth - base : stop - base]
        if mine != other:
            return depth + common_prefix_length(mine, other)
        depth = stop
    return depth


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


def _unlink(entry: _Entry) -> None:
    before, after = entry.prev, entry.next
    before.next, after.prev = after, before
    entry.prev = entry.next = entry


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
        self._ends = _Entry()  # the queue is circular through it: next is the head
        self._queued = 0  # blocks in the free queue, copies included
        # (tree, block key) -> its queued copies, oldest first
        self._copies: dict[tuple[Hashable, Hashable], deque[_Copy]] = {}
        self._resident: set[int] = set()

    def __contains__(self, block_hash: int) -> bool:
        if self.on_evict is not None:
            return block_hash in self._resident
        return any(block_hash in run.hashes(run.lo, run.end) for run in self._runs())

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
        runs, seen, cached = self._descend(chain)
        hit = cached if cached < lookup else lookup
        capacity = self.capacity
        if capacity is not None:
            self._take(runs, hit)
            excess = held - capacity + self._queued
            if excess > 0:
                split = self._evict(excess)
                if cached > hit:  # blocks along the chain were queued: some may be gone
                    if split:
                        runs = path_to(runs[-1], seen)
                    cached = cached_end(runs, seen)
        runs, leaf = self._insert(chain, runs, hit, cached, seen)
        if capacity is not None:
            self._free(chain, runs, leaf, hit, cached)
        return hit, seen if seen < lookup else lookup

    def _new_root(self, chain: Chain) -> _Run:
        """The root of the tree ``chain`` joins, the first time one joins it."""
        empty = Chain((), chain.per_unit, 0, 0, chain.space)
        root = self._roots[chain.space] = _Run(empty, 0, 0, None)
        return root

    def _descend(self, chain: Chain) -> tuple[list[_Run], int, int]:
        """The runs along ``chain`` (the last one possibly in part), cached or evicted, the
        blocks matched and where the cached ones among them end."""
        runs: list[_Run] = []
        node = self._roots.get(chain.space) or self._new_root(chain)
        depth, evicted = 0, -1
        units, size, known = chain.units, chain.per_unit, chain.known
        lazy = chain.pending is not None
        while depth < known:
            if lazy and depth >= len(units):
                chain.hash_to(depth + 1)
            key = units[depth] if size == 1 else units[depth // size] * size + depth % size
            child = node.children.get(key)  # (what chain.key(depth) gives, without a call)
            if child is None:
                break
            runs.append(child)
            hi = child.hi
            if evicted < 0 and child.end < hi:
                evicted = child.end
            # how far from ``depth`` (a block both share) the chain follows the child
            end = hi if hi < child.known else child.known  # (min() costs a call)
            if known < end:
                end = known
            if child.pending is not None or (lazy and len(units) < end):  # (token chains)
                end = _followed(chain, child, depth, end)
            else:
                if size == 1:  # the units of blocks [depth, end)
                    first, last = depth, end
                else:
                    first, last = depth // size, -(-end // size)
                if last > first + 1:  # past the unit whose key matched
                    mine = units[first:last]
                    base = child.base
                    theirs = child.units[first - base : last - base]
                    if mine != theirs:
                        shared = (first + common_prefix_length(mine, theirs)) * size
                        if shared < end:
                            end = shared
            depth = end
            if depth < hi:
                break
            node = child
        return runs, depth, depth if evicted < 0 or evicted > depth else evicted

    def _take(self, runs: list[_Run], hit: int) -> None:
        """Take the hit blocks off the free queue while the request runs, splitting the
        run across ``hit`` (in ``runs`` too)."""
        for run in runs:
            if run.lo >= hit:
                break
            if run.hi > hit:  # the upper part is taken; the deeper part, next, ends the loop
                deeper, run = run, run.split(hit)
                runs.insert(runs.index(deeper), run)
            before, after = run.prev, run.next  # (unlinked without a call)
            before.next, after.prev = after, before
            run.prev = run.next = run
        self._queued -= hit

    @staticmethod
    def _cut(runs: list[_Run], depth: int) -> list[_Run]:
        """``runs`` with the one across ``depth`` split there."""
        for index, run in enumerate(runs):
            if run.lo < depth < run.hi:
                return [*runs[:index], run.split(depth), *runs[index:]]
        return runs

    def _insert(
        self, chain: Chain, runs: list[_Run], hit: int, cached: int, seen: int
    ) -> tuple[list[_Run], _Run | None]:
        """Cache the blocks after ``cached``: the evicted ones up to ``seen`` again, the rest
        as a new run, or as more of the last run when the chain hit all of it and nothing
        hangs below it (its blocks and the new ones are freed together, deepest first).
        Returns the chain's runs up to ``seen`` and the new run, if any."""
        if runs and runs[-1].hi > seen:  # the last run is matched in part, or not at all
            if runs[-1].lo < seen:
                runs[-1] = runs[-1].split(seen)
            else:
                runs.pop()  # the part after a hit that ends where the match does
        tracked = self.on_evict is not None and chain.space == 1
        if cached < seen:
            runs = self._cut(runs, cached)
            for run in reversed(runs):
                if run.lo < cached:
                    break
                run.end = run.hi
            if tracked:
                self._resident.update(chain.units[cached:seen])
        if seen >= chain.length:
            return runs, None
        parent = runs[-1] if runs else self._roots[chain.space]  # (made by _descend)
        if runs and hit == parent.hi and not parent.children and not parent.copied:
            parent.extend(chain)
            if tracked:
                self._resident.update(parent.hashes(seen, chain.length))
            return runs, None
        leaf = _Run(chain, seen, chain.length, parent)
        parent.children[chain.key(seen)] = leaf
        if tracked:
            self._resident.update(leaf.hashes(seen, chain.length))
        return runs, leaf

    def _free(
        self, chain: Chain, runs: list[_Run], leaf: _Run | None, hit: int, cached: int
    ) -> None:
        """Queue the request's blocks, its deepest first: the new run, the runs it cached
        again, copies of the cached blocks ``[hit, cached)`` it computed again, the hit.
        ``runs`` are cut at ``hit`` and ``cached``, and left reversed. (Cached blocks are a
        prefix of every chain: a block's copies are queued behind a copy or hit of its
        parent, so the parent outlives them.)"""
        ends = self._ends
        tail: _Entry = ends.prev
        if leaf is not None:
            tail.next, leaf.prev = leaf, tail
            tail = leaf
        runs.reverse()  # (no iterator object to make, unlike reversed())
        for run in runs:
            if hit <= run.lo < cached:
                for copy in self._copies_of(chain, run):
                    tail.next, copy.prev = copy, tail
                    tail = copy
                continue
            tail.next, run.prev = run, tail
            tail = run
        tail.next, ends.prev = ends, tail
        self._queued += chain.length

    def _copies_of(self, chain: Chain, run: _Run) -> list[_Copy]:
        """New copies of the cached blocks of ``run``, the deepest first, to be queued."""
        run.copied = True
        copies = [
            _Copy((chain.space, chain.key(depth))) for depth in range(run.hi - 1, run.lo - 1, -1)
        ]
        for copy in copies:
            self._copies.setdefault(copy.key, deque()).append(copy)
        return copies

    def _evict(self, count: int) -> bool:
        """Evict ``count`` blocks from the head of the free queue; say whether runs were split."""
        self._queued -= count
        ends, split = self._ends, False
        tracked = self.on_evict is not None
        while count > 0:
            run = ends.next
            if not isinstance(run, _Run):
                self._drop_copy(cast(_Copy, run))
                count -= 1
                continue
            if run.copied:
                done, cut = self._evict_copied(run, count)
                count -= done
                split = split or cut
                continue
            end = run.end
            lo = run.lo
            if end - lo > count:
                run.end = end - count
                if tracked:
                    self._forget(run, end - count, end)
                break
            after = run.next  # the run, at the head, leaves the queue
            ends.next, after.prev = after, ends
            run.prev = run.next = run
            run.end = lo
            if tracked:
                self._forget(run, lo, end)
            count -= end - lo
        return split

    def _drop_copy(self, copy: _Copy) -> None:
        """Evict the copy at the head of the queue: the oldest of its block's copies, as
        copies never move in the queue."""
        copies = self._copies[copy.key]
        copies.popleft()
        if not copies:
            del self._copies[copy.key]
        _unlink(copy)

    def _forget(self, run: _Run, lo: int, hi: int) -> None:
        """Blocks ``[lo, hi)`` of ``run`` are evicted (a pool with ``on_evict``)."""
        if self.on_evict is not None and run.space == 1:
            hashes = run.hashes(lo, hi)
            self._resident.difference_update(hashes)
            for block_hash in reversed(hashes):
                self.on_evict(block_hash)

    def _evict_copied(self, run: _Run, count: int) -> tuple[int, bool]:
        """Evict up to ``count`` blocks of ``run`` (at the head), deepest first, one at a time:
        a block with a queued copy stays cached and takes its oldest copy's place in the
        queue. Returns how many, and whether runs were split."""
        done, split = 0, False
        while done < count:
            depth = run.end - 1
            key = (run.space, run.key(depth))
            later = self._copies.get(key)
            done += 1
            if not later:
                run.end = depth
                self._forget(run, depth, depth + 1)
                if depth == run.lo:
                    _unlink(run)
                    break
                continue
            heir = later.popleft()
            if not later:
                del self._copies[key]
            upper = run.split(depth) if depth > run.lo else None
            split = split or upper is not None
            _unlink(run)
            before = heir.prev
            run.prev, run.next, before.next, heir.next.prev = before, heir.next, run, run
            heir.prev = heir.next = heir
            if upper is None:
                break
            run = upper
        return done, split
