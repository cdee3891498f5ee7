"""A logged request in one provider-neutral shape, and what rendering it to tokens gives.

Log readers (``prefixlint.sources.logs``) turn each JSONL line into a :class:`ChatRequest`;
``prefixlint.chat`` renders it into a :class:`Rendered` token sequence whose components
(``tools[0]``, ``system``, ``messages[3]``, ...) can be traced back from any token position.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any


def pack_tokens(tokens: Sequence[int]) -> bytes:
    """``tokens`` as native signed 64-bit integers: the bytes of ``array("q", tokens)``.

    ``struct`` converts each id straight to a C integer; ``array`` parses each one as a call
    argument first, about three times the instructions per token.
    """
    return struct.pack(f"{len(tokens)}q", *tokens)


@dataclass(frozen=True)
class Usage:
    """What the provider reported about the prompt; ``None`` means "not reported", not zero."""

    prompt_tokens: int | None = None
    cached_tokens: int | None = None
    cache_write_tokens: int | None = None


@dataclass(frozen=True)
class ChatRequest:
    """One logged request, normalised.

    ``messages`` are OpenAI-chat-shaped dicts (``role``, ``content``, optional ``tool_calls``,
    ``tool_call_id``, ``name``, ``reasoning_content``); a system prompt given outside the
    messages (Anthropic ``system``, Responses ``instructions``) is in ``system``. ``tools``
    keep the schema as logged. ``params`` holds every other request field that can change
    the prefix or the cache routing (``model`` excluded): ``tool_choice``,
    ``reasoning_effort``, ``prompt_cache_key``, ``response_format``, ...
    ``cache_breakpoints`` names the components carrying an Anthropic ``cache_control``
    marker, in prefix order, with their TTL in seconds.
    Mooncake traces carry ``hash_ids`` (one id per block) and no text. ``metadata`` is the
    logged ``metadata`` object (the request body's, else the envelope's): never part of the
    prompt, it can name the session (``--session-key metadata.FIELD``).
    """

    line: int
    format: str
    model: str | None = None
    system: str | None = None
    messages: tuple[dict[str, Any], ...] = ()
    tools: tuple[dict[str, Any], ...] = ()
    params: dict[str, Any] = field(default_factory=dict)
    timestamp: float | None = None
    session_id: str | None = None
    route: str | None = None
    cache_breakpoints: tuple[tuple[str, float], ...] = ()
    usage: Usage | None = None
    hash_ids: tuple[int, ...] | None = None
    input_length: int | None = None
    output_length: int | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Component:
    """A named part of a rendered prompt and where it lies, in characters and in tokens."""

    name: str
    char_start: int
    char_end: int
    token_start: int
    token_end: int


@dataclass(frozen=True)
class MediaItem:
    """A multimodal item's placeholder tokens (``offset``, ``length``) and its identity."""

    offset: int
    length: int
    identity: str


@dataclass(frozen=True)
class Rendered:
    """A request rendered to text and tokens, with its components in prefix order.

    ``packed`` is the tokens as native signed 64-bit integers (:func:`pack_tokens`), for
    comparing and hashing token runs at C speed. A renderer that has them at hand passes
    them as ``known_packed``; otherwise they are computed on first use. ``media`` are the
    multimodal items whose placeholder tokens the prompt holds (vLLM engine only).
    """

    text: str
    tokens: tuple[int, ...]
    components: tuple[Component, ...]
    template: str
    known_packed: InitVar[bytes | None] = None
    _packed: bytes | None = field(default=None, init=False, repr=False, compare=False)
    media: tuple[MediaItem, ...] = ()

    def __post_init__(self, known_packed: bytes | None) -> None:
        if known_packed is not None:
            object.__setattr__(self, "_packed", known_packed)

    @property
    def packed(self) -> bytes:
        packed = self._packed
        if packed is None:
            packed = pack_tokens(self.tokens)
            object.__setattr__(self, "_packed", packed)
        return packed

    def component_at_token(self, index: int) -> Component | None:
        for component in self.components:
            if component.token_start <= index < component.token_end:
                return component
        return None

    def component_at_char(self, index: int) -> Component | None:
        for component in self.components:
            if component.char_start <= index < component.char_end:
                return component
        return None
