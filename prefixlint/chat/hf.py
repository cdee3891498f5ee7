"""Render with a local Hugging Face tokenizer's own chat template (``template="hf:PATH"``).

The text is ``tokenizer.apply_chat_template(messages, tools=..., add_generation_prompt=True,
tokenize=False, enable_thinking=...)``: transformers renders it in its sandboxed Jinja
environment (prefixlint never executes template code itself), from local files only: a
folder, or a hub id already in the local Hugging Face cache, loaded offline
(:func:`prefixlint.tokenizers.hub_offline`).

An arbitrary template does not say where each component went, so components are found by
rendering variants of the request and comparing them with the full prompt:

- ``messages[k]`` ends where the rendering of ``messages[:k + 1]`` (no generation prompt)
  stops being a prefix of the full prompt;
- the tool block starts at the first character that changes when the request is rendered
  without tools, and ends at the last one (common suffix); ``tools[j + 1]`` starts where the
  rendering with only ``tools[:j + 1]`` departs from the full prompt.

Limits: boundaries are character comparisons, so a tool block that starts with the same
word as the system text it replaces (Hermes: ``You are a function calling AI`` against ``You
book flights``) starts a word late; a template that makes tools change text far apart (Llama
3: ``Environment: ipython`` in the system header, the schemas in the first user message)
gets one tool span covering both and what lies between. It costs one render per message and
per tool; a template that is not
prefix-monotonic (Qwen3 drops earlier reasoning, Mistral moves the system prompt to the last
user turn) or that refuses a partial conversation gives coarser components, never wrong
text or tokens: boundaries are clamped to be ordered, and a failing partial render merges
that component into its neighbour; text before the first component found is named
``template``. Tokens are the tokenizer's encoding of the whole text
(``add_special_tokens=False``, as vLLM does for chat prompts).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from prefixlint.chat.errors import TemplateError
from prefixlint.chat.memo import SegmentEncoder
from prefixlint.chat.messages import Message, component_names, template_messages
from prefixlint.chat.pieces import assemble
from prefixlint.request import ChatRequest, Rendered
from prefixlint.sequences import common_prefix_length
from prefixlint.tokenizers import HFTokenizer, Tokenizer, TokenizerError, get_tokenizer

Starts = list[tuple[int, str]]  # (position, component) starts, ordered


def common_suffix(a: str, b: str, floor: int) -> int:
    """Length of the common suffix of ``a`` and ``b`` that leaves ``floor`` chars of each."""
    limit = min(len(a), len(b)) - floor
    count = 0
    while count < limit and a[-1 - count] == b[-1 - count]:
        count += 1
    return count


class HFChatTemplate:
    """A Hugging Face tokenizer's chat template, with component boundaries by comparison."""

    def __init__(
        self, path: str, tokenizer: Tokenizer | str | None = None, *, enable_thinking: bool
    ) -> None:
        try:
            # An ``hf:`` spec always loads an HFTokenizer.
            loaded = cast(HFTokenizer, get_tokenizer(f"hf:{path}"))
        except TokenizerError as exc:
            raise TemplateError(str(exc)) from None
        self.hf = loaded.hf
        if not getattr(self.hf, "chat_template", None):
            raise TemplateError(f"hf:{path}: the tokenizer has no chat template")
        if tokenizer is None:
            tokenizer = f"hf:{path}"
        self.tokenizer = get_tokenizer(tokenizer) if isinstance(tokenizer, str) else tokenizer
        self.encoder = SegmentEncoder(self.tokenizer)
        self.name = f"hf:{path}"
        self.enable_thinking = enable_thinking

    def apply(
        self,
        messages: list[Message],
        tools: Sequence[dict[str, Any]],
        *,
        generation_prompt: bool,
        kwargs: dict[str, Any] | None = None,
    ) -> str:
        """The template's text; ``kwargs`` are the template variables (default:
        ``enable_thinking`` as configured)."""
        if kwargs is None:
            kwargs = {"enable_thinking": self.enable_thinking}
        try:
            text = self.hf.apply_chat_template(
                messages,
                tools=list(tools) or None,
                add_generation_prompt=generation_prompt,
                tokenize=False,
                **kwargs,
            )
        except Exception as exc:  # the template's own errors (raise_exception, TypeError, ...)
            first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            raise TemplateError(f"{self.name}: chat template failed: {first_line}") from None
        return cast(str, text)  # tokenize=False renders text

    def _partial(
        self,
        text: str,
        messages: list[Message],
        tools: Sequence[dict[str, Any]],
        generation_prompt: bool,
        kwargs: dict[str, Any] | None,
    ) -> tuple[int, str] | None:
        """Where a partial rendering departs from ``text``; None when it cannot render."""
        try:
            partial = self.apply(
                messages, tools, generation_prompt=generation_prompt, kwargs=kwargs
            )
        except TemplateError:
            return None
        return common_prefix_length(text, partial), partial

    def boundaries(
        self,
        text: str,
        messages: list[Message],
        tools: Sequence[dict[str, Any]],
        names: list[str],
        kwargs: dict[str, Any] | None = None,
    ) -> Starts:
        """``(position, component)`` starts, ordered, for ``text``."""
        starts = [(0, names[0])] if names else []
        for k in range(1, len(messages)):
            found = self._partial(text, messages[:k], tools, False, kwargs)
            if found is not None:
                starts.append((found[0], names[k]))
        found = self._partial(text, messages, tools, False, kwargs)
        generation_start = found[0] if found is not None else len(text)
        starts.append((generation_start, "generation_prompt"))
        starts = clamp(starts)
        if tools:
            starts = self._tool_boundaries(text, messages, tools, starts, kwargs)
        return starts

    def _tool_boundaries(
        self,
        text: str,
        messages: list[Message],
        tools: Sequence[dict[str, Any]],
        starts: Starts,
        kwargs: dict[str, Any] | None,
    ) -> Starts:
        found = self._partial(text, messages, (), True, kwargs)
        if found is None:
            return starts
        block_start, without = found
        block_end = len(text) - common_suffix(text, without, block_start)
        tool_starts = [(block_start, "tools[0]")]
        for j in range(1, len(tools)):
            partial = self._partial(text, messages, tools[:j], True, kwargs)
            if partial is not None:
                tool_starts.append((partial[0], f"tools[{j}]"))
        resume = [name for position, name in starts if position <= block_end][-1:]
        outside = [(p, n) for p, n in starts if p < block_start or p > block_end]
        return clamp(
            sorted(
                outside + clamp(tool_starts) + [(block_end, resume[0] if resume else "tools")],
                key=lambda start: start[0],
            )
        )

    def render(self, request: ChatRequest, kwargs: dict[str, Any] | None = None) -> Rendered:
        """Render ``request``; ``kwargs`` are the template variables (see :meth:`apply`)."""
        messages = template_messages(request)
        names = component_names(request)
        text = self.apply(messages, request.tools, generation_prompt=True, kwargs=kwargs)
        starts = self.boundaries(text, messages, request.tools, names, kwargs)
        if starts[0][0] > 0:
            starts.insert(0, (0, "template"))
        ends = [position for position, _ in starts[1:]] + [len(text)]
        pieces = [(name, text[start:end]) for (start, name), end in zip(starts, ends, strict=True)]
        return assemble(pieces, self.encoder, self.name)


def clamp(starts: Starts) -> Starts:
    """Make positions non-decreasing (a later start is never before an earlier one)."""
    clamped: Starts = []
    floor = 0
    for position, name in starts:
        floor = max(floor, position)
        clamped.append((floor, name))
    return clamped
