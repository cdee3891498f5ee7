"""The cache models behind every backend: the ``sim`` replay and the predictions that the
``torch`` and ``server`` replays are compared with.

Which options a model takes (``block_size`` for vLLM, ``page_size`` for SGLang,
``capacity_tokens``) is decided as in ``prefixlint audit``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from prefixlint.cache import given_settings, make_cache_model
from prefixlint.cache.base import CacheQuery, InvalidQuery
from prefixlint.replay import ReplayError


def cache_params(
    cache: str,
    *,
    block_size: int | None = None,
    page_size: int | None = None,
    capacity_tokens: int | None = None,
    **engine_settings: float | None,
) -> dict[str, Any]:
    """The options among those given that ``cache``'s model takes (``engine_settings``: the
    llama-server ones, for ``llamacpp``)."""
    try:
        return given_settings(
            cache,
            block_size=block_size,
            page_size=page_size,
            capacity_tokens=capacity_tokens,
            **engine_settings,
        )
    except ValueError as exc:
        raise ReplayError(str(exc)) from None


def simulate(cache: str, queries: Iterable[tuple[str, CacheQuery]], **params: Any) -> list[int]:
    """Cached tokens the ``cache`` model predicts for each ``(where, query)``, in order."""
    try:
        model = make_cache_model(cache, **params)
    except ValueError as exc:
        raise ReplayError(f"cache model {cache}: {exc}") from None
    cached = []
    for where, query in queries:
        try:
            cached.append(model.process(query).cached_tokens)
        except InvalidQuery as exc:
            raise ReplayError(f"{where}: {exc}") from None
    return cached
