"""KV-cache geometry: how many bytes one token's keys and values take, and so how many tokens
fit in a given amount of KV memory.

A token occupies ``2 (K and V) x layers x KV heads x head dim x dtype bytes``. The table of
well-known models copies its numbers from each model's Hugging Face ``config.json``
(``num_hidden_layers``, ``num_key_value_heads``, ``head_dim`` or ``hidden_size /
num_attention_heads``, ``torch_dtype``); :func:`load_geometry` also reads such a file.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prefixlint.cache.base import kv_capacity_tokens

DTYPE_BYTES = {
    "float32": 4,
    "float": 4,
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "fp8": 1,
}


class GeometryError(ValueError):
    """An unknown model name or a config.json without a usable KV geometry."""


@dataclass(frozen=True)
class KVGeometry:
    """What one token's keys and values occupy in every layer."""

    layers: int
    kv_heads: int
    head_dim: int
    dtype_bytes: int

    @property
    def bytes_per_token(self) -> int:
        return 2 * self.layers * self.kv_heads * self.head_dim * self.dtype_bytes

    def capacity_tokens(self, memory_bytes: int) -> int:
        """Tokens of KV cache that fit in ``memory_bytes``."""
        return kv_capacity_tokens(
            memory_bytes=memory_bytes,
            num_layers=self.layers,
            num_kv_heads=self.kv_heads,
            head_dim=self.head_dim,
            dtype_bytes=self.dtype_bytes,
        )


# From each model's config.json on the Hugging Face Hub (all published in bfloat16):
# Qwen/Qwen3-0.6B: 28 layers, 8 KV heads, head_dim 128; Qwen/Qwen3-4B: 36, 8, 128;
# Qwen/Qwen3-8B: 36, 8, 128; Qwen/Qwen3-14B: 40, 8, 128; Qwen/Qwen3-32B: 64, 8, 128;
# meta-llama/Llama-3.1-8B: 32 layers, 8 KV heads, hidden_size 4096 / 32 heads = 128;
# meta-llama/Llama-3.1-70B: 80, 8, 8192 / 64 = 128.
KNOWN_GEOMETRIES = {
    "Qwen3-0.6B": KVGeometry(28, 8, 128, 2),
    "Qwen3-4B": KVGeometry(36, 8, 128, 2),
    "Qwen3-8B": KVGeometry(36, 8, 128, 2),
    "Qwen3-14B": KVGeometry(40, 8, 128, 2),
    "Qwen3-32B": KVGeometry(64, 8, 128, 2),
    "Llama-3.1-8B": KVGeometry(32, 8, 128, 2),
    "Llama-3.1-70B": KVGeometry(80, 8, 128, 2),
}

_UNITS = {"": 1, "b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "tb": 10**12}
_UNITS |= {"kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


def parse_bytes(text: str) -> int:
    """``"8GiB"``, ``"512MB"``, ``"1e9"`` or a plain byte count, as bytes."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][0-9]+)?)\s*([a-zA-Z]*)\s*", text)
    unit = match.group(2).lower() if match else None
    if match is None or unit not in _UNITS:
        raise GeometryError(f"cannot read {text!r} as a memory size (e.g. 8GiB, 512MB)")
    return int(float(match.group(1)) * _UNITS[unit])


def geometry_from_config(config: Any, source: str = "config.json") -> KVGeometry:
    """The KV geometry a Hugging Face config dict describes (``text_config`` when nested)."""
    if isinstance(config, dict) and isinstance(config.get("text_config"), dict):
        config = config["text_config"]
    if not isinstance(config, dict):
        raise GeometryError(f"{source}: a model config is a JSON object")

    def count(key: str) -> int | None:
        value = config.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise GeometryError(f"{source}: {key} must be a positive integer, not {value!r}")
        return value

    layers, heads = count("num_hidden_layers"), count("num_attention_heads")
    if layers is None:
        raise GeometryError(f"{source}: no num_hidden_layers")
    kv_heads = count("num_key_value_heads") or heads
    head_dim = count("head_dim")
    if head_dim is None:
        hidden = count("hidden_size")
        if hidden is None or heads is None:
            raise GeometryError(f"{source}: needs head_dim, or hidden_size and num_attention_heads")
        head_dim = hidden // heads
    if kv_heads is None:
        raise GeometryError(f"{source}: no num_key_value_heads nor num_attention_heads")
    dtype = config.get("torch_dtype", config.get("dtype", "bfloat16"))
    if dtype not in DTYPE_BYTES:
        raise GeometryError(f"{source}: unknown torch_dtype {dtype!r}")
    return KVGeometry(layers, kv_heads, head_dim, DTYPE_BYTES[dtype])


def load_geometry(spec: str) -> tuple[str, KVGeometry]:
    """``(name, geometry)`` for a model of :data:`KNOWN_GEOMETRIES` (any case) or a
    ``config.json`` path (or a folder holding one)."""
    for name, geometry in KNOWN_GEOMETRIES.items():
        if spec.lower() == name.lower():
            return name, geometry
    path = Path(spec)
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        known = ", ".join(KNOWN_GEOMETRIES)
        raise GeometryError(f"{spec}: not a known model ({known}) nor a config.json file")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        first = str(exc).splitlines()[0]
        raise GeometryError(f"{path}: cannot read model config: {first}") from None
    return str(path), geometry_from_config(config, str(path))
