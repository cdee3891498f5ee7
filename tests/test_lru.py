"""The one bounded memo: least recently stored or recalled entries go first."""

from prefixlint.lru import LRU


def test_forgets_the_least_recently_used_beyond_its_size():
    memo = LRU(2)
    memo.remember("a", 1)
    memo.remember("b", 2)
    assert memo.recall("a") == 1  # a is now the most recent
    memo.remember("c", 3)
    assert list(memo) == ["a", "c"]
    memo.remember("a", 4)  # storing again also counts as use
    memo.remember("d", 5)
    assert list(memo) == ["a", "d"] and memo["a"] == 4


def test_counts_hits_and_misses():
    memo = LRU(4)
    memo.remember("x", 1)
    assert (memo.recall("x"), memo.recall("y")) == (1, None)
    assert (memo.hits, memo.misses) == (1, 1)
