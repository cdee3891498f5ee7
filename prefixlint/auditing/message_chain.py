"""Chained hashes of a request's conversation, to find the request it continues.

Entry ``i`` of a request's chain stands for its first ``i+1`` non-system messages, compared
as logged (a predecessor that differs in whitespace is still found by the longest-prefix
search). The next request of a conversation starts with the messages of the previous one, so
a chain is built from an earlier one: the leading messages both share are found with one
comparison and keep their signatures and hashes; only the rest are hashed.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from prefixlint.codes import SYSTEM_ROLES
from prefixlint.sequences import common_prefix_length


@dataclass(slots=True)
class MessageChain:
    """A request's messages with each one's signature (``None`` for a system message), the
    chained ``hashes`` of the non-system ones and their ``positions`` among the messages, and
    the positions of the messages whose signature holds a ``repr`` (``reprs``)."""

    messages: tuple[dict[str, Any], ...]
    signatures: list[int | None]
    hashes: list[int]
    positions: list[int]
    reprs: list[int]


def signature(message: dict[str, Any]) -> int:
    content = message.get("content")
    calls = message.get("tool_calls")
    return hash(
        (
            message.get("role"),
            content if isinstance(content, str) else repr(content),
            message.get("tool_call_id"),
            repr(calls) if calls else None,
        )
    )


def opening(messages: Sequence[dict[str, Any]]) -> int | None:
    """The signature of the first non-system message (how the conversation opens), if any."""
    for message in messages:
        if message.get("role") not in SYSTEM_ROLES:
            return signature(message)
    return None


def _holds_repr(message: dict[str, Any]) -> bool:
    """Whether equal messages may differ in signature: a ``repr`` of equal lists or dicts
    differs with their key order (strings and ``None`` hash alike when equal)."""
    content = message.get("content")
    return not (content is None or isinstance(content, str)) or bool(message.get("tool_calls"))


def message_chain(
    messages: Sequence[dict[str, Any]], earlier: MessageChain | None = None
) -> MessageChain:
    """The chain of ``messages``, taking what it can from ``earlier``'s (another request's)."""
    messages = tuple(messages)
    if earlier is None:
        earlier = MessageChain((), [], [], [], [])
    shared = common_prefix_length(
        earlier.messages, messages, min(len(earlier.messages), len(messages)) - 1
    )
    signatures = earlier.signatures[:shared]
    reprs = [index for index in earlier.reprs if index < shared]
    changed = shared
    for index in reprs:
        if messages[index] is not earlier.messages[index]:
            signatures[index] = signature(messages[index])
            if signatures[index] != earlier.signatures[index]:
                changed = min(changed, index)
    for index in range(shared, len(messages)):
        message = messages[index]
        signatures.append(None if message.get("role") in SYSTEM_ROLES else signature(message))
        if _holds_repr(message):
            reprs.append(index)
    kept = bisect_left(earlier.positions, changed)
    hashes, positions = earlier.hashes[:kept], earlier.positions[:kept]
    parent = hashes[-1] if hashes else 0
    for index in range(changed, len(messages)):
        if signatures[index] is not None:
            parent = hash((parent, signatures[index]))
            hashes.append(parent)
            positions.append(index)
    return MessageChain(messages, signatures, hashes, positions, reprs)
