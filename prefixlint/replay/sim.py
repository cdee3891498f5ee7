"""The ``sim`` backend: feed rendered requests, in log order, to one of the cache models."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from prefixlint.cache import CacheQuery, make_cache_model
from prefixlint.cache.base import InvalidQuery
from prefixlint.replay import ReplayError


def cache_options(block_size: int | None, capacity_tokens: int | None) -> dict[str, Any]:
    """Keyword options for ``make_cache_model``; unset ones keep the model's defaults."""
    options: dict[str, Any] = {}
    if block_size is not None:
        options["block_size"] = block_size
    if capacity_tokens is not None:
        options["capacity_tokens"] = capacity_tokens
    return options


def simulate(cache: str, prompts: Iterable[tuple[str, Sequence[int]]], **options: Any) -> list[int]:
    """Cached tokens the ``cache`` model predicts for each ``(where, tokens)``, in order."""
    model = make_cache_model(cache, **options)
    cached = []
    for where, tokens in prompts:
        try:
            cached.append(model.process(CacheQuery(tokens=tuple(tokens))).cached_tokens)
        except InvalidQuery as exc:
            raise ReplayError(f"{where}: {exc}") from None
    return cached
