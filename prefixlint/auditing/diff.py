"""Where two sequences (token ids or text) stop being equal, and a short view of that place."""

from __future__ import annotations

from collections.abc import Sequence

WINDOW_CHARS = 24


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


_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def escape(text: str) -> str:
    """``text`` on one line: newlines, tabs and invisible characters (NBSP, BOM, ...) escaped."""
    return "".join(
        _NAMED_ESCAPES.get(char)
        or (char if char.isprintable() and char != "\u00a0" else f"\\u{ord(char):04x}")
        for char in text
    )


def window(text: str, offset: int, chars: int = WINDOW_CHARS) -> str:
    """An escaped view of ``text`` around ``offset``, the offset marked with ``⟦⟧``."""
    before = text[max(0, offset - chars) : offset]
    after = text[offset : offset + chars]
    lead = "…" if offset - chars > 0 else ""
    tail = "…" if offset + chars < len(text) else ""
    return f"{lead}{escape(before)}⟦{escape(after)}⟧{tail}"
