"""Render chat templates the way transformers does, with a fake clock and line tracing.

The environment mirrors ``transformers.utils.chat_template_utils._compile_jinja_template``
(transformers 4.4x-5.x): an ``ImmutableSandboxedEnvironment`` with ``trim_blocks`` and
``lstrip_blocks``, the ``loopcontrols`` extension, a ``{% generation %}`` tag that renders its
body, ``tojson`` as ``json.dumps(ensure_ascii=False)``, and the globals ``raise_exception``,
``strftime_now``, ``dict`` and ``namespace``. Template code never runs outside the sandbox.

Tracing records, for every chunk of output, the template line that emitted it, so that a
finding about the rendered text can point at the template source.
"""

from __future__ import annotations

import json
import sys
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import FrameType
from typing import Any, NoReturn, TypeAlias, cast

import jinja2
import jinja2.ext
from jinja2 import nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.parser import Parser
from jinja2.runtime import Context, Undefined
from jinja2.sandbox import ImmutableSandboxedEnvironment

from prefixlint.limits import DEFAULT_LIMITS, Limits
from prefixlint.sources.chat_template.bounds import (
    Bounds,
    SandboxLimit,
    TemplateValue,
    bounded_filters,
    bounded_globals,
)

_TEMPLATE_FILENAME = "<template>"
_CO_GENERATOR = 0x20

# What ``sys.settrace`` calls: a frame, an event name and its argument; returns the local hook.
_Trace: TypeAlias = Callable[[FrameType, str, object], "_Trace | None"]


class TemplateFailure(Exception):
    """Rendering failed at template ``line``: ``raise_exception`` was called (``raised``) or
    the template hit an error (undefined value, wrong type, ...)."""

    def __init__(self, message: str, line: int, *, raised: bool) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.raised = raised


class _GenerationTag(jinja2.ext.Extension):
    """transformers' ``{% generation %}...{% endgeneration %}``: here it renders its body."""

    tags = {"generation"}  # noqa: RUF012 (Extension declares it a set)

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        return nodes.CallBlock(self.call_method("_render_body"), [], [], body).set_lineno(lineno)

    def _render_body(self, caller: Callable[[], str]) -> str:
        return caller()


class _Namespace(jinja2.utils.Namespace):
    """``namespace()`` that refuses underscore attributes, as transformers' does."""

    def __init__(*args: TemplateValue, **kwargs: TemplateValue) -> None:
        self, args = args[0], args[1:]
        attrs = dict(*args, **kwargs)
        for name in attrs:
            _Namespace._check_name(name)
        jinja2.utils.Namespace.__init__(self, attrs)

    def __setitem__(self, name: str, value: TemplateValue) -> None:
        _Namespace._check_name(name)
        jinja2.utils.Namespace.__setitem__(self, name, value)

    @staticmethod
    def _check_name(name: object) -> None:
        if isinstance(name, str) and name.startswith("_"):
            raise jinja2.exceptions.SecurityError(f"namespace attribute {name!r} is not allowed")


class _LineMarkingCodeGenerator(CodeGenerator):
    """Jinja's code generator, with every output item on its own line-marked ``yield``.

    Jinja marks source lines only on some statements, and folds constant output (``{{- 'x' }}``,
    plain text) into the preceding statement's line; one ``Output`` per item, each preceded by
    a mark, lets every emitted chunk be traced to its own template line.
    """

    def visit_Output(self, node: nodes.Output, frame: Frame) -> None:
        for child in node.nodes:
            self.newline(child)
            super().visit_Output(nodes.Output([child], lineno=child.lineno), frame)

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        """``a ~ b`` through the environment, which bounds the length of the result."""
        self.write("environment.concat(map(str, (")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write(")))")


class _Environment(ImmutableSandboxedEnvironment):
    """The sandbox with :class:`~prefixlint.sources.chat_template.bounds.Bounds` on the operators,
    string methods, joins and filters that can build huge values from small inputs."""

    code_generator_class = _LineMarkingCodeGenerator
    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def __init__(self, **options: Any) -> None:  # Environment's keyword arguments
        super().__init__(**options)
        self.bounds = Bounds(DEFAULT_LIMITS)

    def concat(self, pieces: Iterable[str]) -> str:
        pieces = list(pieces)
        self.bounds.chars(sum(len(piece) for piece in pieces))
        return "".join(pieces)

    def call_binop(
        self, context: Context, operator: str, left: TemplateValue, right: TemplateValue
    ) -> TemplateValue:
        self.bounds.binop(operator, left, right)
        return super().call_binop(context, operator, left, right)

    def getattr(self, obj: TemplateValue, attribute: str) -> TemplateValue | Undefined:
        return self.bounds.method(obj, attribute, super().getattr(obj, attribute))

    def getitem(self, obj: TemplateValue, argument: TemplateValue) -> TemplateValue | Undefined:
        return self.bounds.method(obj, argument, super().getitem(obj, argument))


def _tojson(
    value: TemplateValue,
    ensure_ascii: bool = False,
    indent: int | str | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def _template_frame_line(template: jinja2.Template) -> int:
    """The template line of the innermost template frame on the current stack (1 if none)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename == _TEMPLATE_FILENAME:
            return template.get_corresponding_lineno(frame.f_lineno)
        frame = frame.f_back
    return 1


def _traceback_line(template: jinja2.Template, exc: BaseException) -> int:
    """The template line of the innermost template frame in ``exc``'s traceback (1 if none)."""
    line = 1
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == _TEMPLATE_FILENAME:
            line = template.get_corresponding_lineno(tb.tb_lineno)
        tb = tb.tb_next
    return line


@dataclass
class FakeClock:
    """What ``strftime_now`` reads; ``call_lines`` collects the template lines that called it."""

    now: datetime
    call_lines: set[int] = field(default_factory=set)


def compile_template(source: str) -> jinja2.Template:
    """Compile ``source``; raises ``jinja2.TemplateSyntaxError`` (with ``lineno``)."""
    env = _Environment(
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=[_GenerationTag, jinja2.ext.loopcontrols],
    )
    env.filters.update(bounded_filters(env, _tojson))
    env.globals.update(bounded_globals(env))
    env.globals["dict"] = dict
    env.globals["namespace"] = _Namespace
    return env.from_string(source)


@dataclass(frozen=True)
class Rendering:
    """Rendered text, and the template line that emitted each chunk of it."""

    text: str
    chunk_starts: tuple[int, ...]
    chunk_lines: tuple[int, ...]

    def line_at(self, offset: int) -> int:
        """The template line that emitted the character at ``offset`` (1 if unknown)."""
        index = bisect_right(self.chunk_starts, offset) - 1
        return self.chunk_lines[index] if index >= 0 else 1


class _LineTracer:
    """A ``sys.settrace`` hook that remembers the last line run in a template generator frame
    and counts every template line run against ``bounds``."""

    def __init__(self, bounds: Bounds) -> None:
        self.code_line = 0
        self.bounds = bounds

    def global_trace(self, frame: FrameType, event: str, arg: object) -> _Trace | None:
        if frame.f_code.co_filename != _TEMPLATE_FILENAME:
            return None
        return self.local_trace if frame.f_code.co_flags & _CO_GENERATOR else self.count_trace

    def local_trace(self, frame: FrameType, event: str, arg: object) -> _Trace:
        if event == "line":
            self.code_line = frame.f_lineno
            self.bounds.step()
        return self.local_trace

    def count_trace(self, frame: FrameType, event: str, arg: object) -> _Trace:
        if event == "line":
            self.bounds.step()
        return self.count_trace


def render(
    template: jinja2.Template,
    variables: Mapping[str, object],
    clock: FakeClock,
    limits: Limits = DEFAULT_LIMITS,
) -> Rendering:
    """Render ``template`` with ``variables`` at ``clock``'s time, tracing source lines.

    Raises :class:`TemplateFailure` when the template calls ``raise_exception`` or fails, and
    :class:`SandboxLimit` when it goes over one of ``limits``.
    """

    def raise_exception(message: object) -> NoReturn:
        raise TemplateFailure(str(message), _template_frame_line(template), raised=True)

    def strftime_now(fmt: str) -> str:
        clock.call_lines.add(_template_frame_line(template))
        return clock.now.strftime(fmt)

    context = template.new_context(
        {**variables, "raise_exception": raise_exception, "strftime_now": strftime_now}
    )
    bounds = Bounds(limits, lambda: _template_frame_line(template))
    # Templates come from compile_template, so their environment is an _Environment.
    cast("_Environment", template.environment).bounds = bounds
    tracer = _LineTracer(bounds)
    pieces: list[str] = []
    starts: list[int] = []
    lines: list[int] = []
    length = 0
    previous = sys.gettrace()
    sys.settrace(tracer.global_trace)
    try:
        for chunk in template.root_render_func(context):
            if not chunk:
                continue
            starts.append(length)
            lines.append(template.get_corresponding_lineno(tracer.code_line))
            pieces.append(chunk)
            length += len(chunk)
            if length > limits.template_chars:
                line = lines[-1]
                raise SandboxLimit(
                    f"output over {limits.template_chars} characters (limit template-chars)", line
                )
    except (TemplateFailure, SandboxLimit):
        raise
    except Exception as exc:  # the template's own errors: undefined values, wrong types, ...
        line = _traceback_line(template, exc)
        raise TemplateFailure(f"{type(exc).__name__}: {exc}", line, raised=False) from None
    finally:
        sys.settrace(previous)
    return Rendering("".join(pieces), tuple(starts), tuple(lines))
