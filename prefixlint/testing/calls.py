"""The arguments of the calls a prompt builder is tested with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    """The arguments of one call of the builder."""

    args: tuple[Any, ...] = ()
    kwargs: dict[str, Any] = field(default_factory=dict)

    def describe(self, name: str) -> str:
        """``name(arguments...)``, shortened to 70 characters."""
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        text = f"{name}({', '.join(parts)})"
        return text if len(text) <= 70 else text[:69] + "…)"


def call(*args: Any, **kwargs: Any) -> Call:
    """``call("question", user="ann")``: one call of the builder, with these arguments."""
    return Call(args, kwargs)


def as_call(item: object) -> Call:
    """A :class:`Call` from a ``Call``, a tuple of positional arguments, a dict of keyword
    arguments, or a single positional argument."""
    if isinstance(item, Call):
        return item
    if isinstance(item, tuple):
        return Call(item)
    if isinstance(item, dict):
        return Call((), dict(item))
    return Call((item,))
