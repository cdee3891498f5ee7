"""Render what a prompt builder returns and compare the parts that must stay identical.

A builder returns a prompt string, a list of messages, a dict with ``messages`` (and
``tools``, ``system``, ``format``) such as the keyword arguments of an SDK call, or a
:class:`~prefixlint.request.ChatRequest`. Requests are rendered to tokens with
:func:`prefixlint.chat.render` (Qwen3 chat template and tokenizer by default); strings are
tokenized as they are.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import subprocess
import sys
from bisect import bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from types import ModuleType
from typing import Any

from prefixlint import codes
from prefixlint.auditing import classify
from prefixlint.auditing.diff import escape
from prefixlint.chat import content_text, render
from prefixlint.request import ChatRequest, Rendered
from prefixlint.sequences import common_prefix_length
from prefixlint.testing.calls import Call
from prefixlint.testing.clock import freeze_clock
from prefixlint.tokenizers import get_tokenizer

WINDOW_TOKENS = 8
WORKER_TIMEOUT_S = 120


def to_json(result: Any) -> Any:
    """A builder's result in a JSON-able form (a ``ChatRequest`` becomes a dict)."""
    if isinstance(result, ChatRequest):
        return {
            "system": result.system,
            "messages": list(result.messages),
            "tools": list(result.tools),
            "format": result.format,
        }
    return result


def to_request(result: Any) -> ChatRequest | str:
    """The prompt a builder returned: a string, or a request to render."""
    if isinstance(result, (str, ChatRequest)):
        return result
    if isinstance(result, (list, tuple)):
        return ChatRequest(line=0, format="openai-chat", messages=tuple(result))
    if isinstance(result, dict) and "messages" in result:
        system = result.get("system")
        if system is not None and not isinstance(system, str):
            system = content_text(system)
        return ChatRequest(
            line=0,
            format=result.get("format", "anthropic" if system is not None else "openai-chat"),
            system=system,
            messages=tuple(result["messages"]),
            tools=tuple(result.get("tools") or ()),
        )
    raise TypeError(
        "a prompt builder must return a string, a list of messages, a dict with 'messages'"
        f" or a ChatRequest, not {type(result).__name__}"
    )


@dataclass(frozen=True)
class Options:
    """How to render and where the variable part starts (see ``assert_prefix_stable``)."""

    variable_from: str | int | None = None
    turns: bool = False
    template: str = "qwen3"
    tokenizer: str = "qwen"
    enable_thinking: bool = False


@dataclass(frozen=True)
class Sample:
    """One rendering of the builder's result and how many of its tokens must be shared."""

    label: str
    text: str
    tokens: tuple[int, ...]
    stable: int
    request: ChatRequest | None = None
    rendered: Rendered | None = None


def _tokens_before(offsets: Sequence[tuple[int, int]], char: int) -> int:
    """How many tokens end at or before character ``char``."""
    return bisect_right([end for _, end in offsets], char)


def _default_cut(rendered: Rendered, request: ChatRequest, turns: bool) -> int:
    """Turns: up to the generation prompt. Otherwise: up to the last user message."""
    wanted: str | None = "generation_prompt"
    if not turns:
        users = [i for i, m in enumerate(request.messages) if m.get("role") == "user"]
        wanted = f"messages[{users[-1]}]" if users else None
    for component in rendered.components:
        if component.name == wanted:
            return component.token_start
    return len(rendered.tokens)


def make_sample(label: str, result: Any, options: Options) -> Sample:
    """Render ``result`` and find where its variable part starts."""
    prompt = to_request(result)
    tokenizer = get_tokenizer(options.tokenizer)
    if isinstance(prompt, str):
        text, tokens, request, rendered = prompt, tuple(tokenizer.encode(prompt)), None, None
    else:
        request = prompt
        rendered = render(
            prompt,
            template=options.template,
            tokenizer=options.tokenizer,
            enable_thinking=options.enable_thinking,
        )
        text, tokens = rendered.text, rendered.tokens
    marker = options.variable_from
    if isinstance(marker, int):
        stable = min(marker, len(tokens))
    elif isinstance(marker, str):
        char = text.find(marker)
        if char < 0:
            raise AssertionError(f"{label}: variable_from marker {marker!r} is not in the prompt")
        stable = _tokens_before(tokenizer.offsets(text), char)
    elif rendered is not None and request is not None:
        stable = _default_cut(rendered, request, options.turns)
    else:
        stable = len(tokens)
    return Sample(label, text, tokens, stable, request, rendered)


def run_in_subprocess(target: str, one_call: Call, seed: int) -> Any:
    """The builder's JSON result when run in a fresh interpreter with ``PYTHONHASHSEED=seed``."""
    try:
        payload = json.dumps({"args": list(one_call.args), "kwargs": one_call.kwargs})
    except TypeError as exc:
        raise TypeError(f"hash_seeds needs JSON-serialisable builder arguments: {exc}") from None
    env = {
        **os.environ,
        "PYTHONHASHSEED": str(seed),
        "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
    }
    done = subprocess.run(
        [sys.executable, "-m", "prefixlint.testing.worker", target],
        input=payload,
        capture_output=True,
        text=True,
        env=env,
        timeout=WORKER_TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        raise AssertionError(f"{target} failed with PYTHONHASHSEED={seed}:\n{tail}")
    return json.loads(done.stdout)


def _text_of(data: Any) -> str | None:
    if isinstance(data, str):
        return data
    if isinstance(data, dict):
        return content_text(data.get("content"))
    return None


def _cause(a: Sample, b: Sample, at: int, turns: bool) -> str:
    """The likely cause code of the difference at token ``at``.

    Successive turns are classified as the audit classifies one conversation (an edited
    earlier message is PFX501). Separate calls are not one conversation: a differing
    component is classified by its text (PFX101 date, PFX102 id, PFX40x whitespace, ...) or
    tool list (PFX201 order, ...), else ``content-changed``.
    """
    if a.request is None or b.request is None or b.rendered is None:
        return _named(classify.text_change_code(a.text, b.text) or codes.CONTENT_CHANGED)
    component = b.rendered.component_at_token(at)
    if component is None:
        return _named(codes.CONTENT_CHANGED)
    name = component.name
    if turns:
        code, name = classify.classify(a.request, b.request, name, True)
    elif name.startswith("tools"):
        code = classify.tools_code(a.request.tools, b.request.tools)
    else:
        text_a = _text_of(classify.component_data(a.request, name))
        text_b = _text_of(classify.component_data(b.request, name))
        code = None
        if text_a is not None and text_b is not None and text_a != text_b:
            code = classify.text_change_code(text_a, text_b)
    return f"{_named(code or codes.CONTENT_CHANGED)} in {name}"


def _named(code: str) -> str:
    from prefixlint import registry

    try:
        return f"{code} ({registry.doc(code).name})"
    except KeyError:
        return code


def divergence_message(a: Sample, b: Sample, at: int, options: Options) -> str:
    """Where ``b`` departs from ``a``: token, both renderings around it, likely cause."""
    tokenizer = get_tokenizer(options.tokenizer)
    start = max(0, at - WINDOW_TOKENS)

    def shown(sample: Sample) -> str:
        before = tokenizer.decode(list(sample.tokens[start:at]))
        after = tokenizer.decode(list(sample.tokens[at : at + WINDOW_TOKENS]))
        return f"…{escape(before)}⟦{escape(after)}⟧…"

    relation = "does not continue" if options.turns else "differs from"
    width = max(len(a.label), len(b.label))
    return "\n".join(
        (
            f"prompt prefix is not stable: {b.label} {relation} {a.label} at token {at}"
            f" ({at} of the {a.stable} tokens that should be shared are identical)",
            f"  likely cause: {_cause(a, b, at, options.turns)}",
            f"  {a.label:<{width}}  {shown(a)}",
            f"  {b.label:<{width}}  {shown(b)}",
        )
    )


def first_divergence(a: Sample, b: Sample, *, prefix_only: bool) -> int | None:
    """The first token where ``b`` departs from ``a``'s stable part, or ``None``.

    ``prefix_only``: ``b`` may go on past ``a``'s stable part (successive turns). Otherwise
    both stable parts must be equal, length included.
    """
    mine = a.tokens[: a.stable]
    theirs = b.tokens if prefix_only else b.tokens[: b.stable]
    at = common_prefix_length(mine, theirs)
    if at == len(mine) and (prefix_only or at == len(theirs)):
        return None
    return at


def builder_target(build: Callable[..., object] | str) -> str:
    """``module:qualname`` of the builder, for running it in another process."""
    if isinstance(build, str):
        return build
    module, qualname = getattr(build, "__module__", None), getattr(build, "__qualname__", "")
    if not module or module == "__main__" or "<locals>" in qualname:
        raise ValueError(
            "hash_seeds runs the builder in another process: define it at module level in an"
            " importable module, or pass it as 'module:function'"
        )
    return f"{module}:{qualname}"


def _clock_label(when: datetime | float) -> str:
    return when.isoformat(timespec="seconds") if isinstance(when, datetime) else f"t={when}"


@dataclass(frozen=True)
class Builder:
    """The function under test, how to run it in another process, and whose clock to freeze."""

    function: Callable[..., object]
    target: str = ""
    clock_modules: tuple[ModuleType, ...] = ()

    @property
    def name(self) -> str:
        return getattr(self.function, "__name__", "build")

    def run(self, one_call: Call, when: datetime | float | None = None) -> Any:
        if when is None:
            return self.function(*one_call.args, **one_call.kwargs)
        with freeze_clock(when, *self.clock_modules):
            return self.function(*one_call.args, **one_call.kwargs)

    def samples(
        self,
        calls: Sequence[Call],
        clocks: Sequence[datetime | float],
        seeds: Sequence[int],
        options: Options,
    ) -> tuple[list[Sample], list[tuple[Sample, Sample]]]:
        """One sample per call (at the first clock), and (that sample, variant) pairs for
        every other clock and every hash seed."""
        if not calls:
            raise ValueError("assert_prefix_stable needs at least one call")
        base, variants = [], []
        for index, one_call in enumerate(calls, start=1):
            label = f"call {index} {one_call.describe(self.name)}"
            first = clocks[0] if clocks else None
            shown = f"{label} at {_clock_label(clocks[0])}" if clocks else label
            sample = make_sample(shown, self.run(one_call, first), options)
            base.append(sample)
            for when in clocks[1:]:
                result = self.run(one_call, when)
                variant = make_sample(f"{label} at {_clock_label(when)}", result, options)
                variants.append((sample, variant))
            for seed in seeds:
                result = run_in_subprocess(self.target, one_call, seed)
                variant = make_sample(f"{label} PYTHONHASHSEED={seed}", result, options)
                variants.append((sample, variant))
        return base, variants


def check(base: list[Sample], variants: list[tuple[Sample, Sample]], options: Options) -> None:
    """Raise ``AssertionError`` at the first sample that departs from its reference."""
    if options.turns:
        pairs = list(itertools.pairwise(base))
    else:
        pairs = [(base[0], other) for other in base[1:]]
    for earlier, later in pairs:
        at = first_divergence(earlier, later, prefix_only=options.turns)
        if at is not None:
            raise AssertionError(divergence_message(earlier, later, at, options))
    same_call = dataclasses.replace(options, turns=False)
    for reference, other in variants:
        at = first_divergence(reference, other, prefix_only=False)
        if at is not None:
            raise AssertionError(divergence_message(reference, other, at, same_call))
