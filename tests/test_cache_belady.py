"""``belady`` against a plain implementation of the same rules on different structures."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from test_cache_block_runs import token_requests

from prefixlint.cache import CacheQuery
from prefixlint.cache.belady import BeladyCache

NEVER = float("inf")


def reference_belady(requests, block_size, capacity):
    """Hits per request: blocks named by their full prefix, the future found by scanning."""
    size = block_size
    blocks = []
    for prompt, output in requests:
        sequence = prompt + output[:-1]
        count = len(sequence) // size
        blocks.append([tuple(sequence[: (i + 1) * size]) for i in range(count)])
    lookups = [max(len(prompt) - 1, 0) // size for prompt, _ in requests]

    def next_lookup(prefix, after):
        for index in range(after + 1, len(requests)):
            if prefix in blocks[index][: lookups[index]]:
                return index
        return NEVER

    cached, hits = {}, []  # prefix -> its next lookup
    for index, (prompt, output) in enumerate(requests):
        mine = blocks[index]
        hit = 0
        while hit < lookups[index] and mine[hit] in cached:
            hit += 1
        hits.append(hit * size)
        held = -(-(len(prompt) + max(len(output) - 1, 0)) // size)
        resident = sum(prefix in cached for prefix in mine)
        for _ in range(held - resident - (capacity - len(cached))):
            victim = max((p for p in cached if p not in mine), key=lambda p: (cached[p], len(p)))
            del cached[victim]
        for prefix in mine:
            cached[prefix] = next_lookup(prefix, index)
    return hits


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([1, 2, 4]).flatmap(lambda b: st.tuples(st.just(b), token_requests(b))),
    st.integers(0, 4),
)
def test_belady_matches_a_plain_implementation(case, spare):
    block_size, requests = case
    needed = max(-(-(len(p) + max(len(o) - 1, 0)) // block_size) for p, o in requests)
    capacity = needed + spare
    queries = [CacheQuery(tokens=p, output_tokens=o) for p, o in requests]
    results = BeladyCache(block_size=block_size, capacity_tokens=capacity * block_size).run(queries)
    expected = reference_belady(requests, block_size, capacity)
    assert [r.cached_tokens for r in results] == expected
    ceiling = BeladyCache(block_size=block_size).run(queries)
    assert [r.longest_available for r in results] == [r.cached_tokens for r in ceiling]
