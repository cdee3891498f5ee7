"""The longest-prefix index keys: one per full block, equal exactly where prefixes are, and
the same whether computed whole or extended from an earlier sequence's keys, in whatever
order they are read."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.auditing.prefix_keys import BlockKeys
from prefixlint.sequences import common_prefix_length

units = st.lists(st.integers(0, 2), max_size=40).map(tuple)
blocks = st.sampled_from([1, 2, 3, 16])


@settings(max_examples=500, deadline=None)
@given(units, units, blocks)
def test_keys_agree_exactly_on_shared_full_blocks(a, b, block):
    keys_a, keys_b = BlockKeys(a, block), BlockKeys(b, block)
    assert len(keys_a) == len(a) // block
    shared_blocks = common_prefix_length(a, b) // block
    for index in range(min(len(keys_a), len(keys_b))):
        assert (keys_a[index] == keys_b[index]) == (index < shared_blocks)


@settings(max_examples=500, deadline=None)
@given(units, units, blocks, st.integers(0, 50))
def test_extending_known_keys_equals_hashing_whole(a, b, block, claimed):
    known = BlockKeys(a, block)
    shared = min(claimed, common_prefix_length(a, b))
    assert list(BlockKeys(b, block, known, shared)) == list(BlockKeys(b, block))


def test_block_size_is_part_of_the_key():
    assert BlockKeys((1, 2), 1)[1] != BlockKeys((1, 2), 2)[0]
    assert list(BlockKeys((7,) * 4, 2)) == list(BlockKeys((7,) * 4, 2))
    assert BlockKeys((7,) * 5, 2)[0] != BlockKeys((7,) * 5, 2)[1]


@settings(max_examples=300, deadline=None)
@given(units, blocks, st.lists(st.integers(-45, 45), max_size=8))
def test_keys_read_in_any_order_are_the_keys_read_in_order(a, block, reads):
    lazy, whole = BlockKeys(a, block), list(BlockKeys(a, block))
    for index in reads:
        if -len(whole) <= index < len(whole):
            assert lazy[index] == whole[index]
        else:
            with pytest.raises(IndexError):
                lazy[index]
    assert lazy[1:4] == whole[1:4]
    assert list(lazy) == whole


@settings(max_examples=300, deadline=None)
@given(units, units, blocks, st.integers(0, 10), st.integers(0, 10))
def test_agreeing_counts_the_agreeing_keys_and_lends_true_keys(a, b, block, read_a, read_b):
    lazy_a, lazy_b = BlockKeys(a, block), BlockKeys(b, block)
    if read_a < len(lazy_a):
        lazy_a[read_a]  # some keys worked out already, on either side
    if read_b < len(lazy_b):
        lazy_b[read_b]
    whole_a, whole_b = list(BlockKeys(a, block)), list(BlockKeys(b, block))
    agree = 0
    while agree < min(len(whole_a), len(whole_b)) and whole_a[agree] == whole_b[agree]:
        agree += 1
    if agree == 0:
        return
    for start in range(agree):
        assert lazy_a.agreeing(start, lazy_b, start) == agree - start
    assert list(lazy_a) == whole_a and list(lazy_b) == whole_b
