"""A paged KV block pool on the device: one slot per cache block, for every layer at once.

Slot numbers are the block ids of the ``vllm`` cache model (see :mod:`.block_table`), so
which slots hold which prefix, and which are evicted, is decided by the same chained block
hashes and LRU free queue that the simulator uses. This module only moves tensors: it
gathers the slots of a matched prefix into per-layer past keys/values and stores the full
blocks that a prefill computed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from types import ModuleType
from typing import TYPE_CHECKING

from prefixlint.cache import geometry
from prefixlint.cache.geometry import KVGeometry
from prefixlint.replay import ReplayError

if TYPE_CHECKING:
    from torch import Tensor
    from torch import device as TorchDevice
    from torch import dtype as TorchDtype

LayerKV = tuple["Tensor", "Tensor"]  # one layer's (keys, values)


def parse_bytes(text: str) -> int:
    """``"8GiB"``, ``"512MB"``, ``"1e9"`` -> bytes (the grammar of :mod:`~.cache.geometry`)."""
    try:
        return geometry.parse_bytes(text)
    except geometry.GeometryError as exc:
        raise ReplayError(str(exc)) from None


def free_device_memory(torch: ModuleType, device: TorchDevice) -> int:
    """Bytes free on ``device`` now: CUDA's free memory, or the host's available memory."""
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(free)
    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def blocks_for_memory(memory: int, geometry: KVGeometry, block_size: int) -> int:
    blocks = memory // (geometry.bytes_per_token * block_size)
    if blocks < 2:
        raise ReplayError(
            f"{memory} bytes hold fewer than 2 KV blocks of {block_size} tokens"
            f" ({geometry.bytes_per_token} bytes per token)"
        )
    return blocks


class DeviceBlockPool:
    """Keys and values of ``num_blocks`` blocks: ``[layers, blocks, kv_heads, block, head_dim]``."""

    def __init__(
        self,
        torch: ModuleType,
        geometry: KVGeometry,
        num_blocks: int,
        block_size: int,
        device: TorchDevice,
        dtype: TorchDtype,
    ) -> None:
        shape = (geometry.layers, num_blocks, geometry.kv_heads, block_size, geometry.head_dim)
        self.torch = torch
        self.block_size = block_size
        self.num_blocks = num_blocks
        self.keys: Tensor = torch.empty(shape, device=device, dtype=dtype)
        self.values: Tensor = torch.empty(shape, device=device, dtype=dtype)

    @property
    def nbytes(self) -> int:
        """Bytes the pool's keys and values take on the device."""
        return int(self.keys.nbytes + self.values.nbytes)

    def _index(self, slots: Sequence[int]) -> Tensor:
        index: Tensor = self.torch.tensor(
            list(slots), device=self.keys.device, dtype=self.torch.long
        )
        return index

    def gather(self, slots: Sequence[int]) -> list[LayerKV]:
        """Per layer ``(keys, values)`` of shape ``[1, kv_heads, len(slots) * block, head_dim]``."""
        index = self._index(slots)
        layers, _, heads, block, dim = self.keys.shape

        def contiguous(pool: Tensor) -> Tensor:
            picked = pool.index_select(1, index)  # [L, n, H, B, D]
            return picked.permute(0, 2, 1, 3, 4).reshape(layers, 1, heads, len(slots) * block, dim)

        keys, values = contiguous(self.keys), contiguous(self.values)
        return [(keys[layer], values[layer]) for layer in range(layers)]

    def store(
        self, layer_kv: Sequence[LayerKV], blocks: Sequence[int], slots: Sequence[int]
    ) -> None:
        """Copy blocks ``blocks`` (indices into the sequence) of ``layer_kv`` into ``slots``."""
        if not blocks:
            return
        block = self.block_size
        index = self._index(slots)
        positions: Tensor = self.torch.cat(
            [self.torch.arange(b * block, (b + 1) * block, device=self.keys.device) for b in blocks]
        )
        for pool, part in ((self.keys, 0), (self.values, 1)):
            stacked: Tensor = self.torch.stack([kv[part][0] for kv in layer_kv])  # [L, H, T, D]
            picked = stacked.index_select(2, positions)  # [L, H, n*B, D]
            layers, heads, _, dim = picked.shape
            picked = picked.reshape(layers, heads, len(blocks), block, dim).permute(0, 2, 1, 3, 4)
            pool.index_copy_(1, index, picked)
