"""Where two sequences (token ids or text) stop being equal."""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

S = TypeVar("S", bound=Sequence[object])
T = TypeVar("T")


def common_prefix_length(a: Sequence[object], b: Sequence[object], likely: int = 0) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (same sequence type).

    Compares growing slices (C speed) until one differs, then bisects inside it, so the
    cost is a few slice comparisons rather than a Python loop over every element.
    ``likely`` is a length the common prefix probably reaches (the next request of a
    conversation repeats nearly all of the previous one): it is tested first, in one
    comparison, and the search goes on from there when it holds.
    """
    n = min(len(a), len(b))
    low = likely if 0 < likely <= n and _same_start(a, b, likely) else 0
    return _agreeing(n, low, lambda start, end: a[start:end] == b[start:end])


def common_suffix_length(a: Sequence[object], b: Sequence[object]) -> int:
    """Length of the longest common suffix of ``a`` and ``b`` (same sequence type), found
    as :func:`common_prefix_length` finds a prefix, with slices counted from the ends (no
    reversed copies, which text makes one character at a time)."""
    n = min(len(a), len(b))
    last_a, last_b = len(a), len(b)
    return _agreeing(
        n,
        0,
        lambda start, end: a[last_a - end : last_a - start] == b[last_b - end : last_b - start],
    )


def _agreeing(n: int, low: int, same: Callable[[int, int], bool]) -> int:
    """The largest length up to ``n`` whose elements from ``low`` on all agree, where
    ``same(start, end)`` says whether elements ``start`` to ``end`` do (``low`` do)."""
    step = 64
    while low < n:
        high = min(n, low + step)
        if not same(low, high):
            break
        low, step = high, step * 2
    else:
        return n
    while high - low > 1:
        middle = (low + high) // 2
        if same(low, middle):
            low = middle
        else:
            high = middle
    return low


def _same_start(a: Sequence[object], b: Sequence[object], length: int) -> bool:
    """Whether ``a[:length] == b[:length]``, copying neither bytes nor, of text, ``a``."""
    if isinstance(a, bytes) and isinstance(b, bytes):
        return a.startswith(memoryview(b)[:length])
    if isinstance(a, str) and isinstance(b, str):
        return a.startswith(b[:length])
    return a[:length] == b[:length]


def same_items(a: Sequence[object], b: Sequence[object]) -> bool:
    """Whether ``a`` and ``b`` hold the very same objects in the same order (C speed)."""
    return len(a) == len(b) and all(map(operator.is_, a, b))


class SameItemsMemo(Generic[S, T]):
    """``compute(items)``, reused while each call passes the very same objects as the last.

    The log reader shares a repeated value's objects between requests (a tool list on every
    line), so a memo keyed by the value's serialisation can skip serialising it again.
    The last items are kept alive, so their identities cannot be reused by other objects.
    """

    def __init__(self, compute: Callable[[S], T]) -> None:
        self._compute = compute
        self._items: S | None = None
        self._value: T

    def __call__(self, items: S) -> T:
        if self._items is None or not same_items(items, self._items):
            self._items, self._value = items, self._compute(items)
        return self._value
