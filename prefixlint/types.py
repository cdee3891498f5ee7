"""Core value types shared by every part of prefixlint: spans, edits, fixes and findings."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Applicability(enum.Enum):
    """How safe a fix is to apply without review (ruff's ladder: display-only < unsafe < safe)."""

    DISPLAY_ONLY = "display-only"
    UNSAFE = "unsafe"
    SAFE = "safe"

    @property
    def rank(self) -> int:
        return _APPLICABILITY_RANK[self]


_APPLICABILITY_RANK = {
    Applicability.DISPLAY_ONLY: 0,
    Applicability.UNSAFE: 1,
    Applicability.SAFE: 2,
}


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Span:
    """A region of a file. Lines and columns are 1-based; the end is exclusive."""

    path: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Edit:
    """Replace ``text[start:end]`` (character offsets into the whole file) with ``replacement``."""

    start: int
    end: int
    replacement: str

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"invalid edit range {self.start}..{self.end}")


@dataclass(frozen=True)
class Fix:
    """A set of edits applied together, with how safe it is and a short title."""

    edits: tuple[Edit, ...]
    applicability: Applicability
    message: str

    @property
    def sorted_edits(self) -> tuple[Edit, ...]:
        return tuple(sorted(self.edits, key=lambda e: (e.start, e.end)))


@dataclass(frozen=True)
class Finding:
    """One finding: a rule code at a place, with an optional fix.

    ``stable_prefix_tokens`` is the number of tokens of the rendered prompt that stay identical
    before the unstable part; ``unstable_tokens`` how many follow it and are lost to the cache.
    Both are ``None`` when the rule cannot measure them.
    """

    code: str
    name: str
    message: str
    span: Span
    severity: Severity = Severity.ERROR
    fix: Fix | None = None
    stable_prefix_tokens: int | None = None
    unstable_tokens: int | None = None
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)

    @property
    def path(self) -> str:
        return self.span.path

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.column

    @property
    def end_line(self) -> int:
        return self.span.end_line

    @property
    def end_column(self) -> int:
        return self.span.end_column

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        s = self.span
        return (s.path, s.line, s.column, self.code)


# The name the package's own modules use.
Diagnostic = Finding
