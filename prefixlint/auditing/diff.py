"""Where two sequences (token ids or text) stop being equal, and a short view of that place."""

from __future__ import annotations

WINDOW_CHARS = 24


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
