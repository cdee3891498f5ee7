"""A radix tree of token runs with LRU leaf eviction and optional idle expiry.

The data structure of SGLang's ``RadixCache``
(``python/sglang/srt/mem_cache/radix_cache.py``, SGLang 0.5): edges are runs of units,
children are keyed by their first unit, a partial match splits the child, every node on a
matched or inserted path is touched, and eviction removes whole leaves, least recently
touched first. The SGLang, unlimited, OpenAI (before GPT-5.6), Gemini and DeepSeek models
build on it.

Keys are ``bytes`` of fixed-width units (8 bytes per token id or block id; ``8 * page_size``
bytes for a page). How many tokens the first ``k`` units of a key hold is a function the
caller passes (``weights``), so a node knows its size in tokens even when units are trace
blocks with a partial last one. ``marks`` record unit depths where a provider persisted a
reusable prefix (DeepSeek's "cache prefix units").
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from prefixlint.cache.base import CacheQuery, InvalidQuery, stable_int, unit_bytes
from prefixlint.sequences import common_prefix_length

Weights = Callable[[int], int]


class _Node:
    __slots__ = (
        "alive",
        "children",
        "depth",
        "key",
        "marks",
        "parent",
        "serial",
        "tick",
        "tokens",
        "touched_at",
    )

    def __init__(self, key: bytes, depth: int, parent: _Node | None, serial: int) -> None:
        self.key = key
        self.depth = depth  # unit depth at the end of this node
        self.parent = parent
        self.children: dict[bytes, _Node] = {}
        self.tokens = 0
        self.tick = 0
        self.touched_at: float | None = None
        self.marks: set[int] = set()
        self.serial = serial
        self.alive = True


@dataclass(frozen=True)
class Match:
    """A lookup's outcome: matched units, the deepest mark within them, the last node."""

    units: int
    best_mark: int
    node: _Node
    expired: bool


class RadixTree:
    """Runs of fixed-width units; see the module docstring."""

    def __init__(self, width: int) -> None:
        self.width = width
        self.reset()

    def reset(self) -> None:
        self._serials = itertools.count()
        self.root = _Node(b"", 0, None, next(self._serials))
        self.tokens = 0
        self._clock = 0
        self._heap: list[tuple[int, int, _Node]] = []
        self._nodes = 1

    def match(
        self,
        key: bytes,
        weights: Weights,
        now: float | None = None,
        ttl: float | None = None,
        end: int | None = None,
    ) -> Match:
        """Walk ``key[:end]`` from the root, touching and splitting like SGLang's
        ``match_prefix`` (``end`` is a byte offset at a unit boundary; the slice is not made).

        With ``now`` and ``ttl``, a child idle for longer than ``ttl`` is removed with its
        subtree and ends the match (``expired``).
        """
        tick = self._next_tick()
        node, units, best, expired = self.root, 0, 0, False
        width, offset = self.width, 0
        end = len(key) if end is None else end
        while offset < end:
            child = node.children.get(key[offset : offset + width])
            if child is None:
                break
            if ttl is not None and self._expired(child, now, ttl):
                self._remove_subtree(child)
                expired = True
                break
            self._touch(child, tick, now)
            partial = not key.startswith(child.key, offset, end)
            if partial:
                common = self._common_units(child.key, key, offset, end)
                child = self._split(child, common, units, weights)
                self._touch(child, tick, now)
            units, offset, node = child.depth, child.depth * width, child
            if child.marks:
                best = max(best, *child.marks)
            if partial:
                break
        return Match(units, best, node, expired)

    def insert(self, key: bytes, weights: Weights, now: float | None = None) -> _Node:
        """Add ``key``: touch the shared path, split where it diverges, hang the rest as a leaf."""
        return self._insert(key, weights, now)[0]

    def _insert(self, key: bytes, weights: Weights, now: float | None) -> tuple[_Node, int]:
        """:meth:`insert`, also giving the units of ``key`` the tree held before."""
        tick = self._next_tick()
        node, units, offset, width = self.root, 0, 0, self.width
        while offset < len(key):
            child = node.children.get(key[offset : offset + width])
            if child is None:
                break
            self._touch(child, tick, now)
            if not key.startswith(child.key, offset):
                common = self._common_units(child.key, key, offset, len(key))
                child = self._split(child, common, units, weights)
                self._touch(child, tick, now)
            units, offset, node = child.depth, child.depth * width, child
        total, held = len(key) // width, units
        if units < total:
            leaf = _Node(key[offset:], total, node, next(self._serials))
            leaf.tokens = weights(total) - weights(units)
            node.children[key[offset : offset + width]] = leaf
            self.tokens += leaf.tokens
            self._nodes += 1
            self._touch(leaf, tick, now)
            node = leaf
        return node, held

    def add_marks(self, key: bytes, depths: set[int]) -> None:
        """Record unit ``depths`` (each within ``key``'s existing path) as persisted prefixes."""
        pending = sorted(depths, reverse=True)  # the shallowest last
        node, offset, width = self.root, 0, self.width
        while pending and offset < len(key):
            node = node.children[key[offset : offset + width]]
            offset = node.depth * width
            while pending and pending[-1] <= node.depth:
                node.marks.add(pending.pop())

    def evict(self, tokens: int, protect: _Node | None = None) -> int:
        """Remove least recently touched leaves until ``tokens`` are freed; never ``protect``.

        Returns the tokens freed (whole leaves, so possibly more than asked).
        """
        freed = 0
        skipped = []
        while freed < tokens and self._heap:
            entry = heapq.heappop(self._heap)
            node = entry[2]
            if not node.alive or node.children or node.tick != entry[0]:
                continue
            if node is protect:
                skipped.append(entry)
                continue
            freed += self._remove_subtree(node)
        for entry in skipped:
            heapq.heappush(self._heap, entry)
        return freed

    def _next_tick(self) -> int:
        self._clock += 1
        if len(self._heap) > 2 * self._nodes + 1024:
            self._heap = [
                (node.tick, node.serial, node) for node in self._leaves() if node is not self.root
            ]
            heapq.heapify(self._heap)
        return self._clock

    def _leaves(self) -> list[_Node]:
        leaves, stack = [], [self.root]
        while stack:
            node = stack.pop()
            if node.children:
                stack.extend(node.children.values())
            else:
                leaves.append(node)
        return leaves

    def _touch(self, node: _Node, tick: int, now: float | None) -> None:
        node.tick = tick
        if now is not None:
            node.touched_at = now
        if not node.children:
            heapq.heappush(self._heap, (tick, node.serial, node))

    @staticmethod
    def _expired(node: _Node, now: float | None, ttl: float | None) -> bool:
        return (
            ttl is not None
            and now is not None
            and node.touched_at is not None
            and now - node.touched_at > ttl
        )

    def _common_units(self, edge: bytes, key: bytes, offset: int, end: int) -> int:
        """Whole units that ``edge`` shares with ``key[offset:end]``."""
        return common_prefix_length(edge, key[offset : min(offset + len(edge), end)]) // self.width

    def _split(self, child: _Node, common: int, start: int, weights: Weights) -> _Node:
        """Cut ``child`` after ``common`` units; return the new upper node."""
        cut = common * self.width
        parent = child.parent
        assert parent is not None, "the root is never split"
        head = _Node(child.key[:cut], start + common, parent, next(self._serials))
        head.tokens = weights(start + common) - weights(start)
        head.tick, head.touched_at = child.tick, child.touched_at
        head.marks = {depth for depth in child.marks if depth <= head.depth}
        child.marks -= head.marks
        parent.children[child.key[: self.width]] = head
        child.key = child.key[cut:]
        child.tokens -= head.tokens
        child.parent = head
        head.children[child.key[: self.width]] = child
        self._nodes += 1
        return head

    def _remove_subtree(self, node: _Node) -> int:
        parent = node.parent
        assert parent is not None, "the root is never removed"
        del parent.children[node.key[: self.width]]
        freed, stack = 0, [node]
        while stack:
            current = stack.pop()
            current.alive = False
            freed += current.tokens
            self._nodes -= 1
            stack.extend(current.children.values())
        self.tokens -= freed
        if parent is not self.root and not parent.children:
            heapq.heappush(self._heap, (parent.tick, parent.serial, parent))
        return freed


class SeenTree(RadixTree):
    """A radix tree that never evicts or expires (what an infinite cache holds): it keeps no
    recency, so matching and inserting touch nothing."""

    def _touch(self, node: _Node, tick: int, now: float | None) -> None:
        pass

    def add(self, key: bytes, weights: Weights, end: int) -> int:
        """Insert ``key``; the units of ``key[:end]`` (``end`` a byte offset at a unit
        boundary) the tree held before: what :meth:`match` would give, in the same walk."""
        return min(self._insert(key, weights, None)[1], end // self.width)


@dataclass(frozen=True)
class QueryKeys:
    """A query as a radix-tree key: ``full`` is inserted, a lookup walks ``full[:lookup_end]``
    (pass ``end=lookup_end`` to :meth:`RadixTree.match`)."""

    full: bytes
    lookup_end: int
    weights: Weights
    width: int
    lead: int  # leading namespace units (no tokens)

    @property
    def lookup_units(self) -> int:
        return self.lookup_end // self.width


def query_keys(
    query: CacheQuery,
    namespace: str | None,
    page_size: int = 1,
    limit: int | None = None,
    unknown_output: int | None = None,
    output: str = "computed",
) -> QueryKeys:
    """Build the keys of ``query`` in units of ``page_size`` tokens (or of trace blocks).

    ``limit`` caps the tokens a lookup walks (engines pass ``prompt - 1``); with trace blocks
    the lookup covers every block that starts below it and the caller caps the hit.
    Known output ids extend the inserted key: ``output="computed"`` (engines) keeps all but
    the last, whose KV is never computed, ``"all"`` keeps them all, ``"none"`` inserts the
    prompt alone. With ``"computed"``, an output known only by its count becomes one
    unmatchable unit numbered ``unknown_output`` (pass ``None`` to leave it out).
    ``namespace`` (the query's key that the cache reads: an engine's ``cache_salt``, OpenAI's
    ``prompt_cache_key``, or ``None``) and ``extra_keys`` become a leading zero-token unit, so
    different namespaces share nothing, as SGLang's ``(extra_key, cache_salt)`` child keys.
    """
    prompt = query.prompt_tokens
    limit = prompt if limit is None else limit
    if query.tokens is not None:
        width, unit_tokens = 8 * page_size, page_size
        data = query.token_bytes
        kept = {"computed": -1, "all": None, "none": 0}[output]
        if query.output_ids and output != "none":
            data += unit_bytes(query.output_ids[:kept])  # a copy, for logged output ids only
        length = len(data) // 8
        units = length // page_size
        lookup_units = min(limit, length) // page_size
        last_tokens = units * page_size
    else:
        ids, unit_tokens = query.trace_blocks
        if unit_tokens % page_size:
            raise InvalidQuery(
                f"page size {page_size} does not divide the trace block size {unit_tokens}"
            )
        width = 8
        data = unit_bytes(ids)
        units = len(ids)
        lookup_units = -(-limit // unit_tokens)
        last_tokens = prompt // page_size * page_size
    lead_unit = _namespace_unit(namespace, tuple(query.extra_keys), width)
    lead = len(lead_unit) // width
    content_units = units + lead

    extra_tokens = 0
    parts = [lead_unit, data if len(data) == units * width else data[: units * width]]
    unknown = output == "computed" and query.output_ids is None
    if unknown and unknown_output is not None and query.output_count > 1:
        kept = prompt + query.output_count - 1
        extra_tokens = kept // page_size * page_size - last_tokens
        if extra_tokens > 0:
            parts.append(unit_bytes([-(2**62) - unknown_output] * (width // 8)))
    full = b"".join(part for part in parts if part)  # one part: no copy

    def weights(count: int) -> int:
        tokens = min(max(min(count, content_units) - lead, 0) * unit_tokens, last_tokens)
        return tokens + (extra_tokens if count > content_units else 0)

    return QueryKeys(full, (lead + lookup_units) * width, weights, width, lead)


@functools.lru_cache(maxsize=256)
def _namespace_unit(namespace: str | None, extra_keys: tuple[Hashable, ...], width: int) -> bytes:
    """The leading unit of keys in the namespace of ``namespace`` and ``extra_keys``."""
    if not (namespace or extra_keys):
        return b""
    marker = stable_int((namespace, extra_keys)) % 2**61
    return unit_bytes([-1 - marker] * (width // 8))
