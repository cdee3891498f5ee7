"""A user's saved memory, bio or preferences pasted into a prompt as text.

Assistants that remember their users paste what they remember into the system prompt: a line
``User memory: Ana is a nurse in Oslo and prefers short answers.``, a ``## User memories``
heading or a ``The user's saved memories:`` label over a list of facts, a ``<user_memories>``
block. That text differs per user, so it breaks the prefix as ``{{ user_memory }}`` would.

The label names the user's (or a customer's) memory, bio, profile, preferences or facts, or
says ``About the user``; a bare ``Memory`` or ``Memories`` label counts before a fact about the
user (``User is a nurse``). What follows it counts when it states something: not a blank marker
(``[REDACTED]``, ``<memories appear here>``, ``None``), not a description of the section or
an instruction to the assistant (``This profile is shown to you``, ``Use it only when it
helps``), and not inside fenced code or an ``<example>`` block.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from prefixlint.sources.templates import fence_at, fence_blocks

_WHOSE = r"(?:the\s+)?(?:user|customer|member|human|person)(?:['’]s)?"
_KIND = r"(?:saved\s+|stored\s+|long[- ]term\s+|knowledge\s+|personal\s+)?"
_WHAT = r"(?:memory|memories|bio|profile|preferences|facts|notes)"
# A bare ``Memory`` label counts only before a fact about the user (``User is a nurse``).
_LABEL = (
    rf"(?:{_WHOSE}\s+{_KIND}{_WHAT}|(?:saved|stored)\s+memor(?:y|ies)(?:\s+about\s+the\s+user)?"
    r"|about\s+the\s+user|(?P<bare>(?:long[- ]term\s+)?memor(?:y|ies)))"
)
# A label at the start of a line (a list item, a heading, bold; ``Here is``) with the text
# after its colon, or alone on its line (the text is on the next one).
_LABEL_LINE = re.compile(
    r"^[ \t]*(?:[-*][ \t]+)?(?:#{1,6}[ \t]+)?(?:(?:here|below)[ \t]+(?:is|are)[ \t]+)?(?:\*\*)?"
    rf"{_LABEL}(?:[ \t]*\([^()\n]{{1,30}}\))?(?:\*\*)?"
    r"(?:(?:[ \t]+(?:is|are))?[ \t]*:(?:\*\*)?[ \t]*(?P<value>[^\n]*?))?[ \t]*\r?$",
    re.IGNORECASE | re.MULTILINE,
)
_TAG_LINE = re.compile(
    r"^[ \t]*<(?:user[_-]?(?:memor(?:y|ies)|bio|profile|preferences|facts)|(?P<bare>memories))>"
    r"[ \t]*(?P<value>[^\n<]*?)[ \t]*\r?$",
    re.IGNORECASE | re.MULTILINE,
)
_NEXT_LINE = re.compile(
    r"(?:[ \t]*\r?\n)+[ \t]*(?:[-*][ \t]+|\d+[.)][ \t]+)?(?P<value>[^\n]*?)[ \t]*\r?$", re.MULTILINE
)
_BLANK_MARKER = re.compile(
    r"`?(?:\[[^\]]*\]|<[^>]*>|\{[^}]*\}|\([^)]*\)|_{3,}|none|n/a|empty|-+)`?\.?", re.IGNORECASE
)
# Words of a description or an instruction, addressed to the assistant.
_ADDRESSED = re.compile(
    r"\b(?:you|your|claude|assistant|chatgpt|should|must)\b"
    r"|^(?:use|apply|refer|consider|treat|follow|ignore|do|don['’]t|only|never|always|remember"
    r"|check|save|store|read|here|below|the\s+following|write|describe|summari[sz]e|include"
    r"|keep|capture|record|provide|extract|infer|focus|avoid|mention|prioriti[sz]e)\b",
    re.IGNORECASE,
)
# A verb that states something about a person (``Ana is a nurse``, ``User collects caps``,
# ``Prefers short answers``): a heading's label counts only over such a line.
_STATES_FACT = re.compile(
    r"(?i:\b(?:is|are|was|were|has|have|had|prefers?|likes?|loves?|lives?|works?|wants?|uses?"
    r"|speaks?|needs?|enjoys?|dislikes?|hates?|studies|owns?)\b)"
    r"|\b(?:user|he|she|they|[A-Z][a-z]+)\s+[a-z]+s\b",
)
_ABOUT_USER = re.compile(r"(?:\[[^\]\n]*\][ \t]*)?(?:the[ \t]+)?user\b", re.IGNORECASE)
_EXAMPLE_TAG = re.compile(r"<(/?)[\w-]*example[\w-]*>", re.IGNORECASE)
_HEADING = re.compile(r"#{1,6}[ \t]|</?[\w-]+>|`{3}|~{3}")


def pasted_memories(text: str) -> Iterator[tuple[int, int, str]]:
    """``(start, end, shown)`` of each pasted memory of ``text``: the text that states it,
    and the line to show for it."""
    matches = [*_LABEL_LINE.finditer(text), *_TAG_LINE.finditer(text)]
    fences = fence_blocks(text) if matches else []
    for match in sorted(matches, key=lambda m: m.start()):
        if fence_at(fences, match.start()) is not None or _in_example(text, match.start()):
            continue
        start, end = match.span("value")
        shown = match.group(0).strip()
        if start == end:
            following = _NEXT_LINE.match(text, match.end())
            if following is None or _HEADING.match(following.group("value")):
                continue
            start, end = following.span("value")
            shown = following.group("value")
            if match.group(0).lstrip(" \t-*").startswith("#") and not _STATES_FACT.search(shown):
                continue  # ``### User memory`` over what such memory is, in a document
        value = text[start:end]
        if match.group("bare") and not _ABOUT_USER.match(value):
            continue  # ``## Memory`` over how the memory tool works
        if value and not _BLANK_MARKER.fullmatch(value) and not _ADDRESSED.search(value):
            yield start, end, shown


def _in_example(text: str, offset: int) -> bool:
    """Whether ``offset`` is inside an ``<example>`` (``<example_user_memories>``) block."""
    tags = list(_EXAMPLE_TAG.finditer(text, max(offset - 4000, 0), offset))
    return bool(tags) and not tags[-1].group(1)
