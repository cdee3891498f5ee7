"""Token ids of rendered prompts, each stretch of text between special tokens encoded once.

A BPE tokenizer cuts its input at special tokens before anything else (tiktoken, and Hugging
Face tokenizers for added tokens), so ``encode(a + "<|im_end|>" + b)`` is ``encode(a)``,
the special id, then ``encode(b)``. Successive requests of a conversation repeat almost all
of their segments (the system turn, every earlier message), so remembering each segment's ids
makes tokenizing a log cost about as much as tokenizing its distinct text once. The memo is
an LRU of ``cache_size`` segments, so memory stays bounded on a long stream.

NFC normalisation (the default Qwen tokenizer) is applied per segment, as Hugging Face
tokenizers do after splitting off added tokens.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

from prefixlint.tokenizers import TiktokenTokenizer, Tokenizer, _char_offsets


@dataclass(frozen=True)
class Segment:
    """The ids of one stretch of ordinary text and where each token starts in it.

    ``starts`` count characters of the text the tokenizer saw (NFC for ``qwen``);
    ``normalized`` says that text differs from the segment as rendered.
    """

    ids: tuple[int, ...]
    starts: tuple[int, ...]
    normalized: bool


class SegmentEncoder:
    """Encodes rendered prompts through a bounded memo of segment token ids."""

    def __init__(self, tokenizer: Tokenizer, *, cache_size: int = 4096) -> None:
        self.tokenizer = tokenizer
        self.cache_size = cache_size
        self.hits = 0
        self.misses = 0
        self._cache: OrderedDict[str, Segment] = OrderedDict()
        specials = dict(getattr(tokenizer, "special_tokens", None) or {})
        self._special_ids = specials
        self._splitter = None
        if specials and isinstance(tokenizer, TiktokenTokenizer):
            alternatives = "|".join(map(re.escape, sorted(specials, key=len, reverse=True)))
            self._splitter = re.compile(f"({alternatives})")

    def __len__(self) -> int:
        """How many segments are remembered."""
        return len(self._cache)

    def split(self, text: str) -> list[str]:
        """``text`` as alternating ordinary text and special tokens (odd indexes)."""
        return self._splitter.split(text) if self._splitter else [text]

    def segment(self, text: str) -> Segment:
        """The (remembered) encoding of one stretch of text without special tokens."""
        found = self._cache.get(text)
        if found is not None:
            self.hits += 1
            self._cache.move_to_end(text)
            return found
        self.misses += 1
        found = self._encode_segment(text)
        self._cache[text] = found
        if len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return found

    def _encode_segment(self, text: str) -> Segment:
        tokenizer = self.tokenizer
        ids = tokenizer.encode(text)
        if isinstance(tokenizer, TiktokenTokenizer):
            seen = tokenizer._prepare(text)
            starts = [start for start, _ in _char_offsets(seen, tokenizer.token_bytes(ids))]
            return Segment(tuple(ids), tuple(starts), seen != text)
        starts = [start for start, _ in tokenizer.offsets(text)]
        return Segment(tuple(ids), tuple(starts), False)

    def encode(self, text: str, boundaries: Sequence[int] = ()) -> tuple[list[int], list[int]]:
        """Token ids of ``text``, and for each boundary (ascending character positions) the
        index of the first token that starts at or after it."""
        tokens: list[int] = []
        token_at: list[int] = []
        pending = 0
        position = 0
        for index, part in enumerate(self.split(text)):
            if not part:
                continue
            end = position + len(part)
            if index % 2:
                while pending < len(boundaries) and boundaries[pending] < end:
                    inside = boundaries[pending] > position
                    token_at.append(len(tokens) + inside)
                    pending += 1
                tokens.append(self._special_ids[part])
            else:
                segment = self.segment(part)
                while pending < len(boundaries) and boundaries[pending] < end:
                    local = boundaries[pending] - position
                    if segment.normalized:
                        local = len(unicodedata.normalize("NFC", part[:local]))
                    token_at.append(len(tokens) + bisect_left(segment.starts, local))
                    pending += 1
                tokens.extend(segment.ids)
            position = end
        token_at.extend([len(tokens)] * (len(boundaries) - pending))
        return tokens, token_at
