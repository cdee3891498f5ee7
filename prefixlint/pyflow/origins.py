"""What a flow finds: a volatile or unordered value, where it is made, and how it travelled."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from prefixlint.codes import TIMESTAMP, UNORDERED
from prefixlint.pyflow.tables import DAILY, INSTANT, PARAMETER, TIME_DIRECTIVES

_DIRECTIVE = re.compile(r"%[-_0^#]?([a-zA-Z])")


@dataclass(frozen=True, eq=False)
class Origin:
    """A value that differs between runs (``code`` PFX1xx/PFX203), or between orders (PFX201).

    ``node`` is the expression that produces it (the span a finding points at). ``via`` names
    the constructs it passed through, innermost first. ``tail`` is true while nothing
    substantial follows it in the text it ends up in. ``sort_by`` says how ``sorted`` can order
    an unordered collection: ``"plain"``, ``"by name"`` or ``""`` (not known). ``consumer`` is
    the expression where an unordered collection is first iterated into ordered output (the
    argument of ``join``, ``list``, a comprehension or a ``for``); ``exact`` says whether
    ordering it there leaves the output otherwise unchanged. A ``PARAMETER`` origin stands for
    a function's argument in the function's summary; ``drops_order`` says the function sorts
    or counts it, so the argument's order does not matter. ``opaque`` counts the calls this
    analysis does not know that the value passed through (it may or may not survive into each
    result), up to two.
    ``use`` is the first name the value was read through after it was assigned. ``within``
    is the text inside a string literal the value stands for (a template's ``{current_date}``).
    ``key`` is the string key of the dict literal the value sits under until it is read out
    (``{"chat_id": row.id}``), so reading another key (``message["content"]``) leaves it out;
    ``read_key`` is the key a function reads out of its parameter (``PARAMETER`` only).
    ``guessed`` says the value is known only by its name (a parameter ``workspace``, a
    template field ``{current_date}``), not by what makes it.
    """

    code: str
    node: ast.AST = field(repr=False)
    label: str
    granularity: str = INSTANT
    via: tuple[str, ...] = ()
    tail: bool = True
    sort_by: str = ""
    consumer: ast.AST | None = field(default=None, repr=False)
    exact: bool = False
    drops_order: bool = False
    opaque: int = 0
    use: ast.AST | None = field(default=None, repr=False)
    within: str = ""
    key: str = ""
    read_key: str = ""
    guessed: bool = False

    def but(self, **changes: Any) -> Origin:
        """A copy with ``changes``: ``dataclasses.replace`` without its ``__init__`` call,
        which is most of the flow's time on large modules (``bench/check_python.py``)."""
        copy = object.__new__(Origin)
        copy.__dict__.update(self.__dict__, **changes)
        return copy

    def step(self, description: str, boundary: bool = False) -> Origin:
        """Record that the value went through ``description`` (a construct, or a return)."""
        if description in self.via or len(self.via) >= 3:
            return self
        if not boundary and any(not s.startswith("return value") for s in self.via):
            return self
        return self.but(via=(*self.via, description))

    def effect(self) -> tuple[object, ...]:
        """What :func:`substituted` reads of a ``PARAMETER`` placeholder: two placeholders
        with the same effect turn an argument's origins into the same origins."""
        return (
            self.label,
            self.drops_order,
            self.read_key,
            self.key,
            self.tail,
            self.opaque,
            self.granularity,
            id(self.consumer),
            self.exact,
            self.sort_by,
            self.via,
        )


def merge(*groups: Iterable[Origin]) -> tuple[Origin, ...]:
    """The origins of all groups, each (code, node, key) once, in order: the first name a
    value was read through stands for the others.

    Of two copies the more direct one wins: a value that reaches the text both through an
    unknown call and directly does reach it.
    """
    index: dict[tuple[str, int, str], int] = {}
    out: list[Origin] = []
    for group in groups:
        for origin in group:
            key = (origin.code, id(origin.node), origin.key)
            if key not in index:
                index[key] = len(out)
                out.append(origin)
            elif out[index[key]].opaque > origin.opaque:
                out[index[key]] = origin
    return tuple(out)


def without_order(origins: Iterable[Origin]) -> tuple[Origin, ...]:
    """``origins`` after something that does not depend on order (``sorted``, ``len``)."""
    return tuple(
        o.but(drops_order=True) if o.code == PARAMETER else o
        for o in origins
        if o.code != UNORDERED
    )


def opaque(origins: Iterable[Origin]) -> tuple[Origin, ...]:
    """``origins`` passed as arguments to a call whose result may or may not carry them."""
    return tuple(o if o.opaque >= 2 else o.but(opaque=o.opaque + 1) for o in origins)


def read_at(origins: Iterable[Origin], use: ast.AST) -> tuple[Origin, ...]:
    """``origins`` of an assigned value, read through the name ``use``."""
    return tuple(o if o.use is not None else o.but(use=use) for o in origins)


def stepped(
    origins: Iterable[Origin], description: str, boundary: bool = False
) -> tuple[Origin, ...]:
    return tuple(o.step(description, boundary) for o in origins)


def keyed(origins: Iterable[Origin], key: str) -> tuple[Origin, ...]:
    """``origins`` of a value put under ``key`` in a dict literal."""
    return tuple(o.but(key=key) for o in origins)


def read_out(origins: Iterable[Origin], key: str) -> tuple[Origin, ...]:
    """``origins`` of a mapping, read at ``key``: values under other keys are left out."""
    out = []
    for origin in origins:
        if origin.key:
            if origin.key == key:
                out.append(origin.but(key=""))
        elif origin.code == PARAMETER and not origin.read_key:
            out.append(origin.but(read_key=key))
        else:
            out.append(origin)
    return tuple(out)


def not_tail(origins: Iterable[Origin]) -> tuple[Origin, ...]:
    return tuple(o.but(tail=False) if o.tail else o for o in origins)


def coarsened(origins: Iterable[Origin], granularity: str) -> tuple[Origin, ...]:
    """Time origins reduced to ``granularity`` (a date keeps only the day)."""
    return tuple(
        o.but(granularity=granularity)
        if o.granularity == INSTANT and o.code in (TIMESTAMP, PARAMETER)
        else o
        for o in origins
    )


def format_granularity(fmt: str) -> str:
    """``daily`` when a strftime format shows no unit smaller than a day, else ``instant``."""
    directives = set(_DIRECTIVE.findall(fmt))
    return INSTANT if directives & TIME_DIRECTIVES or not directives else DAILY


def consumed(
    origins: Iterable[Origin], node: ast.AST, exact: bool, strings: bool = False
) -> tuple[Origin, ...]:
    """Unordered origins first iterated at ``node`` (``strings``: its items must be text)."""
    out = []
    for origin in origins:
        if origin.code in (UNORDERED, PARAMETER) and origin.consumer is None:
            sort_by = "plain" if strings and origin.sort_by != "by name" else origin.sort_by
            origin = origin.but(consumer=node, exact=exact, sort_by=sort_by)
        out.append(origin)
    return tuple(out)


def substituted(placeholder: Origin, argument: Iterable[Origin]) -> tuple[Origin, ...]:
    """The origins of an argument, seen through what the function did with its parameter."""
    out = []
    for origin in argument:
        if placeholder.drops_order and origin.code == UNORDERED:
            continue
        if placeholder.read_key:
            if origin.key not in ("", placeholder.read_key):
                continue
            origin = origin.but(key="")
        if placeholder.key:
            origin = origin.but(key=placeholder.key)
        if not placeholder.tail and origin.tail:
            origin = origin.but(tail=False)
        if placeholder.opaque:
            origin = origin.but(opaque=min(origin.opaque + placeholder.opaque, 2))
        if placeholder.granularity != INSTANT:
            origin = coarsened((origin,), placeholder.granularity)[0]
        if placeholder.consumer is not None:
            strings = placeholder.sort_by == "plain"
            origin = consumed((origin,), placeholder.consumer, placeholder.exact, strings)[0]
        for step in placeholder.via:
            origin = origin.step(step, boundary=step.startswith("return value"))
        out.append(origin)
    return tuple(out)
