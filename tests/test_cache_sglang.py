from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.cache import CacheQuery, InvalidQuery, make_cache_model


def cached(model, *prompts):
    return [model.process(CacheQuery(tokens=list(p))).cached_tokens for p in prompts]


@pytest.mark.parametrize(
    ("page_size", "length", "expected"),
    (
        (1, 1, 0),
        (1, 2, 1),
        (1, 10, 9),
        (4, 10, 8),
        (4, 9, 8),
        (4, 8, 4),
        (16, 16, 0),
        (16, 40, 32),
    ),
)
def test_repeat_hits_input_len_minus_one_page_floored(page_size, length, expected):
    model = make_cache_model("sglang", page_size=page_size)
    assert cached(model, range(length), range(length)) == [0, expected]


def test_partial_match_is_page_floored():
    model = make_cache_model("sglang", page_size=4)
    cached(model, range(16))
    assert cached(model, [0, 1, 2, 3, 4, 5, 99, 7, 8]) == [4]


def test_token_granularity_by_default():
    model = make_cache_model("sglang")
    cached(model, range(16))
    assert cached(model, [0, 1, 2, 3, 4, 5, 99]) == [6]


def test_outputs_are_inserted():
    model = make_cache_model("sglang")
    model.process(CacheQuery(tokens=[1, 2, 3], output_tokens=[4, 5, 6]))
    assert cached(model, [1, 2, 3, 4, 5, 6, 7]) == [5]  # the last output token is not cached


def test_cache_salt_namespaces_the_tree():
    model = make_cache_model("sglang")
    model.process(CacheQuery(tokens=[1, 2, 3, 4], cache_salt="a"))
    other = model.process(CacheQuery(tokens=[1, 2, 3, 4], cache_salt="b"))
    same = model.process(CacheQuery(tokens=[1, 2, 3, 4], cache_salt="a"))
    assert (other.cached_tokens, same.cached_tokens) == (0, 3)


def test_lru_evicts_whole_leaves_least_recent_first():
    # Capacity 12; a, b, c, d are 4-token leaves; a second a splits a into [1, 2, 3] + [4].
    model = make_cache_model("sglang", capacity_tokens=12)
    a, b, c, d = [1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [13, 14, 15, 16]
    results = [model.process(CacheQuery(tokens=p)) for p in (a, b, a, c, d, a, b)]
    # d evicts b; the third a evicts only the 1-token leaf [4] split off a; b evicts c.
    assert [r.cached_tokens for r in results] == [0, 0, 3, 0, 0, 3, 0]
    assert results[-1].miss_reason == "evicted"


def test_eviction_frees_a_leaf_then_its_parent():
    # Shared head [1, 2] with two branches; evicting both branches makes the head a leaf.
    model = make_cache_model("sglang", capacity_tokens=8)
    cached(model, [1, 2, 3, 4], [1, 2, 5, 6])
    result = model.process(CacheQuery(tokens=[9, 9, 9, 9, 9, 9, 9, 9]))
    assert result.cached_tokens == 0
    follow = model.process(CacheQuery(tokens=[1, 2, 3, 4, 7]))
    assert (follow.cached_tokens, follow.miss_reason, follow.longest_available) == (
        0,
        "evicted",
        4,
    )


def test_request_larger_than_the_cache_is_rejected():
    model = make_cache_model("sglang", capacity_tokens=4)
    with pytest.raises(InvalidQuery, match="needs 5 KV tokens"):
        cached(model, range(5))


def test_trace_blocks_cap_at_input_length_minus_one():
    model = make_cache_model("sglang", page_size=16)
    query = CacheQuery(block_hashes=[1, 2, 3], block_tokens=64, input_length=150)
    first, second = model.process(query), model.process(query)
    assert (first.cached_tokens, second.cached_tokens) == (0, 144)
    branch = model.process(CacheQuery(block_hashes=[1, 2, 7], block_tokens=64, input_length=130))
    assert branch.cached_tokens == 128


def test_trace_blocks_need_a_dividing_page_size():
    model = make_cache_model("sglang", page_size=48)
    with pytest.raises(InvalidQuery, match="does not divide"):
        model.process(CacheQuery(block_hashes=[1], block_tokens=64, input_length=64))


class ReferenceRadix:
    """SGLang's radix rules on other structures: nodes are full-prefix tuples in a dict."""

    def __init__(self, page, capacity):
        self.page, self.capacity = page, capacity
        self.nodes = {(): [0, 0]}  # full prefix -> [last access tick, creation serial]
        self.clock = self.serial = 0

    def parent(self, key):
        return max((k for k in self.nodes if len(k) < len(key) and key[: len(k)] == k), key=len)

    def children(self, key):
        return [k for k in self.nodes if len(k) > len(key) and self.parent(k) == key]

    def size(self, key):
        return len(key) - len(self.parent(key))

    def add(self, key, tick):
        self.serial += 1
        self.nodes[key] = [tick, self.serial]

    def walk(self, key):
        """Match ``key``: touch nodes on the way, split where it ends inside a node."""
        self.clock += 1
        node = ()
        self.nodes[node][0] = self.clock
        while True:
            start = len(node)
            first = key[start : start + self.page]
            below = [
                c for c in self.children(node) if first and c[start : start + self.page] == first
            ]
            if not below:
                return node
            child = below[0]
            common = len(node)
            while common < min(len(child), len(key)) and child[common] == key[common]:
                common += 1
            common = len(node) + (common - len(node)) // self.page * self.page
            self.nodes[child][0] = self.clock
            if common < len(child):
                self.add(child[:common], self.clock)
                return child[:common]
            node = child

    def evict(self, tokens, protect):
        freed = 0
        while freed < tokens:
            leaves = [k for k in self.nodes if k and k != protect and not self.children(k)]
            if not leaves:
                return
            victim = min(leaves, key=lambda k: self.nodes[k])
            freed += self.size(victim)
            del self.nodes[victim]

    def step(self, prompt, output):
        page = self.page
        limit = (len(prompt) - 1) // page * page
        node = self.walk(tuple(prompt[:limit]))
        hit = len(node)
        if self.capacity is not None:
            tree = sum(self.size(k) for k in self.nodes if k)
            self.evict(tree + len(prompt) - hit + max(len(output) - 1, 0) - self.capacity, node)
        sequence = tuple(prompt + output[:-1])
        sequence = sequence[: len(sequence) // page * page]
        end = self.walk(sequence)
        if len(end) < len(sequence):
            self.add(sequence, self.clock)
        return hit


tokens = st.integers(0, 3)


@st.composite
def traces(draw):
    pool = draw(st.lists(st.lists(tokens, max_size=30), min_size=1, max_size=4))
    requests, previous = [], []
    for _ in range(draw(st.integers(1, 25))):
        base = draw(st.sampled_from([*pool, previous]))
        prompt = base[: draw(st.integers(0, len(base)))] + draw(st.lists(tokens, max_size=10))
        prompt = prompt or [0]
        output = draw(st.lists(tokens, max_size=6))
        requests.append((prompt, output))
        previous = prompt + output
    return requests


@settings(max_examples=150, deadline=None)
@given(traces(), st.sampled_from([1, 2, 4]), st.one_of(st.none(), st.integers(0, 30)))
def test_matches_an_independent_implementation(trace, page_size, spare):
    needed = max(len(p) + max(len(o) - 1, 0) for p, o in trace)
    capacity = None if spare is None else needed + spare
    reference = ReferenceRadix(page_size, capacity)
    ceiling = ReferenceRadix(page_size, None)
    model = make_cache_model("sglang", page_size=page_size, capacity_tokens=capacity)
    for prompt, output in trace:
        expected = reference.step(prompt, output)
        result = model.process(CacheQuery(tokens=prompt, output_tokens=output))
        assert result.cached_tokens == expected
        assert result.longest_available == ceiling.step(prompt, output)
