"""Example code pasted into a prompt without a Markdown fence.

A line reads as code when it is a statement of a language that prompts show: a Dockerfile
instruction (``FROM golang:1.21 AS base``), a shell command (``export PATH=...``), a Python or
JavaScript statement (``import os``, ``const x = 1;``), an assignment or keyword argument
(``level=logging.INFO,``), a call that opens its arguments (``logging.basicConfig(``) or a
closing bracket. A line is in unfenced code when it reads as code and so do at least
``_NEIGHBOURS`` of the lines within ``_WINDOW`` lines of it that hold no field of their own:
a block of ``name={name}`` lines is a template's, not a program's.
"""

from __future__ import annotations

import re

_WINDOW = 3
_NEIGHBOURS = 2

_CODE_LINE = re.compile(
    # a Dockerfile instruction
    r"(?:FROM|RUN|ENV|ARG|COPY|ADD|WORKDIR|CMD|ENTRYPOINT|EXPOSE|LABEL|VOLUME|USER|SHELL"
    r"|HEALTHCHECK|ONBUILD|STOPSIGNAL)[ \t]+\S"
    # a shell command (with or without a prompt sign), not a sentence that wraps onto the line
    r"|(?:\$[ \t]+)?(?:export|sudo|cd|echo|mkdir|rm|cp|mv|chmod|curl|wget|pip3?|npm|npx|yarn"
    r"|pnpm|git|docker|kubectl|apt-get|apk|brew|python3?)[ \t]+[^\n]*[^\s.:,!?]\Z|set[ \t]+-[a-z]+"
    # a Python or JavaScript statement
    r"|import[ \t]+[\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+)*;?\Z"
    r"|from[ \t]+[\w.]+[ \t]+import[ \t]+[\w*, ()]+\Z|import[ \t][^\n]*[ \t]from[ \t]+['\"]"
    r"|(?:async[ \t]+)?(?:def|function)[ \t]+\w+[ \t]*\(|class[ \t]+\w+[ \t]*[(:{]"
    r"|(?:const|let|var)[ \t]+[\w{}\[\], ]+=|(?:return|await|raise)[ \t]+[\w.]+\(|return;?\Z"
    r"|(?:try|finally|else)[ \t]*:\Z|(?:elif|except)\b[^\n]*:\Z"
    # an assignment or a keyword argument, not a comparison
    r"|[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?[ \t]*(?::=|\+=|-=|=(?!=))[ \t]*\S"
    # a call that opens its arguments or ends a statement, a decorator, a closing bracket
    r"|[A-Za-z_][\w.]*\((?:[^\n]*[,;){])?\Z"
    r"|@[A-Za-z_][\w.]*(?:\([^\n]*\))?\Z"
    r"|[)\]}][)\]};,]*\Z"
)
_FIELD = re.compile(r"\$\{|\$[A-Za-z_]|%\(|\{[A-Za-z_]")


def _is_code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and _CODE_LINE.match(stripped) is not None


def _line_at(text: str, offset: int) -> tuple[int, int]:
    """Start and end (before its newline) of the line holding ``offset``."""
    end = text.find("\n", offset)
    return text.rfind("\n", 0, offset) + 1, len(text) if end == -1 else end


def in_unfenced_code(text: str, offset: int) -> bool:
    """Whether the line holding ``offset`` is a line of example code without a fence."""
    start, end = _line_at(text, offset)
    if not _is_code(text[start:end]):
        return False
    near = []
    above, below = start, end
    for _ in range(_WINDOW):
        if above > 0:
            above = _line_at(text, above - 1)[0]
            near.append(text[above : _line_at(text, above)[1]])
        if below < len(text):
            line_start, below = _line_at(text, below + 1)
            near.append(text[line_start:below])
    code = sum(1 for line in near if _is_code(line) and not _FIELD.search(line))
    return code >= _NEIGHBOURS
