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
            if prefix in blocks[index]:  # looked up there, or written again
                return index if prefix in blocks[index][: lookups[index]] else NEVER
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


def test_a_block_written_again_before_its_next_lookup_is_not_kept_for_it():
    # 4-token blocks, room for 3. r0 caches A = [0,0,0,1]; r1 writes C = [0,0,0,0] from its
    # answer; r2 holds A again past its lookup (4 tokens: nothing to look up); r3 needs two
    # blocks and must drop A or C. C is written again by r4's answer before r5 looks it up, so
    # keeping A is what pays: r5 hits C and r6 hits A. (Keeping C for r5 would lose A for r6.)
    A, Z = [0, 0, 0, 1], [0, 0, 0, 0]
    requests = [
        ([*A, *Z, 0], []),
        ([0], Z),
        (A, []),
        ([0, 0, 0, 2, 0], []),
        ([0], Z),
        ([*Z, 0], []),
        ([*A, 0], []),
    ]
    queries = [CacheQuery(tokens=p, output_tokens=o) for p, o in requests]
    results = BeladyCache(block_size=4, capacity_tokens=12).run(queries)
    assert [r.cached_tokens for r in results] == [0, 0, 0, 0, 0, 4, 4]
    assert reference_belady(requests, 4, 3) == [0, 0, 0, 0, 0, 4, 4]
