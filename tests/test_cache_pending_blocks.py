"""The vLLM model leaves a request's new blocks unhashed until a later lookup reads them
(:mod:`prefixlint.cache.pending_blocks`): the hashes it ends up with are the true chained
hashes, only the blocks some later request shares (and the keys where requests part) are
hashed, and hits, evictions and what an infinite cache would hold are those of the plain
block-by-block model, request by request."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cache_vllm import ReferenceVllm

from prefixlint.cache import CacheQuery, make_cache_model
from prefixlint.cache.block_runs import _Run
from prefixlint.cache.vllm import VllmCache, block_hashes

A = [1, 2, 3, 4, 5, 6, 7, 8]  # four blocks of two tokens
B = [1, 2, 9, 9, 9, 9, 9, 9]  # A's first block, then its own
C = [1, 2, 3, 4, 5, 6, 0, 0]  # A's first three blocks


def runs(model: VllmCache) -> list[_Run]:
    """The pool's runs below its token tree's root."""
    return [run for run in model._pool._runs() if run.parent is not None]


def hashed_blocks(model: VllmCache) -> int:
    return sum(len(run.units) for run in runs(model))


@pytest.mark.parametrize(
    ("prompts", "hashed"),
    (
        # One new prompt: only its first block's hash, the key of its run.
        ([A], 1),
        # A second prompt that parts from A after one block: A's run is cut there (the key
        # of its deeper part is hashed), and B's own run is keyed by its first new block.
        ([A, B], 3),
        # A repeat of A: its last block is recomputed (the hit stops one token short), so
        # the walk reads every block of A and takes the repeat's hashes for them.
        ([A, A], 4),
        # C follows A for three blocks: A's run takes C's hashes for them, then is cut.
        ([A, C], 5),
        # B then C: B parts at A's first block, C follows A further.
        ([A, B, C], 6),
    ),
)
def test_only_blocks_a_later_lookup_reads_are_hashed(prompts, hashed):
    model = VllmCache(block_size=2)
    for prompt in prompts:
        model.process(CacheQuery(tokens=prompt))
    assert hashed_blocks(model) == hashed


@pytest.mark.parametrize("prompts", ([A], [A, B], [A, A], [A, C], [A, B, C], [C, A, B, A]))
def test_the_hashes_worked_out_are_the_chained_block_hashes(prompts):
    model = VllmCache(block_size=2)
    for prompt in prompts:
        model.process(CacheQuery(tokens=prompt))
    true_hashes = {h for prompt in prompts for h in block_hashes(CacheQuery(tokens=prompt), 2)}
    for run in runs(model):
        assert set(run.units) <= true_hashes
    # Asking for a hash hashes the rest: every block of every prompt is then in the cache.
    assert all(h in model for h in true_hashes)
    assert all(run.pending is None for run in runs(model))


@pytest.mark.parametrize(
    ("prompts", "capacity"),
    (
        ([A, B, A, C], 4),  # A's blocks evicted by B, one by one from the deepest
        ([A, B, C, A, B], 5),
        ([A, C, B, C, A], 6),
        ([A, A, A, B, A], 4),  # copies of A's recomputed last block
        ([B, A, C, B, C, A], 8),
    ),
)
def test_hits_and_evictions_are_those_of_the_block_model(prompts, capacity):
    model = VllmCache(block_size=2, capacity_tokens=2 * capacity)
    reference, ceiling = ReferenceVllm(2, capacity), ReferenceVllm(2, None)
    for prompt in prompts:
        result = model.process(CacheQuery(tokens=prompt))
        assert result.cached_tokens == reference.step(prompt, [])
        assert result.longest_available == ceiling.step(prompt, [])


tokens = st.integers(0, 2)


@st.composite
def stamped_requests(draw, block_size):
    """Requests that share a head, then carry a stamp of their own (mostly), then the rest
    of a conversation that earlier requests may have had."""
    head = draw(st.lists(tokens, max_size=2 * block_size))
    bodies = draw(st.lists(st.lists(tokens, max_size=4 * block_size), min_size=1, max_size=3))
    requests = []
    for _ in range(draw(st.integers(1, 20))):
        stamp = draw(st.lists(st.integers(0, 5), min_size=0, max_size=2))
        body = draw(st.sampled_from(bodies))
        body = body[: draw(st.integers(0, len(body)))]
        output = draw(st.sampled_from([[], [1, 2], [0] * (block_size + 1)]))
        requests.append(((head + stamp + body) or [0], output))
    return requests


@settings(max_examples=200, deadline=None)
@given(
    st.sampled_from([1, 2, 4]).flatmap(lambda b: st.tuples(st.just(b), stamped_requests(b))),
    st.one_of(st.none(), st.integers(0, 6)),
)
def test_stamped_requests_match_the_block_model(case, spare):
    block_size, requests = case
    needed = max(-(-(len(p) + max(len(o) - 1, 0)) // block_size) for p, o in requests)
    capacity = None if spare is None else needed + spare
    model = make_cache_model(
        "vllm",
        block_size=block_size,
        capacity_tokens=None if capacity is None else capacity * block_size,
    )
    reference, ceiling = ReferenceVllm(block_size, capacity), ReferenceVllm(block_size, None)
    for prompt, output in requests:
        result = model.process(CacheQuery(tokens=prompt, output_tokens=output))
        assert result.cached_tokens == reference.step(prompt, output)
        assert result.longest_available == ceiling.step(prompt, output)
