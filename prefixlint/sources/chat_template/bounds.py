"""Bounds on what one chat-template rendering may build, checked before the work is done.

A ``tokenizer_config.json`` from a model hub is untrusted: ``'a' * 10**9``, ``'x'.center(10**9)``,
``'%999999999d' % 1`` or nested ``range`` loops would each hold the check for minutes or
exhaust memory. :class:`Bounds` refuses, with :class:`SandboxLimit` at the template line:
strings (and the output) longer than ``template-chars``, ranges and repeated lists longer than
``template-range``, integers of more digits than ``template-chars``, more than
``template-steps`` template lines run, and renderings longer than ``template-seconds``.
"""

from __future__ import annotations

import re
import string
import time
from collections.abc import Callable
from typing import Any, NoReturn, Protocol, TypeAlias

import jinja2.filters
import jinja2.utils
from jinja2.nodes import EvalContext

from prefixlint.limits import Limits

_BITS_PER_DIGIT = 4
_CLOCK_EVERY = 1024
_PRINTF_FIELD = r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?"

# A value from template code: any Python object, its type checked where it matters.
TemplateValue: TypeAlias = Any


class SandboxLimit(Exception):
    """A rendering went over one of its bounds at template ``line``."""

    def __init__(self, message: str, line: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _numbers(text: str) -> list[int]:
    return [int(part) for part in re.findall(r"\d+", text)]


class Bounds:
    """The budget of one rendering; ``line_of()`` says which template line is running."""

    def __init__(self, limits: Limits, line_of: Callable[[], int] = lambda: 1) -> None:
        self.limits = limits
        self.line_of = line_of
        self.steps = 0
        self.deadline = time.monotonic() + limits.template_seconds

    def refuse(self, what: str) -> NoReturn:
        raise SandboxLimit(what, self.line_of())

    def chars(self, count: int) -> None:
        if count > self.limits.template_chars:
            self.refuse(
                f"a string over {self.limits.template_chars} characters (limit template-chars)"
            )

    def items(self, count: int) -> None:
        if count > self.limits.template_range:
            self.refuse(
                f"a sequence over {self.limits.template_range} items (limit template-range)"
            )

    def bits(self, count: int) -> None:
        if count > self.limits.template_chars * _BITS_PER_DIGIT:
            self.refuse(f"a number over {self.limits.template_chars} digits (limit template-chars)")

    def step(self) -> None:
        """One template line run; checks the step count, and now and then the clock."""
        self.steps += 1
        if self.steps > self.limits.template_steps:
            self.refuse(
                f"over {self.limits.template_steps} template lines run (limit template-steps)"
            )
        if self.steps % _CLOCK_EVERY == 0 and time.monotonic() > self.deadline:
            self.refuse(
                f"rendering over {self.limits.template_seconds:g} s (limit template-seconds)"
            )

    def _repeat(self, sequence: Any, times: Any) -> None:
        if not isinstance(times, int) or isinstance(times, bool):
            return
        size = len(sequence) * max(times, 0)
        (self.chars if isinstance(sequence, str) else self.items)(size)

    def printf(self, text: str, arguments: Any) -> None:
        """Refuse a ``%`` format whose widths (given or from ``*``) are over the limit."""
        values = arguments if isinstance(arguments, tuple) else (arguments,)
        for width, precision in re.findall(_PRINTF_FIELD, text):
            for number in (width, precision):
                if number.isdigit():
                    self.chars(int(number))
        if "*" in text:
            for value in values:
                if isinstance(value, int):
                    self.chars(value)

    def format_spec(
        self, text: str, args: tuple[TemplateValue, ...], kwargs: dict[str, TemplateValue]
    ) -> None:
        """Refuse a ``str.format`` whose field widths (given or nested) are over the limit."""
        try:
            fields = list(string.Formatter().parse(text))
        except ValueError:
            return
        for _literal, _name, spec, _conversion in fields:
            for number in _numbers(spec or ""):
                self.chars(number)
            if spec and "{" in spec:
                for value in (*args, *kwargs.values()):
                    if isinstance(value, int):
                        self.chars(value)

    def binop(self, operator: str, left: Any, right: Any) -> None:
        """Check ``left operator right`` before it runs."""
        if operator == "*":
            if isinstance(left, int) and isinstance(right, int):
                self.bits(abs(left).bit_length() + abs(right).bit_length())
            elif isinstance(left, str | list | tuple):
                self._repeat(left, right)
            elif isinstance(right, str | list | tuple):
                self._repeat(right, left)
        elif operator == "**" and isinstance(left, int) and isinstance(right, int):
            if abs(left) > 1 and right > 0:
                self.bits(abs(left).bit_length() * right)
        elif operator == "%" and isinstance(left, str):
            self.printf(left, right)
        elif operator == "+" and isinstance(left, str) and isinstance(right, str):
            self.chars(len(left) + len(right))
        elif operator == "+" and isinstance(left, list | tuple) and isinstance(right, list | tuple):
            self.items(len(left) + len(right))

    def join(self, separator: str, items: list[TemplateValue]) -> None:
        self.chars(sum(len(str(item)) for item in items) + len(separator) * len(items))

    def replace(self, text: str, old: str, new: str, count: Any = -1) -> None:
        found = len(text) + 1 if old == "" else text.count(old)
        if isinstance(count, int) and count >= 0:
            found = min(found, count)
        self.chars(len(text) + found * max(len(new) - len(old), 0))

    def range(self, *args: int) -> range:
        numbers = range(*args)
        self.items(len(numbers))
        return numbers

    def method(self, obj: Any, name: Any, value: Any) -> Any:
        """``value`` (the attribute ``name`` of ``obj``), bounded if it is a sizing str method."""
        if not isinstance(obj, str) or not callable(value):
            return value
        if name in ("center", "ljust", "rjust", "zfill"):

            def padded(width: TemplateValue, *rest: TemplateValue) -> TemplateValue:
                if isinstance(width, int):
                    self.chars(width)
                return value(width, *rest)

            return padded
        if name == "expandtabs":

            def expanded(tabsize: TemplateValue = 8) -> TemplateValue:
                if isinstance(tabsize, int):
                    self.chars(len(obj) + obj.count("\t") * tabsize)
                return value(tabsize)

            return expanded
        if name in ("format", "format_map"):

            def formatted(*args: TemplateValue, **kwargs: TemplateValue) -> TemplateValue:
                self.format_spec(obj, args, kwargs)
                return value(*args, **kwargs)

            return formatted
        if name == "join":

            def joined(items: TemplateValue) -> TemplateValue:
                items = list(items)
                self.join(obj, items)
                return value(items)

            return joined
        if name == "replace":

            def replaced(
                old: TemplateValue, new: TemplateValue, count: TemplateValue = -1
            ) -> TemplateValue:
                if isinstance(old, str) and isinstance(new, str):
                    self.replace(obj, old, new, count)
                return value(old, new, count)

            return replaced
        return value


class Bounded(Protocol):
    """An environment whose renderings are checked against its current ``bounds``."""

    bounds: Bounds


TemplateCallable: TypeAlias = Callable[..., TemplateValue]


def bounded_globals(environment: Bounded) -> dict[str, TemplateCallable]:
    """``range`` and ``lipsum``, checked against ``environment.bounds`` when called."""

    def lipsum(
        n: TemplateValue = 5,
        html: TemplateValue = True,
        min: TemplateValue = 20,
        max: TemplateValue = 100,
    ) -> str:
        environment.bounds.items(n if isinstance(n, int) else 0)
        environment.bounds.chars(n * max * 16 if isinstance(n, int) and isinstance(max, int) else 0)
        return jinja2.utils.generate_lorem_ipsum(n, html, min, max)

    def bounded_range(*args: int) -> range:
        return environment.bounds.range(*args)

    return {"range": bounded_range, "lipsum": lipsum}


def bounded_filters(environment: Bounded, to_json: TemplateCallable) -> dict[str, TemplateCallable]:
    """Jinja's sizing filters (and ``to_json`` as ``tojson``), checked against
    ``environment.bounds`` when called."""
    base = jinja2.filters

    def center(value: TemplateValue, width: TemplateValue = 80) -> str:
        environment.bounds.chars(width if isinstance(width, int) else 0)
        return base.do_center(value, width)

    def indent(
        text: TemplateValue,
        width: TemplateValue = 4,
        first: TemplateValue = False,
        blank: TemplateValue = False,
    ) -> str:
        size = width if isinstance(width, int) else len(str(width))
        environment.bounds.chars(len(str(text)) + (str(text).count("\n") + 1) * size)
        return base.do_indent(text, width, first, blank)

    def format_filter(value: TemplateValue, *args: TemplateValue, **kwargs: TemplateValue) -> str:
        environment.bounds.printf(str(value), args or kwargs)
        return base.do_format(value, *args, **kwargs)

    @jinja2.pass_eval_context
    def replace(
        eval_ctx: EvalContext,
        text: TemplateValue,
        old: TemplateValue,
        new: TemplateValue,
        count: TemplateValue = None,
    ) -> str:
        environment.bounds.replace(str(text), str(old), str(new), -1 if count is None else count)
        return base.do_replace(eval_ctx, text, old, new, count)

    @jinja2.pass_eval_context
    def join(
        eval_ctx: EvalContext,
        value: TemplateValue,
        d: TemplateValue = "",
        attribute: TemplateValue = None,
    ) -> str:
        items = list(value)
        environment.bounds.join(str(d), items)
        joined: str = base.do_join(eval_ctx, items, d, attribute)
        return joined

    def slice_filter(
        value: TemplateValue, slices: TemplateValue, fill_with: TemplateValue = None
    ) -> TemplateValue:
        environment.bounds.items(slices if isinstance(slices, int) else 0)
        return base.do_slice(value, slices, fill_with)

    def tojson(
        value: TemplateValue,
        ensure_ascii: TemplateValue = False,
        indent: TemplateValue = None,
        separators: TemplateValue = None,
        sort_keys: TemplateValue = False,
    ) -> TemplateValue:
        environment.bounds.chars(indent if isinstance(indent, int) else 0)
        return to_json(value, ensure_ascii, indent, separators, sort_keys)

    return {
        "center": center,
        "indent": indent,
        "format": format_filter,
        "replace": replace,
        "join": join,
        "slice": slice_filter,
        "tojson": tojson,
    }
