"""Where two sequences (token ids or text) stop being equal."""

from __future__ import annotations

from collections.abc import Sequence


def common_prefix_length(a: Sequence, b: Sequence) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (same sequence type).

    Compares growing slices (C speed) until one differs, then bisects inside it, so the
    cost is a few slice comparisons rather than a Python loop over every element.
    """
    n = min(len(a), len(b))
    low, step = 0, 64
    while low < n:
        high = min(n, low + step)
        if a[low:high] != b[low:high]:
            break
        low, step = high, step * 2
    else:
        return n
    while high - low > 1:
        middle = (low + high) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle
    return low
