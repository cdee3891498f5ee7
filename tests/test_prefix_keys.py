"""The longest-prefix index keys: one per full block, equal exactly where prefixes are, and
the same whether computed whole or extended from an earlier sequence's keys."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.auditing.prefix_keys import block_keys
from prefixlint.sequences import common_prefix_length

units = st.lists(st.integers(0, 2), max_size=40).map(tuple)
blocks = st.sampled_from([1, 2, 3, 16])


@settings(max_examples=500, deadline=None)
@given(units, units, blocks)
def test_keys_agree_exactly_on_shared_full_blocks(a, b, block):
    keys_a, keys_b = block_keys(a, block), block_keys(b, block)
    assert len(keys_a) == len(a) // block
    shared_blocks = common_prefix_length(a, b) // block
    for index in range(min(len(keys_a), len(keys_b))):
        assert (keys_a[index] == keys_b[index]) == (index < shared_blocks)


@settings(max_examples=500, deadline=None)
@given(units, units, blocks, st.integers(0, 50))
def test_extending_known_keys_equals_hashing_whole(a, b, block, claimed):
    known = block_keys(a, block)
    shared = min(claimed, common_prefix_length(a, b))
    assert block_keys(b, block, known, shared) == block_keys(b, block)


def test_block_size_is_part_of_the_key():
    assert block_keys((1, 2), 1)[1] != block_keys((1, 2), 2)[0]
    assert block_keys((7,) * 4, 2) == block_keys((7,) * 4, 2)
    assert block_keys((7,) * 5, 2)[0] != block_keys((7,) * 5, 2)[1]
