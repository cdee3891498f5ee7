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


def differing_lines(a: str, b: str) -> tuple[list[str], list[str]]:
    """The lines (``split("\\n")``) of ``a`` and of ``b`` left once the leading lines both
    share, then the trailing lines both share after those, are set aside: what
    ``common_prefix_length`` and ``common_suffix_length`` of the two line lists leave.

    Found from where the texts stop and start agreeing, so only the lines between are
    split: two versions of a long prompt that differ in a line cost that line's work.
    """
    rest_a, rest_b = _after_shared_lines(a, b)
    if rest_a is None or rest_b is None:
        return ([] if rest_a is None else rest_a.split("\n")), (
            [] if rest_b is None else rest_b.split("\n")
        )
    end_a, end_b = _before_shared_lines(rest_a, rest_b)
    return rest_a[:end_a].split("\n") if end_a >= 0 else [], (
        rest_b[:end_b].split("\n") if end_b >= 0 else []
    )


def _after_shared_lines(a: str, b: str) -> tuple[str | None, str | None]:
    """The text of each after the leading lines both share (``None``: no line left).

    The lines before the one where the texts first differ are shared; that line too when
    each text ends there or breaks the line there (it is then the last line of one).
    """
    prefix = common_prefix_length(a, b)
    if _line_ends(a, prefix) and _line_ends(b, prefix):
        return _after(a, prefix), _after(b, prefix)
    start = a.rfind("\n", 0, prefix) + 1
    return a[start:], b[start:]


def _line_ends(text: str, position: int) -> bool:
    return position == len(text) or text[position] == "\n"


def _after(text: str, position: int) -> str | None:
    """The text after the line break at ``position`` (``None`` at the end: no line)."""
    return None if position == len(text) else text[position + 1 :]


def _before_shared_lines(a: str, b: str) -> tuple[int, int]:
    """Where in each text the trailing lines both share begin, less the line break before
    them (-1: the whole text is shared lines); mirrors :func:`_after_shared_lines`."""
    suffix = common_suffix_length(a, b)
    start_a, start_b = len(a) - suffix, len(b) - suffix
    if _line_starts(a, start_a) and _line_starts(b, start_b):
        return start_a - 1, start_b - 1
    end = a.find("\n", start_a)
    if end < 0:
        return len(a), len(b)
    return end, end - start_a + start_b


def _line_starts(text: str, position: int) -> bool:
    return position == 0 or text[position - 1] == "\n"


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
