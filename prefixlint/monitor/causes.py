"""Why a request's prefix departs from an earlier one, from hashes alone.

Codes as in the rule catalogue: PFX601 (model or settings changed), PFX201 (tool order),
PFX204 (tool set or schema changed), PFX202 (key order), PFX402 (whitespace), PFX101 (a
number such as a date or time), PFX102 (an id or hash), PFX502 (sliding window), PFX504 (a
tool result rewritten), PFX501 (an earlier message edited); ``first-seen`` when the request
only adds content (a new question, a new conversation, the next turn), and
``content-changed`` when the hashes cannot tell more.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from prefixlint import codes
from prefixlint.codes import CONTENT_CHANGED, FIRST_SEEN, SYSTEM_ROLES
from prefixlint.monitor.fingerprint import VARIANT_CAUSES, ComponentPrint, RequestPrint

_WINDOW_OVERLAP = 2


def _variant_cause(old: ComponentPrint, new: ComponentPrint) -> str | None:
    """The first normalisation under which both components hash the same."""
    if not old.variants or not new.variants:
        return None
    for code, a, b in zip(VARIANT_CAUSES, old.variants, new.variants, strict=True):
        if a == b:
            return code
    return None


def _of_kind(print_: RequestPrint, kind: str) -> list[ComponentPrint]:
    return [c for c in print_.components if c.kind == kind]


def _tools_cause(old: RequestPrint, new: RequestPrint, index: int) -> str:
    before = [c.digest for c in _of_kind(old, "tools")]
    after = [c.digest for c in _of_kind(new, "tools")]
    if Counter(before) == Counter(after):
        return codes.UNORDERED
    if len(before) == len(after) and index < len(old.components):
        cause = _variant_cause(old.components[index], new.components[index])
        if cause is not None:
            return cause
    return codes.TOOL_SET


def _is_sliding_window(before: Sequence[int], after: Sequence[int]) -> bool:
    """``after`` continues with messages that ``before`` had further on."""
    wanted = min(_WINDOW_OVERLAP, len(after))
    if wanted == 0:
        return False
    return any(
        list(before[shift : shift + wanted]) == list(after[:wanted])
        for shift in range(1, len(before) - wanted + 1)
    )


def _messages_cause(old: RequestPrint, new: RequestPrint, index: int) -> str:
    old_component, new_component = old.components[index], new.components[index]
    old_messages = _of_kind(old, "messages")
    position = old_messages.index(old_component)
    new_messages = _of_kind(new, "messages")
    if _is_sliding_window(
        [c.digest for c in old_messages[position:]], [c.digest for c in new_messages[position:]]
    ):
        return codes.SLIDING_WINDOW
    roles_before = [c.role for c in old_messages[:position]]
    opens_conversation = "user" not in roles_before and "user" in (
        old_component.role,
        new_component.role,
    )
    if opens_conversation or position == len(old_messages) - 1:
        return FIRST_SEEN  # another conversation, or another last question, on this route
    if old_component.role != new_component.role:
        return codes.HISTORY_EDIT
    cause = _variant_cause(old_component, new_component)
    if cause is not None:
        return cause
    if old_component.role in SYSTEM_ROLES:
        return CONTENT_CHANGED
    return codes.TOOL_OUTPUT if old_component.role == "tool" else codes.HISTORY_EDIT


def divergence(old: RequestPrint, new: RequestPrint) -> tuple[str | None, str | None]:
    """``(cause, component name)`` of the first component where ``new`` departs from ``old``.

    ``(None, None)`` when ``new`` equals ``old`` or only drops its tail; ``first-seen`` when
    it only appends to it.
    """
    for index, (a, b) in enumerate(zip(old.components, new.components, strict=False)):
        if a.name == b.name and a.digest == b.digest:
            continue
        if "tools" in (a.kind, b.kind):
            return _tools_cause(old, new, index), b.name if b.kind == "tools" else a.name
        if a.kind != b.kind or a.name != b.name:
            return CONTENT_CHANGED, b.name
        if a.kind in ("model", "params"):
            return codes.PARAMETER_CHANGE, b.name
        if a.kind == "messages":
            return _messages_cause(old, new, index), b.name
        return _variant_cause(a, b) or CONTENT_CHANGED, b.name
    if len(new.components) > len(old.components):
        return FIRST_SEEN, new.components[len(old.components)].name
    return None, None
