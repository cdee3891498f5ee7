"""Build the transformer that the torch backend runs: from a preset, a ``config.json``, or weights.

Presets are Hugging Face ``config.json`` files shipped in ``presets/``: ``tiny`` (tests),
``qwen3-0.6b`` and ``llama-3.1-8b`` (the published geometries, with the Qwen vocabulary so
every id the default tokenizer emits has an embedding). Random weights are enough to time
prefill and to check that reused KV blocks give the logits of a full prefill.

torch and transformers are imported here and only here, so the core install stays light.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from prefixlint.cache.geometry import KVGeometry
from prefixlint.replay import ReplayError

if TYPE_CHECKING:
    from torch import device as TorchDevice
    from torch import dtype as TorchDtype
    from torch.nn import Module
    from transformers import PretrainedConfig

T = TypeVar("T")

INSTALL_HINT = "the torch backend needs torch and transformers: install prefixlint[gpu]"
DTYPES = ("auto", "float32", "bfloat16", "float16")


def import_torch() -> tuple[ModuleType, ModuleType]:
    """``(torch, transformers)``, or a :class:`ReplayError` saying how to install them."""
    try:
        import torch
        import transformers
    except ImportError:
        raise ReplayError(INSTALL_HINT) from None
    return torch, transformers


def preset_names() -> list[str]:
    presets = resources.files("prefixlint.replay") / "presets"
    return sorted(p.name[: -len(".json")] for p in presets.iterdir() if p.name.endswith(".json"))


def read_config(model: str) -> tuple[str, dict[str, Any]]:
    """``(name, config dict)`` for a preset name, a ``config.json`` path or a folder holding one."""
    if model in preset_names():
        text = (resources.files("prefixlint.replay") / "presets" / f"{model}.json").read_text()
        return model, json.loads(text)
    path = Path(model)
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        known = ", ".join(preset_names())
        raise ReplayError(f"{model}: not a preset ({known}) nor a config.json file")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReplayError(f"{path}: cannot read model config: {exc}") from None
    if not isinstance(config, dict) or "model_type" not in config:
        raise ReplayError(f"{path}: a model config needs a model_type")
    return str(path), config


@dataclass
class LoadedModel:
    """A causal LM ready for prefill, with what the KV pool needs to know about it."""

    name: str
    model: Module
    device: TorchDevice
    dtype: TorchDtype
    geometry: KVGeometry
    vocab_size: int
    random_weights: bool


def resolve_device(torch: ModuleType, device: str) -> TorchDevice:
    """The torch device ``device`` names (``auto``: CUDA when available, else the CPU)."""
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    elif device.startswith("cuda") and not torch.cuda.is_available():
        raise ReplayError(f"--device {device}: no CUDA device is available")
    resolved: TorchDevice = torch.device(device)
    return resolved


def resolve_dtype(torch: ModuleType, dtype: str, device: TorchDevice) -> TorchDtype:
    """The torch dtype ``dtype`` names (``auto``: bfloat16 on CUDA, else float32)."""
    if dtype == "auto":
        dtype = "bfloat16" if device.type == "cuda" else "float32"
    elif dtype not in DTYPES:
        raise ReplayError(f"unknown dtype {dtype!r} (use {', '.join(DTYPES)})")
    resolved: TorchDtype = getattr(torch, dtype)
    return resolved


def _geometry(config: PretrainedConfig, dtype_bytes: int) -> KVGeometry:
    layer_types = getattr(config, "layer_types", None) or ()
    if any(kind != "full_attention" for kind in layer_types):
        raise ReplayError(
            f"{config.model_type}: only models whose layers all use full attention can be replayed"
        )
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // heads
    kv_heads = getattr(config, "num_key_value_heads", None) or heads
    return KVGeometry(config.num_hidden_layers, kv_heads, head_dim, dtype_bytes)


LOCAL = {"local_files_only": True}


def _load(load: Callable[[], T], name: str) -> T:
    """``load()``, with a failure to read local files as a one-line :class:`ReplayError`."""
    try:
        return load()
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ReplayError(f"{name}: cannot load weights: {first}") from None


def load_model(
    model: str,
    *,
    weights: str | None = None,
    device: str = "auto",
    dtype: str = "auto",
    vocab_needed: int = 0,
    seed: int = 0,
) -> LoadedModel:
    """Build the model on ``device``: random weights from ``model``'s config, or ``weights``.

    A preset or config file is read before torch is imported, so a wrong name is reported as
    such on a machine without torch too.
    """
    name, raw = (weights, None) if weights is not None else read_config(model)
    torch, transformers = import_torch()
    target = resolve_device(torch, device)
    torch_dtype = resolve_dtype(torch, dtype, target)
    if raw is None:
        config = _load(lambda: transformers.AutoConfig.from_pretrained(weights, **LOCAL), name)
    else:
        fields = dict(raw)
        try:
            config = transformers.AutoConfig.for_model(fields.pop("model_type"), **fields)
        except (KeyError, ValueError) as exc:
            raise ReplayError(f"{name}: unsupported model config: {exc}") from None
    text_config = config.get_text_config()
    if text_config.vocab_size < vocab_needed:
        raise ReplayError(
            f"{name}: vocabulary of {text_config.vocab_size} does not cover the tokenizer's"
            f" {vocab_needed} ids"
        )
    auto = transformers.AutoModelForCausalLM
    if weights is not None:
        net = _load(lambda: auto.from_pretrained(weights, dtype=torch_dtype, **LOCAL), name)
        net = net.to(target)
    else:
        torch.manual_seed(seed)
        with torch.device(target):
            net = auto.from_config(config, dtype=torch_dtype)
    net.eval()
    dtype_bytes = torch.empty((), dtype=torch_dtype).element_size()
    return LoadedModel(
        name=name,
        model=net,
        device=target,
        dtype=torch_dtype,
        geometry=_geometry(text_config, dtype_bytes),
        vocab_size=text_config.vocab_size,
        random_weights=weights is None,
    )
