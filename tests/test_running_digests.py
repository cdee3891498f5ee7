"""Prefix digests resumed from earlier states equal digests of the whole prefix."""

from __future__ import annotations

import hashlib

from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.cache.running_digests import RunningDigests


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([0, 1]), st.sampled_from([b"", b"salt"]), st.integers(0, 70)),
        max_size=30,
    ),
    st.binary(min_size=64, max_size=64),
)
def test_digests_equal_hashing_each_prefix_whole(asks, content):
    # Two strings, equal content, different objects: the memo holds only the latest one.
    strings = [content, bytes(bytearray(content))]
    digests = RunningDigests()
    for which, salt, end in asks:
        data = strings[which]
        assert digests.digest(data, salt, end) == hashlib.blake2b(salt + data[:end]).digest()


def test_another_string_of_the_same_length_is_hashed_afresh():
    digests = RunningDigests()
    first, second = b"a" * 32, b"b" * 32
    assert digests.digest(first, b"", 32) == hashlib.blake2b(first).digest()
    assert digests.digest(second, b"", 16) == hashlib.blake2b(second[:16]).digest()
