"""Show token boundaries, and where two texts stop sharing characters and tokens.

A prefix cache reuses tokens, not characters: two prompts that differ at character 120 may
already differ from the token that starts at character 117, because BPE merges across the
boundary (``"\\n\\n"`` is one token, ``"\\n"`` another). This module measures both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rich.markup import escape

from prefixlint.lines import LineIndex
from prefixlint.sequences import common_prefix_length
from prefixlint.tokenizers import Tokenizer

_VISIBLE = {"\n": "↵\n", "\r": "␍", "\t": "→", " ": "·"}
_STYLES = ("black on cyan", "black on yellow")
_ESCAPES = re.compile(r"\\(?:u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(.))", re.DOTALL)
_SIMPLE_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", "0": "\0"}


def unescape(text: str) -> str:
    """Turn ``\\n``, ``\\r``, ``\\t``, ``\\\\``, ``\\xNN`` and ``\\uNNNN`` into characters."""

    def replace(match: re.Match[str]) -> str:
        if match[1] or match[2]:
            return chr(int(match[1] or match[2], 16))
        return _SIMPLE_ESCAPES.get(match[3], match.group(0))

    return _ESCAPES.sub(replace, text)


def visible(text: str, keep_breaks: bool = True) -> str:
    """``text`` with spaces, tabs and line breaks drawn as visible marks.

    With ``keep_breaks`` a line break stays after its mark, so the text keeps its lines.
    """
    marks = _VISIBLE if keep_breaks else {**_VISIBLE, "\n": "↵"}
    return "".join(marks.get(char, char) for char in text)


def model_text(text: str, tokenizer: Tokenizer) -> str:
    """The text the model sees (a normalising tokenizer, like Qwen's, applies NFC first)."""
    decoded = tokenizer.decode(tokenizer.encode(text))
    return decoded if decoded != text else text


def token_pieces(text: str, tokenizer: Tokenizer) -> list[str]:
    """The substrings of ``text`` that its tokens cover, in order."""
    return [text[start:end] for start, end in tokenizer.offsets(text)]


def render_tokens(pieces: list[str], color: bool) -> str:
    """Rich markup showing each token; alternating colours, or ``|`` between tokens."""
    if color:
        return "".join(
            f"[{_STYLES[i % 2]}]{escape(visible(piece))}[/]" for i, piece in enumerate(pieces)
        )
    return "|".join(escape(visible(piece)) for piece in pieces)


@dataclass(frozen=True)
class Divergence:
    """Where two texts, and their token sequences, first differ."""

    char_offset: int | None
    line: int | None
    column: int | None
    token_index: int | None
    tokens_a: int
    tokens_b: int
    block_size: int

    @property
    def shared_tokens(self) -> int:
        return self.token_index if self.token_index is not None else self.tokens_a

    @property
    def block_index(self) -> int | None:
        return None if self.token_index is None else self.token_index // self.block_size

    @property
    def reusable_block_tokens(self) -> int:
        """Shared tokens in full blocks: what a block-granular cache (vLLM) can reuse."""
        return self.shared_tokens // self.block_size * self.block_size


def divergence(a: str, b: str, tokenizer: Tokenizer, block_size: int) -> Divergence:
    """Compare ``a`` and ``b`` character by character and token by token."""
    ids_a, ids_b = tokenizer.encode(a), tokenizer.encode(b)
    char = common_prefix_length(a, b)
    token = common_prefix_length(ids_a, ids_b)
    char_offset = None if a == b else char
    line = column = None
    if char_offset is not None:
        line, column = LineIndex(a if char < len(a) else b).position(char)
    token_index = None if ids_a == ids_b else token
    return Divergence(char_offset, line, column, token_index, len(ids_a), len(ids_b), block_size)


def window(text: str, offset: int, width: int = 12) -> str:
    """A short escaped excerpt of ``text`` around ``offset``, with ``⟦`` at the offset."""
    before = text[max(0, offset - width) : offset]
    after = text[offset : offset + width]
    return repr(before)[1:-1] + "⟦" + repr(after)[1:-1]
