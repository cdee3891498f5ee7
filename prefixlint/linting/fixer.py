"""Apply fixes to a text: sort them, skip the ones that overlap, splice the rest.

Follows ruff's ``fix/mod.rs``: fixes are taken in the order of their first edit; a fix whose
edits touch or overlap a region already changed waits for the next pass (the engine re-checks
the new text and tries again), and a fix identical to one already applied is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import pairwise

from prefixlint.types import Edit, Fix


def _fix_order(fix: Fix) -> tuple[int, int]:
    edits = fix.sorted_edits
    return (edits[0].start, edits[0].end) if edits else (0, 0)


def _overlaps_itself(edits: tuple[Edit, ...]) -> bool:
    return any(prev.end > nxt.start for prev, nxt in pairwise(edits))


def apply_edits(text: str, fixes: Iterable[Fix]) -> tuple[str, list[Fix]]:
    """``text`` with the non-overlapping ``fixes`` applied, and the fixes that were applied.

    Edits are character offsets into ``text``. A fix whose own edits overlap, or that reaches
    past the end of ``text``, is never applied.
    """
    applied: list[Fix] = []
    seen: set[Fix] = set()
    pieces: list[str] = []
    last_end: int | None = None
    for fix in sorted(fixes, key=_fix_order):
        edits = fix.sorted_edits
        if not edits or fix in seen or _overlaps_itself(edits) or edits[-1].end > len(text):
            continue
        if last_end is not None and edits[0].start <= last_end:
            continue
        cursor = 0 if last_end is None else last_end
        for edit in edits:
            pieces.append(text[cursor : edit.start])
            pieces.append(edit.replacement)
            cursor = edit.end
        last_end = cursor
        applied.append(fix)
        seen.add(fix)
    if last_end is None:
        return text, []
    pieces.append(text[last_end:])
    return "".join(pieces), applied
