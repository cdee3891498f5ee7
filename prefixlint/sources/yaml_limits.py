"""A YAML loader that bounds nesting depth and the size of the tree with aliases expanded.

A few hundred bytes of nested aliases ("billion laughs") describe billions of values: the
composed graph stays small, but anything that walks it (or the data built from it) visits
every copy. :class:`BoundedLoader` counts each alias as the values it stands for, refuses a
recursive alias, and raises :class:`~prefixlint.context.SourceError` at the line where a limit
of :mod:`prefixlint.limits` is passed.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, ClassVar, Protocol

import yaml
from yaml.events import AliasEvent, Event, NodeEvent
from yaml.nodes import Node

from prefixlint.context import SourceError
from prefixlint.limits import DEFAULT_LIMITS, Limits

if TYPE_CHECKING:
    from yaml.reader import _ReadStream


class _Mark(Protocol):
    """Where an event starts (PyYAML's pure and C marks both have these)."""

    line: int
    column: int


def _where(mark: _Mark | None) -> tuple[int, int]:
    """The 1-based line and column of ``mark`` (the start when the event has none)."""
    return (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with the depth, value and alias bounds of its class's ``limits``."""

    limits: ClassVar[Limits] = DEFAULT_LIMITS

    def __init__(self, stream: _ReadStream) -> None:
        super().__init__(stream)
        self._depth = 0
        self._values = 0
        self._open_anchors: set[str] = set()
        self._anchor_sizes: dict[str, int] = {}

    def _count(self, values: int, mark: _Mark | None, what: str) -> None:
        self._values += values
        if self._values > self.limits.max_nodes:
            raise SourceError(
                f"too many values to check: {what} over {self.limits.max_nodes} (limit max-nodes)",
                *_where(mark),
            )

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        event: Event = self.peek_event()  # type: ignore[no-untyped-call]  # untyped in the stubs
        mark = event.start_mark
        if isinstance(event, AliasEvent):
            anchor = event.anchor
            if anchor in self._open_anchors:
                raise SourceError(f"recursive YAML alias *{anchor}", *_where(mark))
            self._count(self._anchor_sizes.get(anchor or "", 1), mark, "aliases expand to")
            return super().compose_node(parent, index)
        anchor = event.anchor if isinstance(event, NodeEvent) else None
        self._depth += 1
        if self._depth > self.limits.max_depth:
            raise SourceError(
                f"nested too deeply to check: over {self.limits.max_depth} levels"
                " (limit max-depth)",
                *_where(mark),
            )
        before = self._values
        self._count(1, mark, "the file holds")
        if anchor is not None:
            self._open_anchors.add(anchor)
        node = super().compose_node(parent, index)
        if anchor is not None:
            self._open_anchors.discard(anchor)
            self._anchor_sizes[anchor] = self._values - before
        self._depth -= 1
        return node


@lru_cache(maxsize=64)
def bounded_loader(limits: Limits) -> type[BoundedLoader]:
    """A ``Loader`` class for ``yaml.load`` and ``yaml.compose_all`` with ``limits``."""
    chosen = limits

    class Loader(BoundedLoader):
        limits = chosen

    return Loader
