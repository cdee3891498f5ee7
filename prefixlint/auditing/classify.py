"""Name the cause of a divergence between a request and the one it should have reused.

Every test here compares the differing component in both requests and answers with a rule
code only when the comparison proves it (same after date masking -> PFX101, same after
sorting the tools -> PFX201, ...); anything else is ``content-changed``. A wrong cause sends
engineers the wrong way, so unsure means ``content-changed``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from prefixlint.auditing.environment import is_environment_line
from prefixlint.auditing.opaque import opaque_code, opaque_line_code
from prefixlint.auditing.volatile import find_values, value_at, without_values
from prefixlint.chat import content_text
from prefixlint.codes import (
    ARGUMENTS_RESERIALISED,
    CONTENT_CHANGED,
    ENVIRONMENT,
    FIRST_SEEN,
    HISTORY_EDIT,
    INVISIBLE,
    KEY_ORDER,
    LINE_ENDINGS,
    NON_MONOTONIC,
    PARAMETER_CHANGE,
    PLAIN_TEXT,
    SLIDING_WINDOW,
    SYSTEM_ROLES,
    TOOL_OUTPUT,
    TOOL_SET,
    UNORDERED,
    WHITESPACE_DRIFT,
)
from prefixlint.request import ChatRequest
from prefixlint.sequences import common_prefix_length, differing_lines

RESYNC_CHARS = 40
# The most text, besides its volatile value, of a line that holds one labelled value.
MAX_LABEL_CHARS = 48
# The most text of a labelled value inserted into a line (label, value and punctuation).
MAX_INSERTED_CHARS = 160
_WHITESPACE_RUN = re.compile(r"\s+")
# The front of a text holding RESYNC_CHARS printable ASCII characters other than a space:
# every normalisation below leaves each of them one character at least.
_RESYNC_FRONT = re.compile(rf"(?:[^!-~]*[!-~]){{{RESYNC_CHARS}}}")
# Between two such characters: no normalisation below acts across the place (none composes,
# joins or strips them), so it maps the text before it to a front of what the whole becomes.
_STABLE_CUT = re.compile(r"(?<=[!-~])(?=[!-~])")
# What may separate two values that change together (a date and its time).
_VALUE_GAP = re.compile(r"[ \t,]{1,2}(?:(?:at|on)[ \t])?")


def _unicode_normal(text: str) -> str:
    text = text.translate(PLAIN_TEXT)
    return unicodedata.normalize("NFC", text)


def _line_ending_normal(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _whitespace_normal(text: str) -> str:
    return _WHITESPACE_RUN.sub(" ", text).rstrip()


# Cumulative normalisations, each with the code of the drift it removes.
_WHITESPACE_STEPS: tuple[tuple[str, Callable[[str], str]], ...] = (
    (INVISIBLE, _unicode_normal),
    (LINE_ENDINGS, _line_ending_normal),
    (WHITESPACE_DRIFT, _whitespace_normal),
)


def _is_blank(char: str) -> bool:
    return char.isspace() or ord(char) in PLAIN_TEXT


def whitespace_code(a: str, b: str, offset: int) -> str | None:
    """PFX401/402/403 when ``a`` and ``b`` differ at ``offset`` only by whitespace drift or
    Unicode normalisation.

    The comparison starts just before ``offset`` (at the whitespace run around it, or at the
    character a combining mark attaches to) and must hold for the next :data:`RESYNC_CHARS`
    normalised characters (or to the end): a later, unrelated change does not hide that the
    first difference was whitespace.
    """
    start = offset
    while start > 0 and _is_blank(a[start - 1]):
        start -= 1
    start = max(0, min(start, offset - 1))
    blank = any(_is_blank(c) for c in (a[offset : offset + 1] + b[offset : offset + 1]))
    rest_a, rest_b = _resync_front(a, start), _resync_front(b, start)
    for code, normalise in _WHITESPACE_STEPS:
        if code != INVISIBLE and not blank:
            return None
        rest_a, rest_b = normalise(rest_a), normalise(rest_b)
        if rest_a[:RESYNC_CHARS] == rest_b[:RESYNC_CHARS]:
            return code
    return None


def _resync_front(text: str, start: int) -> str:
    """``text[start:]``, or as much of it as :func:`whitespace_code` compares: cut at a
    :data:`_STABLE_CUT` past :data:`RESYNC_CHARS` printable characters, so that each
    normalisation gives the first ``RESYNC_CHARS`` characters it gives of the whole (a long
    prompt is normalised for a line, not to its end)."""
    front = _RESYNC_FRONT.match(text, start)
    cut = _STABLE_CUT.search(text, front.end()) if front else None
    return text[start:] if cut is None else text[start : cut.start()]


def volatile_code(a: str, b: str, offset: int) -> str | None:
    """PFX101-104 when the first difference lies in a date, id or labelled value in both texts.

    The two values must start at the same place and the text after them must agree again for
    :data:`RESYNC_CHARS` characters (or to the end): a value was swapped, nothing else.
    """
    value_a, value_b = value_at(a, offset), value_at(b, offset)
    if value_a is None or value_b is None:
        return None
    if value_a.start != value_b.start or value_a.code != value_b.code:
        return None
    end_a, end_b = _value_run_end(a, value_a.end), _value_run_end(b, value_b.end)
    if a[end_a : end_a + RESYNC_CHARS] != b[end_b : end_b + RESYNC_CHARS]:
        return None
    return value_b.code


def _value_run_end(text: str, end: int) -> int:
    """Where the run of values that ends one at ``end`` ends: a date and the time after it
    (``05 Mar 2025, 14:57 UTC``, ``03/05/2025 11:44 AM``) change together."""
    while True:
        gap = _VALUE_GAP.match(text, end)
        if gap is None:
            return end
        following = value_at(text, gap.end())
        if following is None or following.start != gap.end() or following.end <= end:
            return end
        end = following.end


@lru_cache(maxsize=65_536)
def volatile_lines_code(lines: str) -> str | None:
    """PFX101-104 when every non-blank line of ``lines`` is one volatile value with a short
    label (``Current date and time: ...``, ``Request ID: ...``, ``Served by host: ...``);
    the code of the first. Remembered per text: a system prompt's lines repeat on every
    request."""
    codes = []
    for line in lines.splitlines():
        if not line.strip():
            continue
        code = opaque_line_code(line, MAX_LABEL_CHARS)
        residue, values = without_values(line)
        if code is None and values and len(residue.strip()) <= MAX_LABEL_CHARS:
            code = next(find_values(line)).code
        codes.append(code)
    return codes[0] if codes and all(codes) else None


def changed_lines_code(a: str, b: str, offset: int) -> str | None:
    """PFX101-104 when ``a`` and ``b`` differ only in volatile-value lines (lines added,
    removed or replaced: equal once those lines are dropped), and the first difference (at
    ``offset``) is in one of them; the code of ``b``'s line there, else of ``a``'s. A line
    replaced by another counts only in a text of several lines (one sentence that changed
    around its date is not a value swapped)."""
    lines_a, lines_b = a.split("\n"), b.split("\n")
    if _kept_lines(lines_a) != _kept_lines(lines_b):
        return None
    # The line holding the first difference, or the next line that is not blank when that
    # difference is a line break (a line added or removed after it).
    first = b.count("\n", 0, offset)
    for index in range(first, max(len(lines_a), len(lines_b))):
        line_a = lines_a[index] if index < len(lines_a) else ""
        line_b = lines_b[index] if index < len(lines_b) else ""
        code_a, code_b = volatile_lines_code(line_a), volatile_lines_code(line_b)
        if code_a and code_b and len(lines_a) == 1:
            return None
        if code_a and code_b and code_a != code_b:
            # One line edited, its values of different kinds: the kind of those that changed
            # (a date dropped from a line whose id stayed is a date's doing).
            return _changed_value_code(line_a, line_b) or code_b
        if code_b or code_a:
            return code_b or code_a
        if index > first and (line_a.strip() or line_b.strip()):
            return None
    return None


def _changed_value_code(line_a: str, line_b: str) -> str | None:
    """The one kind of the values that one line holds and the other does not, if one, when
    the lines are one line edited: they keep a value in common."""
    values_a = Counter((v.code, line_a[v.start : v.end]) for v in find_values(line_a))
    values_b = Counter((v.code, line_b[v.start : v.end]) for v in find_values(line_b))
    if not values_a & values_b:
        return None
    changed = {code for code, _ in (values_a - values_b) + (values_b - values_a)}
    return changed.pop() if len(changed) == 1 else None


def _kept_lines(lines: list[str]) -> list[str]:
    """The lines that are not volatile-value lines, blank lines aside (a value line added or
    removed with the blank line that set it apart)."""
    return [line for line in lines if line.strip() and volatile_lines_code(line) is None]


def environment_lines_code(a: str, b: str) -> str | None:
    """PFX104 when ``a`` and ``b`` differ only in lines of an environment snapshot (a git
    status block, a directory listing: :mod:`prefixlint.auditing.environment`) and
    volatile-value lines (equal once those lines are dropped), and the first line that
    differs, ``b``'s before ``a``'s, is a snapshot's."""
    middle_a, middle_b = differing_lines(a, b)
    first = next((line for line in middle_b + middle_a if line.strip()), None)
    if first is None or not is_environment_line(first):
        return None
    if _instruction_lines(middle_a) != _instruction_lines(middle_b):
        return None
    return ENVIRONMENT


def _instruction_lines(lines: list[str]) -> list[str]:
    """The lines that are neither blank, nor an environment snapshot's, nor volatile values."""
    return [
        line
        for line in lines
        if line.strip() and not is_environment_line(line) and volatile_lines_code(line) is None
    ]


def inserted_value_code(a: str, b: str, offset: int) -> str | None:
    """PFX101-104 when ``b`` is ``a`` with a short labelled value inserted at ``offset``, or
    with one removed there, and the texts agree again after it for :data:`RESYNC_CHARS`
    characters (or to the end), all within a line: ``Find flights. Current date: 2026-03-02``
    in a sentence or a tool description, where the value has no line of its own."""
    shorter, longer = (a, b) if len(a) < len(b) else (b, a)
    probe = shorter[offset : offset + RESYNC_CHARS]
    end = longer.find(probe, offset + 1) if probe else len(longer)
    inserted = longer[offset:end] if end > offset else ""
    if not inserted or len(inserted) > MAX_INSERTED_CHARS or "\n" in inserted:
        return None  # whole lines are :func:`changed_lines_code`'s, which compares the rest
    return volatile_lines_code(inserted.strip(" \t.,;"))


def text_change_code(a: str, b: str, *, system: bool = False) -> str | None:
    """The code for how text ``a`` became ``b``: whitespace drift, a volatile value replaced,
    a line holding one added or removed, or a labelled value inserted into a line or removed
    from it. In a ``system`` prompt lines of an environment snapshot that changed (a git
    status block, a directory listing) are PFX104, and so is a short opaque token that changed
    (a host or replica name; a hex id is PFX102)."""
    offset = common_prefix_length(a, b)
    return (
        whitespace_code(a, b, offset)
        or (environment_lines_code(a, b) if system else None)
        or (opaque_code(a, b, offset, RESYNC_CHARS) if system else None)
        or volatile_code(a, b, offset)
        or changed_lines_code(a, b, offset)
        or inserted_value_code(a, b, offset)
    )


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return None


def same_json(a: str, b: str) -> bool:
    """Whether two JSON texts hold equal values (other spacing or key order)."""
    value_a = _parse_json(a)
    return value_a is not None and value_a == _parse_json(b)


def json_key_order_changed(a: str, b: str) -> bool:
    """Whether two JSON texts hold equal values serialised with a different key order."""
    value_a = _parse_json(a)
    return isinstance(value_a, (dict, list)) and value_a == _parse_json(b) and a != b


def tool_name(tool: dict[str, Any]) -> str | None:
    function = tool.get("function")
    if isinstance(function, dict):
        return function.get("name")
    return tool.get("name")


def tools_code(before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]]) -> str:
    """Cause of the first difference between two tool lists (PFX201/202/204, text codes)."""
    names_before = [tool_name(t) for t in before]
    names_after = [tool_name(t) for t in after]
    for index in range(max(len(before), len(after))):
        if index >= len(before) or index >= len(after):
            break
        text_before, text_after = _dump(before[index]), _dump(after[index])
        if text_before == text_after:
            continue
        if names_before[index] != names_after[index]:
            break
        if before[index] == after[index]:
            return KEY_ORDER
        return text_change_code(text_before, text_after) or CONTENT_CHANGED
    if Counter(names_before) != Counter(names_after):
        return TOOL_SET
    if names_before != names_after:
        return UNORDERED
    return CONTENT_CHANGED


def _message_key(message: dict[str, Any]) -> str:
    """The message's JSON text, remembered by identity (a log's decoder hands out a repeated
    message as the same object; each is held, so its id is not reused while remembered)."""
    known = _message_keys.get(id(message))
    if known is not None and known[0] is message:
        return known[1]
    if len(_message_keys) >= MAX_MESSAGE_KEYS:
        _message_keys.clear()
    key = _dump(message)
    _message_keys[id(message)] = (message, key)
    return key


_message_keys: dict[int, tuple[dict[str, Any], str]] = {}
MAX_MESSAGE_KEYS = 1 << 14


def _non_system(messages: Sequence[dict[str, Any]]) -> list[str]:
    return [_message_key(m) for m in messages if m.get("role") not in SYSTEM_ROLES]


def is_sliding_window(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], min_overlap: int = 2
) -> bool:
    """Whether ``after`` drops ``s >= 1`` conversation messages from the front of ``before``
    and keeps the next ones unchanged (at least ``min_overlap`` of them), or puts one message
    (a summary, a note that turns were left out; none of those dropped, else one was removed
    from the middle) in place of ``s >= 2`` of them and keeps at least two."""
    old, new = _non_system(before), _non_system(after)
    heads = new[:2]  # a window starts with what it kept, or with one message before that
    for shift in range(1, len(old) - min_overlap + 1):
        if shift < len(old) and old[shift] not in heads:
            continue
        kept = old[shift:]
        if new[: len(kept)] == kept:
            return True
        if (
            shift >= 2
            and len(kept) >= 2
            and new[1 : 1 + len(kept)] == kept
            and new[0] not in old[:shift]
        ):
            return True
    return False


def _tool_call_arguments(message: dict[str, Any]) -> list[str]:
    calls = message.get("tool_calls") or ()
    arguments = []
    for call in calls:
        function = call.get("function", call) if isinstance(call, dict) else {}
        value = function.get("arguments")
        arguments.append(value if isinstance(value, str) else _dump(value))
    return arguments


def _edited_message_code(old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """The code for how one message became another with the same role, if provable."""
    old_text, new_text = content_text(old.get("content")), content_text(new.get("content"))
    if old_text != new_text:
        if json_key_order_changed(old_text, new_text):
            return KEY_ORDER
        return text_change_code(old_text, new_text)
    old_args, new_args = _tool_call_arguments(old), _tool_call_arguments(new)
    if old_args != new_args and len(old_args) == len(new_args):
        for a, b in zip(old_args, new_args, strict=True):
            if a != b:
                return ARGUMENTS_RESERIALISED if same_json(a, b) else text_change_code(a, b)
    return None


def _starts_with(
    messages: Sequence[dict[str, Any]], start: int, expected: Sequence[dict[str, Any]]
) -> bool:
    return bool(expected) and list(messages[start : start + len(expected)]) == list(expected)


def messages_code(
    before: Sequence[dict[str, Any]],
    after: Sequence[dict[str, Any]],
    index: int,
    same_conversation: bool,
) -> str | None:
    """Cause of a difference first seen in ``after[index]``; ``None`` when the two messages are
    equal as data (the difference then comes from how they were rendered)."""
    if index >= len(before):
        return FIRST_SEEN
    old, new = before[index], after[index] if index < len(after) else None
    if old == new:
        return None
    code = _volatile_system_message_code(before, after, index)
    if code:
        return code
    opens_conversation = old.get("role") not in SYSTEM_ROLES and all(
        m.get("role") in SYSTEM_ROLES for m in before[:index]
    )
    if not same_conversation and (opens_conversation or index == len(before) - 1):
        # Another conversation (or a branch of this one) that shares only the head.
        return FIRST_SEEN
    if is_sliding_window(before, after, min_overlap=1 if same_conversation else 2):
        return SLIDING_WINDOW
    if new is None:
        return HISTORY_EDIT
    if old.get("role") in SYSTEM_ROLES and new.get("role") in SYSTEM_ROLES:
        old_text, new_text = content_text(old.get("content")), content_text(new.get("content"))
        return text_change_code(old_text, new_text, system=True) or CONTENT_CHANGED
    if _removed_or_inserted(before, after, index):
        return HISTORY_EDIT
    if old.get("role") == new.get("role"):
        code = _edited_message_code(old, new)
        if code:
            return code
    return _rewrite_code(before, after, index)


def _removed_or_inserted(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], index: int
) -> bool:
    """Whether messages were removed from ``before`` at ``index`` (a turn and its tool results)
    or inserted there, the messages after them kept (the next three, or all there are)."""
    removed = any(
        _starts_with(after, index, before[index + run : index + run + 3])
        for run in range(1, len(before) - index)
    )
    return removed or any(
        _starts_with(after, index + run, before[index : index + 3])
        for run in range(1, len(after) - index)
    )


def _volatile_system_message_code(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], index: int
) -> str | None:
    """PFX101-104 when a system message holding only volatile values (``Current date and
    time: ...``) was inserted at ``index`` or removed from there, the next messages kept."""
    for added, rest in ((after, before), (before, after)):
        message = added[index] if index < len(added) else None
        if message is None or message.get("role") not in SYSTEM_ROLES:
            continue
        kept = list(rest[index : index + 3])
        if kept and list(added[index + 1 : index + 1 + len(kept)]) == kept:
            return volatile_lines_code(content_text(message.get("content")))
    return None


def _rewrite_code(
    before: Sequence[dict[str, Any]], after: Sequence[dict[str, Any]], index: int
) -> str:
    """PFX504 when every changed message from ``index`` on is a tool result (same call id),
    PFX501 when the only change is one message edited in place."""
    overlap = min(len(before), len(after))
    changed = [j for j in range(index, overlap) if before[j] != after[j]]
    same_roles = all(before[j].get("role") == after[j].get("role") for j in changed)
    if not same_roles:
        return CONTENT_CHANGED
    if all(
        before[j].get("role") == "tool"
        and before[j].get("tool_call_id") == after[j].get("tool_call_id")
        for j in changed
    ):
        return TOOL_OUTPUT
    return HISTORY_EDIT if changed == [index] else CONTENT_CHANGED


def changed_params(before: ChatRequest, after: ChatRequest) -> list[str]:
    """Names of the request parameters (``model`` included) that differ."""
    names = ["model"] if before.model != after.model else []
    keys = sorted(set(before.params) | set(after.params))
    names += [f"params.{k}" for k in keys if before.params.get(k) != after.params.get(k)]
    return names


def component_data(request: ChatRequest, name: str) -> Any:
    """The logged data behind a rendered component, or ``None`` for a template-only part."""
    if name == "system":
        return request.system
    match = re.fullmatch(r"(messages|tools)\[(\d+)\]", name)
    if not match:
        return None
    items = request.messages if match.group(1) == "messages" else request.tools
    index = int(match.group(2))
    return items[index] if index < len(items) else None


def classify(
    before: ChatRequest, after: ChatRequest, component: str, same_conversation: bool
) -> tuple[str, str]:
    """``(cause, component)`` for a divergence first seen in ``component`` of ``after``.

    ``component`` is a rendered component name (``tools[i]``, ``tools``, ``system``,
    ``messages[k]``, ``generation_prompt``); the answer may name a request parameter
    (``params.tool_choice``) instead when that is what changed.
    """
    if component.startswith("tools"):
        if _dump(list(before.tools)) != _dump(list(after.tools)):
            return tools_code(before.tools, after.tools), component
    elif component == "system":
        if before.system != after.system:
            if before.system is None or after.system is None:
                return CONTENT_CHANGED, component
            return (
                text_change_code(before.system, after.system, system=True) or CONTENT_CHANGED,
                component,
            )
    elif component.startswith("messages["):
        index = int(component[len("messages[") : -1])
        code = messages_code(before.messages, after.messages, index, same_conversation)
        if code:
            return code, component
    elif component == "generation_prompt":
        return FIRST_SEEN, component
    # The component's own data is unchanged: something else changed how it renders.
    if _dump(list(before.tools)) != _dump(list(after.tools)):
        return tools_code(before.tools, after.tools), "tools"
    params = changed_params(before, after)
    if params:
        return PARAMETER_CHANGE, params[0]
    if component_data(before, component) is not None:
        return NON_MONOTONIC, component
    return CONTENT_CHANGED, component
