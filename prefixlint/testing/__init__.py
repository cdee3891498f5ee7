"""Assert in tests that a prompt builder keeps its prefix stable (a pytest plugin too).

``assert_prefix_stable(build, calls)`` calls ``build`` once per call, renders each result to
tokens and checks that the part before the variable point is identical token for token:
across different arguments (user questions), across successive turns (``turns=True``: each
turn's history is a prefix of the next turn), across interpreters with different
``PYTHONHASHSEED`` values (``hash_seeds``), and across clock times (``clocks``). On failure it
raises ``AssertionError`` with the first divergent token, both renderings around it and the
likely cause code.

Loaded by pytest through the ``pytest11`` entry point; it imports only the standard library
until an assertion runs. The ``frozen_clock`` fixture freezes the time seen by given modules
for the rest of a test.
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from types import ModuleType
from typing import Any

from prefixlint.testing.calls import Call, as_call, call
from prefixlint.testing.clock import freeze_clock

__all__ = ["Call", "assert_prefix_stable", "call", "freeze_clock"]


def _resolve(build: Callable[..., object] | str) -> Callable[..., object]:
    if callable(build):
        return build
    from prefixlint.testing.worker import resolve

    return resolve(build)


def _module_of(function: Callable[..., object]) -> ModuleType | None:
    return inspect.getmodule(function) or sys.modules.get(getattr(function, "__module__", ""))


def assert_prefix_stable(
    build: Callable[..., object] | str,
    calls: Iterable[Any] = ((),),
    *,
    variable_from: str | int | None = None,
    turns: bool = False,
    hash_seeds: Iterable[int] = (),
    clocks: Iterable[datetime | float] = (),
    clock_modules: Iterable[ModuleType | str] = (),
    template: str = "qwen3",
    tokenizer: str = "qwen",
    enable_thinking: bool = False,
) -> int:
    """Assert that every call of ``build`` shares its stable prefix; return its token count.

    ``build`` is a function or ``"module:function"``; it returns a prompt string, a list of
    messages, a dict with ``messages`` (``tools``, ``system``) or a ``ChatRequest``.
    ``calls`` holds one item per call: a ``call(...)``, a tuple of positional arguments, a
    dict of keyword arguments or a single argument.

    The variable part starts at ``variable_from``: a marker string (its first occurrence), a
    token count, or by default the last user message (with ``turns``, the generation
    prompt; for strings, nowhere: the whole text must be identical).
    ``hash_seeds`` re-runs every call in a new interpreter per seed (the builder must be
    importable; arguments and result JSON-serialisable). ``clocks`` runs every call at
    each of these times, frozen in the builder's module and ``clock_modules``.
    Returns the number of tokens shared by all calls.
    """
    from prefixlint.testing import stability

    options = stability.Options(variable_from, turns, template, tokenizer, enable_thinking)
    function = _resolve(build)
    modules = [_module_of(function)] + [
        importlib.import_module(m) if isinstance(m, str) else m for m in clock_modules
    ]
    seeds = list(hash_seeds)
    builder = stability.Builder(
        function,
        target=stability.builder_target(build) if seeds else "",
        clock_modules=tuple(m for m in modules if m is not None),
    )
    base, variants = builder.samples([as_call(c) for c in calls], list(clocks), seeds, options)
    stability.check(base, variants, options)
    return min(sample.stable for sample in base)


try:
    import pytest
except ImportError:  # outside pytest the assertion works without the fixture
    pass
else:

    @pytest.fixture
    def frozen_clock() -> Iterator[Callable[..., datetime]]:
        """``frozen_clock(when, module, ...)``: freeze those modules' clock until the test ends."""
        from contextlib import ExitStack

        with ExitStack() as stack:

            def freeze(when: datetime | float, *modules: ModuleType) -> datetime:
                return stack.enter_context(freeze_clock(when, *modules))

            yield freeze
