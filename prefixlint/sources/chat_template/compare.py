"""Where two renderings part, in characters and in tokens, and how to show it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

from prefixlint.tokenizers import Tokenizer

WINDOW_TOKENS = 6


class TokenWindow(TypedDict):
    """The tokens around a first difference, decoded: those ``before`` it, then each side's."""

    token: int
    before: str
    left: str
    right: str


def char_offset(tokenizer: Tokenizer, text: str, token_index: int) -> int:
    """Where token ``token_index`` of ``text`` starts (``len(text)`` past the last token)."""
    offsets = tokenizer.offsets(text)
    return offsets[token_index][0] if token_index < len(offsets) else len(text)


def _clip(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def token_window(
    tokenizer: Tokenizer, left: Sequence[int], right: Sequence[int], at: int
) -> TokenWindow:
    """Both token sequences around their first difference ``at``, decoded."""
    start = max(0, at - WINDOW_TOKENS)
    return {
        "token": at,
        "before": tokenizer.decode(list(left[start:at])),
        "left": tokenizer.decode(list(left[at : at + WINDOW_TOKENS])),
        "right": tokenizer.decode(list(right[at : at + WINDOW_TOKENS])),
    }


def describe_window(window: TokenWindow, left_name: str, right_name: str) -> str:
    """``after '…' the cached has '…' where the next prompt has '…'`` in one line."""
    return (
        f"token {window['token']} differs after {_clip(window['before'])!r}: "
        f"{left_name} {_clip(window['left'])!r}, {right_name} {_clip(window['right'])!r}"
    )
