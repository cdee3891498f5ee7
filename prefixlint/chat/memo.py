"""Token ids of rendered prompts, each stretch of text between special tokens encoded once.

A BPE tokenizer cuts its input at special tokens before anything else (tiktoken, and Hugging
Face tokenizers for added tokens), so ``encode(a + "<|im_end|>" + b)`` is ``encode(a)``,
the special id, then ``encode(b)``. Successive requests of a conversation repeat almost all
of their segments (the system turn, every earlier message), so remembering each segment's ids
makes tokenizing a log cost about as much as tokenizing its distinct text once. A second memo
keeps whole runs of rendered pieces (a message, the system-and-tools turn) that special
tokens delimit, so a repeated message costs one lookup. Both memos are LRUs of ``cache_size``
entries, so memory stays bounded on a long stream.

NFC normalisation (the default Qwen tokenizer) is applied per segment, as Hugging Face
tokenizers do after splitting off added tokens.

A long segment seen for the first time is encoded line by line through a third memo, for
the Qwen pre-tokenizer: it never joins a line break to a following printable ASCII
character other than a space (see :data:`LINE_CUT`), and NFC never composes across one,
so the lines' ids end to end are the segment's. The lines a segment shares at its start and
at its end with the latest one that opened with the same line are taken from that one's ids
as two slices, so only the lines between are cut and looked up: a system prompt stamped with
the request time costs the encoding of its one new line and about as many steps.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate, chain

from prefixlint.lru import LRU
from prefixlint.sequences import common_prefix_length, common_suffix_length
from prefixlint.tokenizers import QWEN_PATTERN, TiktokenTokenizer, Tokenizer

CONTINUATION = bytes(range(0x80, 0xC0))  # UTF-8 bytes that do not start a character
# Where a Qwen pre-token always ends: after a line break, before a printable ASCII character
# other than a space (no alternative of QWEN_PATTERN carries a line break into such a one).
LINE_CUT = re.compile(r"(?<=\n)(?=[!-~])")
CHUNKED_CHARS = 512  # segments at least this long are encoded line by line
PREVIOUS_SEGMENTS = 64  # segments encoded by lines kept for the next one to share lines with


@dataclass(frozen=True)
class Segment:
    """The ids of one stretch of ordinary text and where each token starts in it.

    ``starts`` count characters of the text the tokenizer saw (NFC for ``qwen``);
    ``normalized`` says that text differs from the segment as rendered.
    """

    ids: tuple[int, ...]
    starts: tuple[int, ...]
    normalized: bool
    length: int  # characters of the text the tokenizer saw


@dataclass(frozen=True)
class LineEncoding:
    """A segment encoded line by line, none of its lines changed by normalisation: its text,
    ids, and where each line ends in characters and in tokens."""

    text: str
    segment: Segment
    char_ends: list[int]
    token_ends: list[int]


def shared_lines(previous: LineEncoding, text: str) -> tuple[int, int]:
    """``(head, first)``: the first ``head`` lines of ``previous`` start ``text`` too, and its
    lines from ``first`` on end it, the two parts overlapping in neither text.

    A line that ends before the common prefix ends is cut there in both texts (a cut depends
    on the characters on either side); so is one that starts after the common suffix starts
    (the first line aside: the start of a text is no cut).
    """
    ends = previous.char_ends
    head = bisect_left(ends, common_prefix_length(previous.text, text))
    suffix = common_suffix_length(previous.text, text)
    shift = len(previous.text) - len(text)
    cut = ends[head - 1] if head else 0
    # The line before the first of the end: where the suffix starts or later, at the head's
    # last line or later, and where the head ends in ``text`` or later.
    before = max(
        bisect_right(ends, len(previous.text) - suffix), head - 1, bisect_left(ends, cut + shift)
    )
    return head, min(before + 1, len(ends))


def _shifted(values: Sequence[int], shift: int) -> Iterable[int]:
    return map(shift.__add__, values) if shift else values


class SegmentEncoder:
    """Encodes rendered prompts through bounded memos of token ids.

    Two memos: one per segment (ordinary text between special tokens), and one per run of
    rendered pieces that a special token closes or opens on both sides, so that a message
    seen before costs one lookup.
    """

    def __init__(self, tokenizer: Tokenizer, *, cache_size: int = 4096) -> None:
        self.tokenizer = tokenizer
        self.hits = 0
        self.misses = 0
        self._segments: LRU[str, Segment] = LRU(cache_size)
        self._runs: LRU[tuple[str, ...], tuple[tuple[int, ...], tuple[int, ...]]] = LRU(cache_size)
        self._lines: LRU[str, Segment] = LRU(16 * cache_size)
        # The latest segment encoded by lines, by its first line (a system turn, a tool's
        # output): the next one opening alike likely repeats most of its lines.
        self._previous: LRU[str, LineEncoding] = LRU(PREVIOUS_SEGMENTS)
        self._lengths: dict[int, int] = {}
        # One int object per token id, shared by every remembered sequence: joining and
        # comparing sequences then touches a few hot objects instead of scattered copies.
        self._ints: dict[int, int] = {}
        specials = dict(getattr(tokenizer, "special_tokens", None) or {})
        self._special_ids = {text: self._ints.setdefault(id, id) for text, id in specials.items()}
        self._splitter = None
        self._edges: tuple[str, ...] = ()
        if specials and isinstance(tokenizer, TiktokenTokenizer):
            alternatives = "|".join(map(re.escape, sorted(specials, key=len, reverse=True)))
            self._splitter = re.compile(f"({alternatives})")
            if all(not any(t[0] in other[1:] for other in specials) for t in specials):
                self._edges = tuple(specials)  # no special token can overlap another
        self._line_cuts = isinstance(tokenizer, TiktokenTokenizer) and (
            tokenizer.pattern == QWEN_PATTERN
        )

    def __len__(self) -> int:
        """How many segments are remembered."""
        return len(self._segments)

    def split(self, text: str) -> list[str]:
        """``text`` as alternating ordinary text and special tokens (odd indexes)."""
        return self._splitter.split(text) if self._splitter else [text]

    def segment(self, text: str) -> Segment:
        """The (remembered) encoding of one stretch of text without special tokens."""
        found = self._segments.recall(text)
        if found is not None:
            self.hits += 1
            return found
        self.misses += 1
        if self._line_cuts and len(text) >= CHUNKED_CHARS:
            found = self._encode_lines(text)
        else:
            found = self._encode_segment(text)
        self._segments.remember(text, found)
        return found

    def _encode_lines(self, text: str) -> Segment:
        """:meth:`_encode_segment` of ``text`` assembled from its lines' (remembered)
        encodings, cut at :data:`LINE_CUT`; the lines it shares at its start and at its end
        with the latest segment encoded so that had the same first line (:func:`shared_lines`)
        come from that one's ids, so only the lines between them are cut and looked up."""
        opening = LINE_CUT.search(text)
        key = text[: opening.start()] if opening else text
        previous = self._previous.recall(key)
        head, first = shared_lines(previous, text) if previous else (0, 0)
        ids: list[int] = []
        starts: list[int] = []
        char_ends: list[int] = []
        token_ends: list[int] = []
        base = 0
        if previous is not None and head:
            cut = previous.token_ends[head - 1]
            ids += previous.segment.ids[:cut]
            starts += previous.segment.starts[:cut]
            char_ends += previous.char_ends[:head]
            token_ends += previous.token_ends[:head]
            base = char_ends[-1]
        tail = len(previous.char_ends) - first if previous is not None else 0
        shift = len(previous.text) - len(text) if previous is not None else 0
        end = previous.char_ends[first - 1] - shift if previous is not None and tail else len(text)
        normalized = False
        memo = self._lines
        for line in LINE_CUT.split(text[base:end]) if end > base else ():
            found = memo.recall(line)
            if found is None:
                found = self._encode_segment(line)
                memo.remember(line, found)
            ids += found.ids
            starts += map(base.__add__, found.starts) if base else found.starts
            normalized = normalized or found.normalized
            base += found.length
            char_ends.append(len(line) + (char_ends[-1] if char_ends else 0))
            token_ends.append(len(ids))
        if previous is not None and tail:
            cut = previous.token_ends[first - 1]
            char = previous.char_ends[first - 1]
            ids += previous.segment.ids[cut:]
            starts += _shifted(previous.segment.starts[cut:], base - char)
            char_ends += _shifted(previous.char_ends[first:], -shift)
            token_ends += _shifted(
                previous.token_ends[first:], len(ids) - len(previous.segment.ids)
            )
            base += previous.segment.length - char
        segment = Segment(tuple(ids), tuple(starts), normalized, base)
        if not normalized:  # a normalized text's characters are not the tokenizer's
            self._previous.remember(key, LineEncoding(text, segment, char_ends, token_ends))
        return segment

    def encode_pieces(self, texts: Sequence[str]) -> tuple[tuple[int, ...], list[int]]:
        """Token ids of ``"".join(texts)`` and the index of the first token of each text.

        Pieces are grouped into runs cut where a piece ends or the next one starts with a
        special token; BPE never merges across one, so each run is encoded (once) alone.
        Pieces that make one run (a rendered turn usually does) get the remembered ids of
        that run themselves, not a copy.
        """
        runs: list[tuple[int, ...]] = []
        token_at: list[int] = []
        base = run_start = 0
        for index, text in enumerate(texts):
            last = index == len(texts) - 1
            if last or self.cuts_after(text) or self.cuts_before(texts[index + 1]):
                ids, starts = self._run(tuple(texts[run_start : index + 1]))
                token_at.extend([base + start for start in starts])
                runs.append(ids)
                base += len(ids)
                run_start = index + 1
        if len(runs) == 1:
            return runs[0], token_at
        return tuple(chain.from_iterable(runs)), token_at

    def cuts_before(self, text: str) -> bool:
        """Whether ``text`` starts with a special token, so no token spans its start."""
        return text.startswith(self._edges)

    def cuts_after(self, text: str) -> bool:
        """Whether ``text`` ends with a special token, so no token spans its end."""
        return text.endswith(self._edges)

    def _run(self, texts: tuple[str, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        found = self._runs.recall(texts)
        if found is not None:
            self.hits += 1
        else:
            positions = [0, *accumulate(map(len, texts))][:-1]
            ids, starts = self.encode("".join(texts), positions)
            found = (tuple(ids), tuple(starts))
            self._runs.remember(texts, found)
        return found

    def _encode_segment(self, text: str) -> Segment:
        tokenizer = self.tokenizer
        encoded = tokenizer.encode(text)
        ids = tuple(map(self._ints.setdefault, encoded, encoded))
        if isinstance(tokenizer, TiktokenTokenizer):
            seen = tokenizer._prepare(text)
            return Segment(ids, tuple(self._starts(tokenizer, seen, ids)), seen != text, len(seen))
        starts = [start for start, _ in tokenizer.offsets(text)]
        return Segment(ids, tuple(starts), False, len(text))

    def _starts(self, tokenizer: TiktokenTokenizer, text: str, ids: Sequence[int]) -> list[int]:
        """Character offset in ``text`` where each token starts (a token that starts inside
        a multi-byte character starts at that character)."""
        lengths = self._lengths
        unknown = list(set(ids).difference(lengths))
        if unknown:
            lengths.update(zip(unknown, map(len, tokenizer.token_bytes(unknown)), strict=True))
        sizes = list(map(lengths.__getitem__, ids))
        if text.isascii():
            return [0, *accumulate(sizes)][:-1]
        data = text.encode("utf-8")
        starts = []
        position = characters = 0
        for size in sizes:
            inside = position < len(data) and data[position] & 0xC0 == 0x80
            starts.append(characters - inside)
            characters += len(data[position : position + size].translate(None, CONTINUATION))
            position += size
        return starts

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
