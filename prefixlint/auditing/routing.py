"""Routing what-if (``audit --replicas N --router R``): spread the audited requests over N
replicas, each with its own ``vllm`` cache of the audit's capacity, and see what each hits.

Routers (ties go to the replica with the fewest prompt tokens so far, then the lowest index):

* ``round-robin``: request i goes to replica i mod N;
* ``session``: a session sticks to the replica its first request went to, the one with the
  fewest prompt tokens then; a request without a session goes to that replica too;
* ``prefix-aware``: the replica whose routed prefixes match the request's leading blocks
  longest, among the replicas within the load bound: a replica whose prompt tokens so far
  exceed ``(1 + epsilon)`` times the replicas' mean is passed over (the least loaded one
  never is). The router's view of a replica is every block it has sent there, as SGLang's
  cache-aware router keeps an approximate radix tree per worker and falls back to the least
  loaded worker when the load is imbalanced
  (https://docs.sglang.ai/router/router.html), and as llm-d's endpoint picker
  scores endpoints by the prefix it last sent them alongside a load scorer
  (https://llm-d.ai/docs/guides/optimized-baseline).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence

from prefixlint.auditing.results import ReplicaLoad, Routing
from prefixlint.auditing.sweep import DEFAULT_BLOCK_SIZE, TraceEntry
from prefixlint.cache.base import CacheQuery
from prefixlint.cache.vllm import VllmCache, block_hashes

ROUTERS = ("round-robin", "session", "prefix-aware")
DEFAULT_EPSILON = 0.1


def _least_loaded(loads: Sequence[int], among: Sequence[int]) -> int:
    return min(among, key=lambda r: (loads[r], r))


def _matched(seen: set[int], hashes: Sequence[int]) -> int:
    """How many of ``hashes``, from the first, the router has sent to a replica."""
    return len(list(itertools.takewhile(seen.__contains__, hashes)))


def assign(
    trace: Sequence[TraceEntry],
    replicas: int,
    router: str,
    *,
    epsilon: float = DEFAULT_EPSILON,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> list[int]:
    """The replica ``router`` sends each request of ``trace`` to. A replica's load is the
    prompt tokens routed to it, which its cache does not change, so the assignment needs no
    cache and each replica's stream can be replayed apart (:func:`replay`)."""
    if router not in ROUTERS:
        raise ValueError(f"unknown router {router!r} (known: {', '.join(ROUTERS)})")
    if replicas < 1 or epsilon < 0:
        raise ValueError("replicas must be >= 1 and epsilon >= 0")
    everyone = range(replicas)
    loads = [0] * replicas
    sessions: dict[str, int] = {}
    routed: list[set[int]] = [set() for _ in everyone]
    chosen_replicas = []
    for index, entry in enumerate(trace):
        query = entry.query
        if router == "round-robin":
            chosen = index % replicas
        elif router == "session":
            if entry.session is None:
                chosen = _least_loaded(loads, everyone)
            else:
                chosen = sessions.setdefault(entry.session, _least_loaded(loads, everyone))
        else:
            hashes = block_hashes(query, block_size)
            bound = (1 + epsilon) * sum(loads) / replicas
            eligible = [r for r in everyone if loads[r] <= bound]
            matched = {r: _matched(routed[r], hashes) for r in eligible}
            chosen = min(eligible, key=lambda r: (-matched[r], loads[r], r))
            routed[chosen].update(hashes)
        loads[chosen] += query.prompt_tokens
        chosen_replicas.append(chosen)
    return chosen_replicas


def replay(
    queries: Sequence[CacheQuery],
    capacity_tokens: int | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> ReplicaLoad:
    """One replica: its own ``vllm`` cache, fed its stream of queries in order."""
    cache = VllmCache(block_size=block_size, capacity_tokens=capacity_tokens)
    prompt = cached = 0
    for query in queries:
        result = cache.process(query)
        prompt += result.prompt_tokens
        cached += result.cached_tokens
    return ReplicaLoad(len(queries), prompt, cached)


# Replays each replica's stream of queries (:func:`replay` for each, here or elsewhere).
ReplayStreams = Callable[[Sequence[Sequence[CacheQuery]]], list[ReplicaLoad]]


def route(
    trace: Sequence[TraceEntry],
    replicas: int,
    router: str,
    *,
    epsilon: float = DEFAULT_EPSILON,
    capacity_tokens: int | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    replay_streams: ReplayStreams | None = None,
) -> Routing:
    """Replay ``trace`` over ``replicas`` caches as ``router`` assigns the requests; each
    replica's stream is replayed by ``replay_streams`` (default: one after another here)."""
    chosen = assign(trace, replicas, router, epsilon=epsilon, block_size=block_size)
    streams: list[list[CacheQuery]] = [[] for _ in range(replicas)]
    for entry, replica in zip(trace, chosen, strict=True):
        streams[replica].append(entry.query)
    if replay_streams is None:
        loads = [replay(stream, capacity_tokens, block_size) for stream in streams]
    else:
        loads = replay_streams(streams)
    return Routing(router=router, epsilon=epsilon, capacity_tokens=capacity_tokens, replicas=loads)
