"""Logged requests, rendered to the token sequences that every replay backend consumes.

Each prompt also carries the cache query the audit builds for it (timestamp, cache key,
Anthropic breakpoints, logged output length), which the ``sim`` backend feeds to the cache
models. ``--max-prompt-tokens`` cuts the tokens and drops the positions beyond the cut.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from prefixlint.cache.base import CacheQuery
from prefixlint.cache.query import build_query
from prefixlint.chat import DEFAULT_ENGINE, Renderer, TemplateError, get_renderer
from prefixlint.chat.media import DEFAULT_VISION, IMAGE_TOKENS
from prefixlint.replay import ReplayError
from prefixlint.request import ChatRequest
from prefixlint.sources.logs import LogReadError, read_log
from prefixlint.sources.logs.base import LogItem


@dataclass(frozen=True)
class Prompt:
    """One logged request and its rendered tokens (truncated when asked)."""

    path: str
    line: int
    request: ChatRequest
    tokens: tuple[int, ...]
    query: CacheQuery

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Inputs:
    prompts: list[Prompt]
    skipped: list[dict[str, Any]]  # path, line and reason of each line that gave no prompt
    renderer: Renderer  # what rendered them (a server replay sends its template kwargs)


def _cut(query: CacheQuery, tokens: tuple[int, ...], max_tokens: int | None) -> CacheQuery:
    """``query`` (whose tokens are ``tokens``) cut to ``max_tokens`` tokens."""
    if max_tokens is None or len(tokens) <= max_tokens:
        return query
    return dataclasses.replace(
        query,
        tokens=tokens[:max_tokens],
        breakpoints=tuple(b for b in query.breakpoints if b[0] <= max_tokens),
        boundaries=tuple(b for b in query.boundaries if b <= max_tokens),
    )


def _read(path: str, log_format: str) -> Iterator[LogItem]:
    try:
        yield from read_log(path, format=log_format)
    except (LogReadError, ValueError) as exc:
        raise ReplayError(str(exc)) from None


def load_prompts(
    paths: Sequence[str],
    *,
    log_format: str = "auto",
    template: str = "qwen3",
    tokenizer: str = "qwen",
    engine: str = DEFAULT_ENGINE,
    lora_modules: frozenset[str] = frozenset(),
    image_tokens: int = IMAGE_TOKENS,
    vision_processor: str = DEFAULT_VISION,
    max_prompt_tokens: int | None = None,
    limit: int | None = None,
) -> Inputs:
    """Read, render and tokenize the requests of ``paths`` in order; skip what cannot be read.

    Rendered as ``engine``'s server renders them; requests naming one of ``lora_modules``
    are in that adapter's cache namespace; a media part is as many pad tokens as
    ``vision_processor`` gives its inline image, else ``image_tokens`` (vllm). When not one
    line yields a request, that is an error naming the first line and why."""
    renderer = get_renderer(
        template,
        tokenizer,
        engine=engine,
        image_tokens=image_tokens,
        vision_processor=vision_processor,
    )
    prompts: list[Prompt] = []
    skipped: list[dict[str, Any]] = []
    for path in paths:
        for item in _read(path, log_format):
            if limit is not None and len(prompts) >= limit:
                return Inputs(prompts, skipped, renderer)
            if not isinstance(item, ChatRequest):
                skipped.append({"path": path, "line": item.line, "reason": item.reason})
                continue
            if item.hash_ids is not None:
                raise ReplayError(
                    f"{path}:{item.line}: hash-id traces carry no tokens and cannot be replayed"
                )
            try:
                rendered = renderer.render(item)
            except TemplateError as exc:
                skipped.append({"path": path, "line": item.line, "reason": str(exc)})
                continue
            query = build_query(item, rendered, lora_modules)
            query = _cut(query, rendered.tokens, max_prompt_tokens)
            tokens = rendered.tokens[:max_prompt_tokens]
            prompts.append(Prompt(path, item.line, item, tokens, query))
    if skipped and not prompts:
        first = skipped[0]
        raise ReplayError(
            f"{first['path']}:{first['line']}: {first['reason']} (no line could be read)"
        )
    return Inputs(prompts, skipped, renderer)
