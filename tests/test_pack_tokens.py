"""pack_tokens: the bytes of array("q", tokens), which cache models and attribution compare."""

from __future__ import annotations

import struct
from array import array

import pytest
from hypothesis import given
from hypothesis import strategies as st

from prefixlint.request import Rendered, pack_tokens

INT64 = st.integers(-(2**63), 2**63 - 1)


@given(st.lists(INT64, max_size=500))
def test_pack_tokens_is_array_q(tokens):
    assert pack_tokens(tokens) == array("q", tokens).tobytes()
    assert pack_tokens(tuple(tokens)) == array("q", tokens).tobytes()


def test_pack_tokens_of_nothing_is_empty():
    assert pack_tokens(()) == b""


def test_pack_tokens_rejects_what_array_rejects():
    for bad in ([2**63], [1.5], ["1"]):
        with pytest.raises((OverflowError, TypeError)):
            array("q", bad)
        with pytest.raises(struct.error):
            pack_tokens(bad)


def test_rendered_packs_its_tokens_when_not_given_them():
    rendered = Rendered("ab", (7, -1, 151643), (), "qwen3")
    assert rendered.packed == array("q", [7, -1, 151643]).tobytes()
