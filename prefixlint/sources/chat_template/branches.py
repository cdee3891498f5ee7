"""The ``{% if %}`` whose branches two lines of a chat template are in.

When two renderings of one conversation take different branches at the same place (history
rendered without its reasoning once a new user turn follows), the branch lines only show the
two outcomes: the ``if`` line above them holds the condition that chose between them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_TAG = re.compile(r"\{%[-+]?\s*(if|elif|else|endif)\b")


@dataclass
class _Block:
    start: int
    arms: list[int] = field(default_factory=list)
    end: int = 0


def _if_blocks(source: str) -> list[_Block]:
    """Every ``if`` block of ``source``: its first line, the lines its arms start on, its end."""
    blocks: list[_Block] = []
    open_blocks: list[_Block] = []
    for match in _TAG.finditer(source):
        line = source.count("\n", 0, match.start()) + 1
        word = match.group(1)
        if word == "if":
            open_blocks.append(_Block(line, [line]))
        elif open_blocks and word in ("elif", "else"):
            open_blocks[-1].arms.append(line)
        elif open_blocks:
            block = open_blocks.pop()
            block.end = line
            blocks.append(block)
    return blocks


def deciding_if(source: str, first: int, second: int) -> int | None:
    """The line of the innermost ``if`` that has ``first`` and ``second`` in different arms
    (``None`` when no ``if`` separates them)."""
    low, high = sorted((first, second))
    best: _Block | None = None
    for block in _if_blocks(source):
        if not (block.start <= low and high <= block.end):
            continue
        arm_low = sum(1 for arm in block.arms if arm <= low)
        arm_high = sum(1 for arm in block.arms if arm <= high)
        if arm_low != arm_high and (best is None or block.start >= best.start):
            best = block
    return best.start if best else None
