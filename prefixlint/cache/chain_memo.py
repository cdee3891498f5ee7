"""vLLM block hashes remembered by token prefix, so a request hashes only its new blocks.

Consecutive requests of a conversation repeat everything but the latest turn. The memo is a
tree of runs of whole blocks (packed token ids, as :func:`prefixlint.cache.base.unit_bytes`
packs them) per hashing namespace; each run keeps the chained hashes of its blocks. A
lookup walks the tree with C-speed bytes comparisons, takes the stored hashes of the
longest remembered prefix and remembers the blocks after it. :meth:`ChainHashMemo.hashes`
hashes those at once; :meth:`ChainHashMemo.lazy_hashes` leaves them unhashed, and a run
hashes its blocks when a later lookup first reads them, as far as it reads them (blocks no
later request shares are never hashed here).
The hashes are exactly those of :func:`prefixlint.cache.vllm.chain_hashes`. Once the memo
holds more than ``capacity`` bytes of token ids it forgets everything before the next lookup
and starts again (it only saves work: what it forgets is hashed again).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from struct import Struct

from prefixlint.cache.base import stable_int
from prefixlint.sequences import common_prefix_length

NONE_HASH = stable_int("vllm-none-hash")
CAPACITY = 64 << 20
"""Bytes of packed token ids remembered (8 million tokens)."""


def block_extras(
    extra_keys: Sequence[Hashable], cache_salt: str | None
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The extra keys hashed into every block, and into the first block (with the salt)."""
    extra = tuple(stable_int(key) for key in extra_keys)  # hash(None) varies by process
    if cache_salt:
        return extra, (*extra, stable_int(("cache_salt", cache_salt)))
    return extra, extra


def extend_chain(
    hashes: list[int],
    contents: Iterable[Hashable],
    extras: tuple[tuple[int, ...], ...],
    parent: int | None = None,
) -> list[int]:
    """Append the chained hashes of ``contents`` to ``hashes`` (a chain so far) and return it;
    an empty ``hashes`` chains from ``parent`` (``None``: the chain's first block)."""
    extra, first_extra = extras
    if hashes:
        parent = hashes[-1]
    for content in contents:
        if parent is None:
            parent = hash((NONE_HASH, content, first_extra))
        else:
            parent = hash((parent, content, extra))
        hashes.append(parent)
    return hashes


class _Run:
    __slots__ = ("children", "data", "hashes", "parent")

    def __init__(self, data: bytes, hashes: list[int], parent: int | None) -> None:
        self.data = data  # whole blocks of packed token ids
        self.hashes = hashes  # the chained hashes of its first blocks, one per block
        self.parent = parent  # the hash of the block before it (None: none)
        self.children: dict[bytes, _Run] = {}


class ChainHashMemo:
    """Chained hashes of the whole blocks of packed token sequences; see the module docstring."""

    def __init__(self, block_size: int, capacity: int = CAPACITY) -> None:
        self.block_size = block_size
        self.capacity = capacity
        self._width = 8 * block_size
        self.block = Struct(f"{block_size}q")  # one block of packed token ids
        self.reset()

    def reset(self) -> None:
        self._spaces: dict[
            tuple[tuple[Hashable, ...], str | None],
            tuple[tuple[tuple[int, ...], tuple[int, ...]], _Run],
        ] = {}
        self._size = 0

    def hashes(
        self, data: bytes, extra_keys: Sequence[Hashable], cache_salt: str | None
    ) -> tuple[list[int], int]:
        """The chained hashes of the whole blocks of ``data``, and how many were remembered."""
        hashes, leaf, extras = self._lookup(data, extra_keys, cache_salt)
        known = len(hashes)
        if leaf is not None:
            hashes += self._hashed(leaf, len(leaf.data) // self._width, extras)
        return hashes, known

    def lazy_hashes(
        self, data: bytes, extra_keys: Sequence[Hashable], cache_salt: str | None
    ) -> tuple[list[int], tuple[tuple[int, ...], tuple[int, ...]]]:
        """The chained hashes of the remembered whole blocks that ``data`` starts with (the
        blocks after them are remembered unhashed), and the extras that chain them."""
        hashes, _, extras = self._lookup(data, extra_keys, cache_salt)
        return hashes, extras

    def _lookup(
        self, data: bytes, extra_keys: Sequence[Hashable], cache_salt: str | None
    ) -> tuple[list[int], _Run | None, tuple[tuple[int, ...], tuple[int, ...]]]:
        """The hashes of the remembered blocks ``data`` starts with, the new run that now
        remembers the rest (unhashed), if any, and the space's extras."""
        if self._size > self.capacity:
            self.reset()
        space = (tuple(extra_keys), cache_salt)
        if space not in self._spaces:
            self._spaces[space] = (block_extras(extra_keys, cache_salt), _Run(b"", [], None))
        extras, node = self._spaces[space]
        width = self._width
        end = len(data) // width * width
        hashes: list[int] = []
        position = 0
        while position < end:
            child = node.children.get(data[position : position + width])
            if child is None:
                break
            if data.startswith(child.data, position):
                found = child.hashes
                if len(found) * width < len(child.data):  # (hashed already, mostly)
                    found = self._hashed(child, len(child.data) // width, extras)
                hashes += found
                position += len(child.data)
                node = child
                continue
            edge = data[position : position + len(child.data)]
            shared = common_prefix_length(child.data, edge) // width
            hashes += self._hashed(child, shared, extras)[:shared]
            position += shared * width
            if position < end:
                node = self._split(node, child, shared)
            break
        if position == end:
            return hashes, None, extras
        leaf = _Run(data[position:end], [], hashes[-1] if hashes else None)
        node.children[data[position : position + width]] = leaf
        self._size += len(leaf.data)
        return hashes, leaf, extras

    def _hashed(
        self, run: _Run, blocks: int, extras: tuple[tuple[int, ...], tuple[int, ...]]
    ) -> list[int]:
        """``run``'s hashes, its first ``blocks`` at least hashed."""
        done = len(run.hashes)
        if done < blocks:
            width = self._width
            contents = self.block.iter_unpack(memoryview(run.data)[done * width : blocks * width])
            extend_chain(run.hashes, contents, extras, run.parent)
        return run.hashes

    def _split(self, parent: _Run, child: _Run, blocks: int) -> _Run:
        """Cut ``child`` after ``blocks`` blocks (hashed); return the new upper run."""
        cut = blocks * self._width
        head = _Run(child.data[:cut], child.hashes[:blocks], child.parent)
        parent.children[child.data[: self._width]] = head
        child.data, child.hashes = child.data[cut:], child.hashes[blocks:]
        child.parent = head.hashes[-1]
        head.children[child.data[: self._width]] = child
        return head
