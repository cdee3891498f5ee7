"""Prefix-cache models: feed requests in log order, learn what each would have had cached.

See :mod:`prefixlint.cache.base` for the interface. Models: ``vllm``, ``sglang``,
``llamacpp``, ``openai``, ``anthropic``, ``deepseek``, ``gemini``, ``unlimited`` and the
offline ``belady``.
"""

from __future__ import annotations

from typing import Any

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
    "given_settings",
    "llamacpp",
    "make_cache_model",
    "make_configured_model",
    "openai",
    "sglang",
    "unlimited",
    "vllm",
]


def make_cache_model(name: str, **params: Any) -> CacheModel:
    """A fresh model by registry name, e.g. ``make_cache_model("vllm", block_size=32)``."""
    try:
        cls = CACHE_MODELS[name]
    except KeyError:
        known = ", ".join(sorted(CACHE_MODELS))
        raise ValueError(f"unknown cache model {name!r} (known: {known})") from None
    return cls(**params)


def given_settings(name: str, **settings: float | None) -> dict[str, float]:
    """The engine settings a user gave (``None``: not given) that model ``name`` takes.

    Settings the model does not take (a ``page_size`` for vLLM) are left out, so one set of
    command-line options serves every selected model.
    """
    if name not in CACHE_MODELS:
        known = ", ".join(sorted(CACHE_MODELS))
        raise ValueError(f"unknown cache model {name!r} (known: {known})")
    accepted = CACHE_MODELS[name].settings
    return {k: v for k, v in settings.items() if v is not None and k in accepted}


def make_configured_model(name: str, **settings: float | None) -> CacheModel:
    """A fresh model from the engine settings a user gave (see :func:`given_settings`)."""
    return make_cache_model(name, **given_settings(name, **settings))
