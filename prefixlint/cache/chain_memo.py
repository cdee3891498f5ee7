"""vLLM block hashes remembered by token prefix, so a request hashes only its new blocks.

Consecutive requests of a conversation repeat everything but the latest turn. The memo is a
tree of runs of whole blocks (packed token ids, as :func:`prefixlint.cache.base.unit_bytes`
packs them) per hashing namespace; each run keeps the chained hashes of its blocks. A
lookup walks the tree with C-speed bytes comparisons, takes the stored hashes of the
longest remembered prefix and hashes only the blocks after it, which it then remembers.
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
    hashes: list[int], contents: Iterable[Hashable], extras: tuple[tuple[int, ...], ...]
) -> list[int]:
    """Append the chained hashes of ``contents`` to ``hashes`` (a chain so far) and return it."""
    extra, first_extra = extras
    parent = hashes[-1] if hashes else None
    for content in contents:
        if parent is None:
            parent = hash((NONE_HASH, content, first_extra))
        else:
            parent = hash((parent, content, extra))
        hashes.append(parent)
    return hashes


class _Run:
    __slots__ = ("children", "data", "hashes")

    def __init__(self, data: bytes, hashes: list[int]) -> None:
        self.data = data  # whole blocks of packed token ids
        self.hashes = hashes  # their chained hashes, one per block
        self.children: dict[bytes, _Run] = {}


class ChainHashMemo:
    """Chained hashes of the whole blocks of packed token sequences; see the module docstring."""

    def __init__(self, block_size: int, capacity: int = CAPACITY) -> None:
        self.block_size = block_size
        self.capacity = capacity
        self._width = 8 * block_size
        self._block = Struct(f"{block_size}q")
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
        if self._size > self.capacity:
            self.reset()
        space = (tuple(extra_keys), cache_salt)
        if space not in self._spaces:
            self._spaces[space] = (block_extras(extra_keys, cache_salt), _Run(b"", []))
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
                hashes += child.hashes
                position += len(child.data)
                node = child
                continue
            edge = data[position : position + len(child.data)]
            shared = common_prefix_length(child.data, edge) // width
            hashes += child.hashes[:shared]
            position += shared * width
            if position < end:
                node = self._split(node, child, shared)
            break
        known = len(hashes)
        if position < end:
            contents = self._block.iter_unpack(data[position:end])
            extend_chain(hashes, contents, extras)
            leaf = _Run(data[position:end], hashes[known:])
            node.children[data[position : position + width]] = leaf
            self._size += len(leaf.data)
        return hashes, known

    def _split(self, parent: _Run, child: _Run, blocks: int) -> _Run:
        """Cut ``child`` after ``blocks`` blocks; return the new upper run."""
        cut = blocks * self._width
        head = _Run(child.data[:cut], child.hashes[:blocks])
        parent.children[child.data[: self._width]] = head
        child.data, child.hashes = child.data[cut:], child.hashes[blocks:]
        head.children[child.data[: self._width]] = child
        return head
