"""A compiled chat template, where its lines are in the file, and how to render it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property

import jinja2

from prefixlint.context import SourceError
from prefixlint.limits import DEFAULT_LIMITS, Limits
from prefixlint.sources.chat_template import conversation, sandbox
from prefixlint.sources.chat_template.bounds import SandboxLimit
from prefixlint.types import Span

_REASONING_WORDS = re.compile(r"think|reasoning", re.IGNORECASE)
REFERENCE_TIME = datetime(2026, 1, 15, 10, 30, 15)
"""The fake clock's time for every rendering that is not about the clock."""


@dataclass
class ChatTemplateDocument:
    """One chat template of a file (a ``tokenizer_config.json`` may hold several, by name)."""

    path: str
    source: str
    template: jinja2.Template
    file_line: Callable[[int], int]
    """Template line -> line in the file."""
    name: str | None = None
    special_tokens: dict[str, str] = field(default_factory=dict)
    limits: Limits = DEFAULT_LIMITS

    def span(self, template_line: int) -> Span:
        """The whole source line ``template_line`` as a span in the file."""
        lines = self.source.splitlines()
        width = len(lines[template_line - 1]) if 0 < template_line <= len(lines) else 0
        line = self.file_line(template_line)
        if line != template_line:  # inside a JSON string: the line holds the whole template
            return Span(self.path, line, 1, line + 1, 1)
        return Span(self.path, line, 1, line, width + 1)

    def where(self, template_line: int) -> str:
        """How a message names a template line (``template line 12`` inside JSON files)."""
        name = f"template {self.name!r}" if self.name else "template"
        if self.file_line(template_line) != template_line or self.name:
            return f"{name} line {template_line}"
        return f"line {template_line}"

    def render(
        self,
        convo: conversation.Conversation,
        count: int,
        *,
        add_generation_prompt: bool,
        clock: sandbox.FakeClock | None = None,
    ) -> sandbox.Rendering:
        """Render the first ``count`` messages of ``convo``; raises ``TemplateFailure``, or
        :class:`SourceError` when the rendering goes over one of :attr:`limits`."""
        variables = {
            **self.special_tokens,
            "messages": convo.template_messages(count),
            "tools": convo.template_tools(),
            "add_generation_prompt": add_generation_prompt,
        }
        clock = clock or sandbox.FakeClock(REFERENCE_TIME)
        try:
            return sandbox.render(self.template, variables, clock, self.limits)
        except SandboxLimit as exc:
            raise SourceError(
                f"chat template stopped at {self.where(exc.line)}: {exc.message}",
                line=self.file_line(exc.line),
            ) from None

    def renders(self, features: conversation.Features) -> bool:
        """Whether every turn of the conversation for ``features`` renders without failure."""
        return self._first_failure(features) is None

    def _first_failure(self, features: conversation.Features) -> sandbox.TemplateFailure | None:
        convo = conversation.build(features)
        try:
            for count in convo.turn_points():
                self.render(convo, count, add_generation_prompt=True)
            self.render(convo, len(convo.messages), add_generation_prompt=False)
        except sandbox.TemplateFailure as failure:
            return failure
        return None

    @cached_property
    def features(self) -> conversation.Features:
        """The richest conversation features the template renders.

        Raises :class:`SourceError` at the failing line when it renders none of them.
        """
        failures = []
        for features in conversation.feature_fallbacks():
            failure = self._first_failure(features)
            if failure is None:
                return features
            failures.append(failure)
        first_failure = failures[0]
        kind = "raise_exception" if first_failure.raised else "error"
        raise SourceError(
            f"chat template {kind} at {self.where(first_failure.line)}: {first_failure.message}",
            line=self.file_line(first_failure.line),
        )

    @property
    def knows_reasoning(self) -> bool:
        """Whether the template handles reasoning at all (``<think>``, ``reasoning_content``,
        ``thinking``): the sign of a model that writes it. Templates of models that do not
        reason are not given conversations with reasoning."""
        return bool(_REASONING_WORDS.search(self.source))

    def with_reasoning(self, style: str) -> conversation.Features | None:
        """The working features with reasoning given in ``style``, if the template renders it."""
        if style == "none":
            return self.features
        if not self.knows_reasoning:
            return None
        features = replace(self.features, reasoning=style)
        return features if self.renders(features) else None
