"""Multimodal items as vLLM's server feeds them to a Qwen-VL model, and their cache identity.

vLLM (``vllm/multimodal/processing.py`` prompt replacements; Qwen2-VL / Qwen3-VL processors
in ``vllm/model_executor/models/qwen2_vl.py``, vLLM v1 engine) replaces each item's single
``<|image_pad|>`` token, which the chat template writes between ``<|vision_start|>`` and
``<|vision_end|>``, by as many pad tokens as the item has embeddings, and records where they
lie (``PlaceholderRange(offset, length)``). ``vllm/v1/core/kv_cache_utils.py``
``_gen_mm_extra_hash_keys`` then adds ``(mm_feature.identifier, offset - start_token_idx)``
(earlier v1 releases: the item hash alone) to the extra keys of every block that overlaps
the item, so a block holding an image's pad tokens is cached per image.

The number of pad tokens depends on the image's size. When the part carries the image inline
(a base64 ``data:`` URL or source) its header gives the size (:mod:`prefixlint.chat.image_size`)
and the count is the Qwen-VL image processor's (``smart_resize`` in transformers'
``models/qwen2_vl/image_processing_qwen2_vl.py``, which vLLM calls through the model's HF
processor): the size rounded to multiples of ``patch_size * merge_size`` within the pixel
bounds, one token per merged patch. Otherwise (a remote URL, a format without a known
header) it is a fixed count per item (``image_tokens``). vLLM hashes the item's bytes (or
takes its ``uuid``); here its identity is a digest of the ``uuid``, else of its URL or data,
so the same URL is the same image. Every non-text part is rendered with the image
placeholder (:func:`prefixlint.chat.messages.part_text`).

The modelled processors take images (and videos) only: a Qwen-VL model declares no audio
limit, so vLLM's ``validate_num_items`` (``BaseProcessingInfo``, ``vllm/multimodal/processing``)
refuses a request with an audio part, "At most 0 audio(s) may be provided in one prompt.", and
the server answers 400. :func:`media_items` refuses it too (the audit skips and counts it).
"""

from __future__ import annotations

import hashlib
import json
import math
from bisect import bisect_left
from collections.abc import Iterator
from dataclasses import dataclass, replace

from prefixlint.chat.errors import TemplateError
from prefixlint.chat.image_size import part_image_size
from prefixlint.chat.messages import TEXT_PART_TYPES
from prefixlint.request import ChatRequest, Component, MediaItem, Rendered

IMAGE_TOKENS = 64
"""Default pad tokens per item of unknown size (a 224x224 image in Qwen2.5-VL: 16x16 patches
of 14 pixels, merged 2x2)."""
IMAGE_PAD = "<|image_pad|>"


@dataclass(frozen=True)
class VisionProcessor:
    """A Qwen-VL image processor's geometry, as its released ``preprocessor_config.json``."""

    patch_size: int
    merge_size: int
    min_pixels: int
    max_pixels: int

    def image_tokens(self, width: int, height: int) -> int:
        """Pad tokens for an image of this size: transformers' ``smart_resize``, then one token
        per ``merge_size`` x ``merge_size`` patches."""
        factor = self.patch_size * self.merge_size
        h_bar = round(height / factor) * factor
        w_bar = round(width / factor) * factor
        if h_bar * w_bar > self.max_pixels:
            beta = math.sqrt(height * width / self.max_pixels)
            h_bar = max(factor, math.floor(height / beta / factor) * factor)
            w_bar = max(factor, math.floor(width / beta / factor) * factor)
        elif h_bar * w_bar < self.min_pixels:
            beta = math.sqrt(self.min_pixels / (height * width))
            h_bar = math.ceil(height * beta / factor) * factor
            w_bar = math.ceil(width * beta / factor) * factor
        return (h_bar // factor) * (w_bar // factor)


VISION_PROCESSORS = {
    # Qwen3-VL: patch 16, merge 2, size {"shortest_edge": 65536, "longest_edge": 16777216}.
    "qwen3-vl": VisionProcessor(16, 2, 65_536, 16_777_216),
    # Qwen2-VL and Qwen2.5-VL: patch 14, merge 2, min_pixels 3136, max_pixels 12845056.
    "qwen2.5-vl": VisionProcessor(14, 2, 3_136, 12_845_056),
}
DEFAULT_VISION = "qwen3-vl"


def part_identity(part: dict[str, object]) -> str:
    """A digest naming a media part: its ``uuid``, else its URL or data, else the part."""
    kind = part.get("type")
    payload = part.get(kind) if isinstance(kind, str) else None
    if isinstance(payload, dict):
        found = payload.get("uuid") or payload.get("url") or payload.get("data")
    else:
        found = part.get("uuid") or payload
    if not isinstance(found, str):
        found = json.dumps(part, sort_keys=True, default=str)
    return hashlib.sha256(found.encode()).hexdigest()


def _media_parts(content: object) -> Iterator[dict[str, object]]:
    parts = content if isinstance(content, list) else [content]
    for part in parts:
        if isinstance(part, dict) and "type" in part and part["type"] not in TEXT_PART_TYPES:
            yield part


def part_tokens(part: dict[str, object], processor: VisionProcessor, default: int) -> int:
    """The pad tokens a media part becomes: from its inline image's size, else ``default``."""
    size = part_image_size(part)
    return default if size is None else processor.image_tokens(*size)


# Content part types that vLLM's chat parser reads as audio (``vllm/entrypoints/chat_utils.py``),
# and Anthropic's audio blocks.
AUDIO_PART_TYPES = frozenset({"input_audio", "audio_url", "audio"})


def media_items(
    request: ChatRequest, processor: VisionProcessor, default: int
) -> list[tuple[str, int]]:
    """The identity and pad-token count of each media part of ``request``, in the order the
    template writes them; :class:`TemplateError` for an audio part, which vLLM refuses for a
    model whose processor takes no audio."""
    parts = [part for message in request.messages for part in _media_parts(message.get("content"))]
    audio = sum(part["type"] in AUDIO_PART_TYPES for part in parts)
    if audio:
        raise TemplateError(
            f"{audio} audio part(s): vLLM refuses them for a Qwen-VL model, which takes no audio"
            " (400 'At most 0 audio(s) may be provided in one prompt.')"
        )
    return [(part_identity(part), part_tokens(part, processor, default)) for part in parts]


def expand_media(rendered: Rendered, items: list[tuple[str, int]], pad_id: int) -> Rendered:
    """``rendered`` with each item's pad token repeated as many times as the item has tokens,
    as vLLM's processor does, and the items' token ranges in ``media``; components shift
    with the tokens.

    Items whose placeholder is not in the prompt (cut by ``continue_final_message``) are
    dropped; a pad token that no media part wrote is an error, as in vLLM."""
    positions = [i for i, token in enumerate(rendered.tokens) if token == pad_id]
    if not positions:
        return rendered
    if len(positions) > len(items):
        raise TemplateError(
            f"the prompt holds {len(positions)} {IMAGE_PAD} tokens for {len(items)} media parts"
        )
    char_at = list(_find_all(rendered.text, IMAGE_PAD))
    tokens: list[int] = []
    text: list[str] = []
    media: list[MediaItem] = []
    added = [0]  # tokens added by the items before each position, and after the last
    done = done_char = 0
    for position, char, (identity, count) in zip(positions, char_at, items, strict=False):
        tokens += rendered.tokens[done:position]
        text.append(rendered.text[done_char:char])
        media.append(MediaItem(len(tokens), count, identity))
        tokens += [pad_id] * count
        text.append(IMAGE_PAD * count)
        added.append(added[-1] + count - 1)
        done, done_char = position + 1, char + len(IMAGE_PAD)
    tokens += rendered.tokens[done:]
    text.append(rendered.text[done_char:])
    components = tuple(_shifted(c, positions, char_at, added) for c in rendered.components)
    return replace(
        rendered,
        text="".join(text),
        tokens=tuple(tokens),
        components=components,
        media=tuple(media),
    )


def _find_all(text: str, needle: str) -> Iterator[int]:
    start = text.find(needle)
    while start >= 0:
        yield start
        start = text.find(needle, start + len(needle))


def _shifted(
    component: Component, positions: list[int], chars: list[int], added: list[int]
) -> Component:
    """``component`` moved by the pad tokens (and their text) of the items before its ends."""

    def token(index: int) -> int:
        return index + added[bisect_left(positions, index)]

    def char(index: int) -> int:
        return index + added[bisect_left(chars, index)] * len(IMAGE_PAD)

    return Component(
        component.name,
        char(component.char_start),
        char(component.char_end),
        token(component.token_start),
        token(component.token_end),
    )
