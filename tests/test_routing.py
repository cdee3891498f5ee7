"""Routing what-if: hand-computed assignments for each router (1-token blocks, unlimited)."""

from __future__ import annotations

import pytest

from prefixlint.auditing.results import ReplicaLoad
from prefixlint.auditing.routing import route
from prefixlint.auditing.sweep import TraceEntry
from prefixlint.cache import CacheQuery


def _trace(*requests):
    return [TraceEntry(CacheQuery(tokens=tokens), 0, session) for tokens, session in requests]


def test_round_robin_alternates():
    # Replica 0 gets requests 0 and 2, replica 1 requests 1 and 3: each hits 1 of 2 tokens
    # the second time (vLLM recomputes the last prompt token).
    trace = _trace(*[([1, 2], None)] * 4)
    routing = route(trace, 2, "round-robin", block_size=1)
    assert routing.replicas == [ReplicaLoad(2, 4, 1), ReplicaLoad(2, 4, 1)]
    assert routing.hit_rate == 2 / 8
    assert routing.imbalance == 1.0


def test_session_sticks_and_new_sessions_go_to_the_least_loaded():
    # a -> 0 (loads 2, 0); b -> 1 (2, 3); a sticks to 0 (4, 3, hits 1); c -> 1 (4, 4).
    trace = _trace(([1, 2], "a"), ([3, 4, 5], "b"), ([1, 2], "a"), ([6], "c"))
    routing = route(trace, 2, "session", block_size=1)
    assert routing.replicas == [ReplicaLoad(2, 4, 1), ReplicaLoad(2, 4, 0)]
    # Without a session each request goes to the least loaded replica.
    trace = _trace(([1, 2, 3], None), ([1, 2], None), ([1, 2], None))
    routing = route(trace, 2, "session", block_size=1)
    assert routing.replicas == [ReplicaLoad(1, 3, 0), ReplicaLoad(2, 4, 1)]


PREFIXES = (([1, 2, 3, 4], None), ([5, 6], None), ([1, 2, 3, 4], None), ([1, 2, 3, 4], None))


def test_prefix_aware_follows_the_prefix_within_the_load_bound():
    # epsilon 0.1: request 1 finds replica 0 (4 tokens) over 1.1 x mean 2 = 2.2, goes to 1;
    # request 2 finds replica 0 over 1.1 x 3 = 3.3 and goes to 1 (no match there); request 3
    # finds replica 1 (6) over 1.1 x 5 = 5.5 and goes back to 0, matching 4 blocks, hit 3.
    routing = route(_trace(*PREFIXES), 2, "prefix-aware", epsilon=0.1, block_size=1)
    assert routing.replicas == [ReplicaLoad(2, 8, 3), ReplicaLoad(2, 6, 0)]
    assert routing.imbalance == 8 / 7


def test_prefix_aware_with_a_loose_bound_keeps_the_prefix_together():
    # epsilon 1: replica 0 (4 tokens, 8 later) stays within 2 x the mean for both repeats.
    routing = route(_trace(*PREFIXES), 2, "prefix-aware", epsilon=1.0, block_size=1)
    assert routing.replicas == [ReplicaLoad(3, 12, 6), ReplicaLoad(1, 2, 0)]


def test_capacity_is_per_replica():
    # Two replicas of 2 blocks: [1, 2] then [3, 4] on one replica evicts [1, 2].
    trace = _trace(([1, 2], "a"), ([3, 4], "a"), ([1, 2], "a"))
    assert route(trace, 2, "session", capacity_tokens=2, block_size=1).hit_rate == 0
    assert route(trace, 1, "session", block_size=1).hit_rate == 1 / 6


def test_bad_router():
    with pytest.raises(ValueError, match="unknown router"):
        route([], 2, "random")
