"""Multimodal items as vLLM's server feeds them to a Qwen-VL model, and their cache identity.

vLLM (``vllm/multimodal/processing.py`` prompt replacements; Qwen2-VL / Qwen3-VL processors
in ``vllm/model_executor/models/qwen2_vl.py``, vLLM v1 engine) replaces each item's single
``<|image_pad|>`` token, which the chat template writes between ``<|vision_start|>`` and
``<|vision_end|>``, by as many pad tokens as the item has embeddings, and records where they
lie (``PlaceholderRange(offset, length)``). ``vllm/v1/core/kv_cache_utils.py``
``_gen_mm_extra_hash_keys`` then adds ``(mm_feature.identifier, offset - start_token_idx)``
(earlier v1 releases: the item hash alone) to the extra keys of every block that overlaps
the item, so a block holding an image's pad tokens is cached
per image. The number of pad tokens depends on the image's size, which a log rarely
holds: it is a fixed count per item (``image_tokens``). vLLM hashes the item's bytes (or
takes its ``uuid``); here its identity is a digest of the ``uuid``, else of its URL or
data, so the same URL is the same image. Every non-text part is rendered with the image
placeholder (:func:`prefixlint.chat.messages.part_text`), audio included.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import replace

from prefixlint.chat.errors import TemplateError
from prefixlint.chat.messages import TEXT_PART_TYPES
from prefixlint.request import ChatRequest, Component, MediaItem, Rendered

IMAGE_TOKENS = 64
"""Default pad tokens per item (a 448x448 image in Qwen2-VL: 16x16 patches merged 2x2)."""
IMAGE_PAD = "<|image_pad|>"


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


def media_identities(request: ChatRequest) -> list[str]:
    """The identity of each media part of ``request``, in the order the template writes them."""
    return [
        part_identity(part)
        for message in request.messages
        for part in _media_parts(message.get("content"))
    ]


def expand_media(
    rendered: Rendered, identities: list[str], pad_id: int, image_tokens: int
) -> Rendered:
    """``rendered`` with each pad token repeated ``image_tokens`` times, as vLLM's processor
    does, and the items' token ranges in ``media``; components shift with the tokens.

    Items whose placeholder is not in the prompt (cut by ``continue_final_message``) are
    dropped; a pad token that no media part wrote is an error, as in vLLM."""
    positions = [i for i, token in enumerate(rendered.tokens) if token == pad_id]
    if not positions:
        return rendered
    if len(positions) > len(identities):
        raise TemplateError(
            f"the prompt holds {len(positions)} {IMAGE_PAD} tokens for {len(identities)} "
            "media parts"
        )
    char_at = list(_find_all(rendered.text, IMAGE_PAD))
    extra, extra_chars = image_tokens - 1, (image_tokens - 1) * len(IMAGE_PAD)
    tokens: list[int] = []
    text: list[str] = []
    media: list[MediaItem] = []
    done = done_char = 0
    for number, (position, char) in enumerate(zip(positions, char_at, strict=False)):
        tokens += rendered.tokens[done:position]
        text.append(rendered.text[done_char:char])
        media.append(MediaItem(len(tokens), image_tokens, identities[number]))
        tokens += [pad_id] * image_tokens
        text.append(IMAGE_PAD * image_tokens)
        done, done_char = position + 1, char + len(IMAGE_PAD)
    tokens += rendered.tokens[done:]
    text.append(rendered.text[done_char:])
    components = tuple(
        _shifted(c, positions, char_at, extra, extra_chars) for c in rendered.components
    )
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
    component: Component, positions: list[int], chars: list[int], extra: int, extra_chars: int
) -> Component:
    def token(index: int) -> int:
        return index + extra * sum(1 for p in positions if p < index)

    def char(index: int) -> int:
        return index + extra_chars * sum(1 for c in chars if c < index)

    return Component(
        component.name,
        char(component.char_start),
        char(component.char_end),
        token(component.token_start),
        token(component.token_end),
    )
