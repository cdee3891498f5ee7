"""A YAML loader that bounds nesting depth and the size of the tree with aliases expanded.

A few hundred bytes of nested aliases ("billion laughs") describe billions of values: the
composed graph stays small, but anything that walks it (or the data built from it) visits
every copy. :class:`BoundedLoader` counts each alias as the values it stands for, refuses a
recursive alias, and raises :class:`~prefixlint.context.SourceError` at the line where a limit
of :mod:`prefixlint.limits` is passed.
"""

from __future__ import annotations

from functools import partial

import yaml

from prefixlint.context import SourceError
from prefixlint.limits import Limits


class BoundedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` with the depth, value and alias bounds of ``limits``."""

    def __init__(self, stream, limits: Limits) -> None:
        super().__init__(stream)
        self.limits = limits
        self._depth = 0
        self._values = 0
        self._open_anchors: set[str] = set()
        self._anchor_sizes: dict[str, int] = {}

    def _count(self, values: int, mark, what: str) -> None:
        self._values += values
        if self._values > self.limits.max_nodes:
            raise SourceError(
                f"too many values to check: {what} over {self.limits.max_nodes} (limit max-nodes)",
                mark.line + 1,
                mark.column + 1,
            )

    def compose_node(self, parent, index):
        event = self.peek_event()
        mark, anchor = event.start_mark, event.anchor
        if isinstance(event, yaml.AliasEvent):
            if anchor in self._open_anchors:
                raise SourceError(f"recursive YAML alias *{anchor}", mark.line + 1, mark.column + 1)
            self._count(self._anchor_sizes.get(anchor, 1), mark, "aliases expand to")
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > self.limits.max_depth:
            raise SourceError(
                f"nested too deeply to check: over {self.limits.max_depth} levels"
                " (limit max-depth)",
                mark.line + 1,
                mark.column + 1,
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


def bounded_loader(limits: Limits):
    """A ``Loader`` argument for ``yaml.load`` and ``yaml.compose_all`` with ``limits``."""
    return partial(BoundedLoader, limits=limits)
