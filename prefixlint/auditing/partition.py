"""How a distributed audit splits the cache simulation into ordered streams that give the
same results as one stream through each model.

* Provider caches and the unlimited ceiling, without a capacity: a request can hit only a
  prefix it shares with an earlier request of its namespace (``extra_keys``, token or
  trace-block layout), starting at the first unit (token or trace block); nothing else ties
  two requests together (no capacity eviction, expiry per entry). So the requests of one
  namespace and first unit are one stream, and the streams are independent: exact. The
  keys only some of these models read (``openai``: ``cache_key``; ``unlimited``:
  ``cache_salt``) divide a stream further for them alone, so they name no partition.
* Every other model (engines, whose capacity and eviction are shared by everything they
  served, and a provider cache given ``--capacity-tokens``) is one ordered stream of the
  whole log, as a single replica serves it; the routing what-if's replicas are one stream
  each (:func:`prefixlint.auditing.routing.assign`).

A request that a model rejects is skipped, and the models after it in ``--cache`` order
never see it: :func:`exclusions` says which requests each model's streams must leave out.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from prefixlint.auditing.options import AuditOptions
from prefixlint.cache import given_settings
from prefixlint.cache.base import CacheQuery, stable_int

# The provider caches and the ceiling: exact by namespace and first unit when uncapped.
PARTITIONED_MODELS = frozenset({"openai", "anthropic", "deepseek", "gemini", "unlimited"})


def partitioned(name: str, options: AuditOptions) -> bool:
    """Whether model ``name`` can be simulated per partition, exactly, with ``options``."""
    capped = "capacity_tokens" in given_settings(name, capacity_tokens=options.capacity_tokens)
    return name in PARTITIONED_MODELS and not capped


def partition_key(query: CacheQuery) -> int:
    """The query's namespace and first unit, as a process-independent integer: requests
    with different keys share no prefix in any partitioned model."""
    units = query.tokens if query.tokens is not None else query.block_hashes
    first = units[0] if units else None
    namespace: Hashable = (query.tokens is None, tuple(query.extra_keys))
    return stable_int((namespace, first))


def split_models(options: AuditOptions) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The ``--cache`` models that run per partition, and those that run as one stream of
    the whole log each, both in ``--cache`` order."""
    shared = tuple(name for name in options.caches if partitioned(name, options))
    return shared, tuple(name for name in options.caches if name not in shared)


def exclusions(
    caches: Sequence[str], rejected: Mapping[tuple[int, int], set[str]]
) -> dict[str, set[tuple[int, int]]]:
    """The requests each model must not see: those an earlier model in ``caches`` rejects
    (``rejected``: request -> the models that reject it)."""
    left_out: dict[str, set[tuple[int, int]]] = {name: set() for name in caches}
    for request, models in rejected.items():
        first = min(caches.index(name) for name in models)
        for name in caches[first + 1 :]:
            left_out[name].add(request)
    return left_out
