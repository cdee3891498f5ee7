"""Hashes of a request body in prefix order: per component, and per block of the whole.

No text is kept. A request body (OpenAI Chat Completions, OpenAI Responses or Anthropic
Messages JSON) is cut into components in the order they enter the provider's prefix:
``model``, ``params`` (the settings that change the prefix or the cache routing), the tools,
the system prompt, then the messages. Each component is serialised as sent (key order kept:
providers see the JSON as written) and hashed, along with hashes of normalised forms that
name the cause when two components differ:

- keys sorted: equal means only the key order changed (PFX202);
- whitespace removed: equal means whitespace drift (PFX402);
- digits masked: equal means a number changed, such as a date or time (PFX101);
- hex digits masked: equal means an id, hash or UUID changed (PFX102).

The concatenated serialisation is also cut into fixed-size blocks with chained hashes, so the
stable prefix between two requests is measured in characters of serialised JSON (to a block),
even inside a large component.

Hashes are Python's own string hashes: fast, and salted per process (``PYTHONHASHSEED``),
which is fine because fingerprints are only compared within the process that made them and
are never written anywhere.
"""

from __future__ import annotations

import json
import json.encoder
import re
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from prefixlint import codes
from prefixlint.sequences import common_prefix_length

BLOCK_CHARS = 512
_PARAMS = {
    "openai-chat": (
        "tool_choice",
        "parallel_tool_calls",
        "response_format",
        "reasoning_effort",
        "prompt_cache_key",
        "cache_salt",
        "functions",
        "function_call",
    ),
    "openai-responses": (
        "tool_choice",
        "parallel_tool_calls",
        "text",
        "reasoning",
        "prompt_cache_key",
        "cache_salt",
        "previous_response_id",
    ),
    "anthropic": ("tool_choice", "thinking"),
}
_JSON_BLANKS = re.compile(r"\\[nrt]")
_DIGITS = str.maketrans("0123456789", "0000000000")
_HEX = str.maketrans("0123456789abcdefABCDEF", "0" * 22)
_VARIANT_LIMIT = 65536
"""Components larger than this (in characters) get no normalised hashes: cost stays bounded."""


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
# CPython's C encoder (``None`` without the accelerator); typeshed does not declare it.
_MAKE_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)
_C_ENCODER: Callable[[object, int], Iterable[str]] | None = (
    _MAKE_C_ENCODER(
        None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", False, False, True
    )
    if _MAKE_C_ENCODER is not None
    else None
)


def _serialise(value: object) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"))``, without building an
    encoder per call (the C encoder, made once)."""
    if _C_ENCODER is None or isinstance(value, str):
        return _ENCODER.encode(value)
    return "".join(_C_ENCODER(value, 0))


_SORTED_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True)


_digest = hash


class _VariantMemo:
    """Normalised hashes by component hash, so that a component seen before (the system
    prompt, the tools, earlier messages) is normalised once. Holds hashes only."""

    def __init__(self, size: int = 16384) -> None:
        self.size = size
        self._data: dict[int, tuple[int, ...]] = {}

    def get(self, digest: int, text: str, value: object) -> tuple[int, ...]:
        variants = self._data.get(digest)
        if variants is None:
            variants = _variants(text, value)
            if len(self._data) >= self.size:
                self._data.clear()
            self._data[digest] = variants
        return variants


def _variants(text: str, value: object) -> tuple[int, ...]:
    if len(text) > _VARIANT_LIMIT:
        return ()
    sorted_text = _SORTED_ENCODER.encode(value) if isinstance(value, (dict, list)) else text
    return (
        _digest(sorted_text),
        _digest("".join(_JSON_BLANKS.sub(" ", text).split())),
        _digest(text.translate(_DIGITS)),
        _digest(text.translate(_HEX)),
    )


_MEMO = _VariantMemo()


class ComponentPrint(NamedTuple):
    """One component's position, role, size and hashes (as sent, then normalised forms)."""

    name: str
    kind: str
    role: str | None
    chars: int
    digest: int
    variants: tuple[int, ...] = ()
    """Hashes with keys sorted, whitespace removed, digits masked, hex masked (or empty)."""


VARIANT_CAUSES = (codes.KEY_ORDER, codes.WHITESPACE_DRIFT, codes.TIMESTAMP, codes.UNIQUE_ID)


def _component(
    name: str, kind: str, value: object, role: str | None = None
) -> tuple[ComponentPrint, str]:
    text = _serialise(value)
    digest = _digest(text)
    variants = _MEMO.get(digest, text, value)
    return ComponentPrint(name, kind, role, len(text), digest, variants), text


@dataclass(frozen=True)
class RequestPrint:
    """A request's components in prefix order and the chained hashes of its blocks."""

    format: str
    components: tuple[ComponentPrint, ...]
    blocks: array[int]
    """Chained hash of each block of :data:`BLOCK_CHARS` serialised characters (the last
    block may be shorter)."""
    chars: int
    """Characters of the serialised components."""

    def shared_blocks(self, other: RequestPrint) -> int:
        """Leading blocks equal in both (a shorter last block counts when equal)."""
        return common_prefix_length(self.blocks, other.blocks)

    def stable_chars(self, other: RequestPrint) -> int:
        """Characters of serialised prefix shared with ``other``, to a block."""
        return min(self.shared_blocks(other) * BLOCK_CHARS, self.chars, other.chars)


def _chained_blocks(text: str) -> array[int]:
    blocks = array("q")
    previous = 0
    for start in range(0, len(text), BLOCK_CHARS):
        previous = hash((previous, text[start : start + BLOCK_CHARS]))
        blocks.append(previous)
    return blocks


def _system_parts(body: dict[str, Any], request_format: str) -> list[tuple[str, object]]:
    if request_format == "anthropic":
        system = body.get("system")
    elif request_format == "openai-responses":
        system = body.get("instructions")
    else:
        return []
    if system is None:
        return []
    if isinstance(system, list):
        return [(f"system[{i}]", block) for i, block in enumerate(system)]
    return [("system", system)]


def _messages(body: dict[str, Any], request_format: str) -> list[object]:
    if request_format == "openai-responses":
        items = body.get("input", [])
        return [{"role": "user", "content": items}] if isinstance(items, str) else list(items)
    return list(body.get("messages") or [])


def fingerprint(body: dict[str, Any], request_format: str) -> RequestPrint:
    """The :class:`RequestPrint` of a parsed request body of ``request_format``."""
    parts: list[tuple[str, str, object, str | None]] = [("model", "model", body.get("model"), None)]
    params = {key: body[key] for key in _PARAMS[request_format] if key in body}
    parts.append(("params", "params", params, None))
    parts += [
        (f"tools[{i}]", "tools", tool, None) for i, tool in enumerate(body.get("tools") or [])
    ]
    parts += [(name, "system", value, None) for name, value in _system_parts(body, request_format)]
    for index, message in enumerate(_messages(body, request_format)):
        role = message.get("role", message.get("type")) if isinstance(message, dict) else None
        parts.append((f"messages[{index}]", "messages", message, role))
    components, texts = [], []
    for name, kind, value, role in parts:
        component, text = _component(name, kind, value, role)
        components.append(component)
        texts.append(text)
    text = "\x1e".join(texts)
    return RequestPrint(request_format, tuple(components), _chained_blocks(text), len(text))


def request_format(path: str) -> str | None:
    """The API an endpoint path belongs to, or ``None`` for endpoints that are not watched."""
    path = path.rstrip("/")
    if path.endswith("/chat/completions"):
        return "openai-chat"
    if path.endswith("/responses"):
        return "openai-responses"
    if path.endswith("/messages"):
        return "anthropic"
    return None
