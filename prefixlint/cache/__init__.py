"""Prefix-cache models: feed requests in log order, learn what each would have had cached.

See :mod:`prefixlint.cache.base` for the interface. Models: ``vllm``, ``sglang``,
``llamacpp``, ``openai``, ``anthropic``, ``deepseek``, ``gemini``, ``unlimited`` and the
offline ``belady``.
"""

from __future__ import annotations

from prefixlint.cache import (
    anthropic,
    belady,
    deepseek,
    gemini,
    llamacpp,
    openai,
    sglang,
    unlimited,
    vllm,
)
from prefixlint.cache.base import (
    CACHE_MODELS,
    CacheModel,
    CacheQuery,
    CacheResult,
    InvalidQuery,
    MissReason,
)

__all__ = [
    "CACHE_MODELS",
    "CacheModel",
    "CacheQuery",
    "CacheResult",
    "InvalidQuery",
    "MissReason",
    "anthropic",
    "belady",
    "deepseek",
    "gemini",
    "llamacpp",
    "make_cache_model",
    "openai",
    "sglang",
    "unlimited",
    "vllm",
]


def make_cache_model(name: str, **params) -> CacheModel:
    """A fresh model by registry name, e.g. ``make_cache_model("vllm", block_size=32)``."""
    try:
        cls = CACHE_MODELS[name]
    except KeyError:
        known = ", ".join(sorted(CACHE_MODELS))
        raise ValueError(f"unknown cache model {name!r} (known: {known})") from None
    return cls(**params)
