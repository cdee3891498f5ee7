"""Send logged requests to a running OpenAI-compatible engine and read what it reused.

Each request goes to ``POST {url}/v1/chat/completions`` with ``max_tokens=1`` and
``temperature=0``, so the engine does one prefill and reports its prompt-cache hit. Where
engines put the reused-token count (first found wins):

- ``usage.prompt_tokens_details.cached_tokens``: vLLM (needs ``--enable-prompt-tokens-details``,
  ``vllm/entrypoints/openai/serving_chat.py``), SGLang (needs ``--enable-cache-report``; it
  omits ``prompt_tokens_details`` when nothing was cached,
  ``python/sglang/srt/entrypoints/openai/usage_processor.py``), llama.cpp
  (``tools/server/server-task.cpp``, ``usage_json_oaicompat``: ``n_prompt_tokens_cache``).
- ``meta_info.cached_tokens``: SGLang's native responses.
- ``timings.cache_n``: llama.cpp's ``result_timings``.

llama.cpp's older ``tokens_cached`` is not read: it is the slot's whole KV length after the
request (prompt and generated tokens), not the part of the prompt that was reused.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx

from prefixlint.replay import ReplayError
from prefixlint.replay.metrics import PrefixCacheCounters
from prefixlint.request import ChatRequest
from prefixlint.sources.logs import SkippedLine, parse_record

# Request fields that shape the rendered prompt and are passed on as logged.
FORWARDED_PARAMS = (
    "tool_choice",
    "parallel_tool_calls",
    "response_format",
    "reasoning_effort",
    "chat_template_kwargs",
    "add_generation_prompt",
    "continue_final_message",
    "cache_salt",
)
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# vLLM (vllm/entrypoints/serve/cache/api_router.py, dev mode), SGLang (http_server.py).
RESET_PATHS = ("/reset_prefix_cache", "/flush_cache")


def request_from_body(body: dict[str, Any], line: int = 0) -> ChatRequest:
    """The request that an OpenAI-compatible server reads from a chat-completions ``body``."""
    item = parse_record(line, body, "openai-chat")
    if isinstance(item, SkippedLine):
        raise ReplayError(f"not a chat-completions request: {item.reason}")
    return item


def request_body(
    request: ChatRequest, model: str | None, template_kwargs: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The chat-completions body that replays ``request`` as one prefill; ``template_kwargs``,
    when given, are sent as its ``chat_template_kwargs``."""
    messages = list(request.messages)
    if request.system is not None:
        messages.insert(0, {"role": "system", "content": request.system})
    body: dict[str, Any] = {"messages": messages}
    if model is not None:
        body["model"] = model
    if request.tools:
        body["tools"] = list(request.tools)
    body.update({k: request.params[k] for k in FORWARDED_PARAMS if k in request.params})
    if template_kwargs is not None:
        body["chat_template_kwargs"] = template_kwargs
    body.update({"max_tokens": 1, "temperature": 0, "stream": False})
    return body


def _dig(data: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


CACHED_TOKEN_FIELDS = (
    ("usage", "prompt_tokens_details", "cached_tokens"),
    ("meta_info", "cached_tokens"),
    ("timings", "cache_n"),
)


def reported_cached_tokens(reply: dict[str, Any]) -> tuple[int | None, str | None]:
    """``(cached tokens, dotted field name)`` from a response body, or ``(None, None)``."""
    for path in CACHED_TOKEN_FIELDS:
        value = _count(_dig(reply, *path))
        if value is not None:
            return value, ".".join(path)
    return None, None


@dataclass(frozen=True)
class ServerReply:
    """What the engine said about one replayed request."""

    prompt_tokens: int | None
    cached_tokens: int | None
    cached_field: str | None
    latency_s: float
    error: str | None = None


class EngineClient:
    """A small OpenAI-compatible client with timeouts, retries and backoff."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        api_key: str | None = None,
        absent_means_zero: bool = False,
    ) -> None:
        self.url = url.rstrip("/")
        self.retries = retries
        self.backoff = backoff
        self.absent_means_zero = absent_means_zero
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=self.url, timeout=timeout, headers=headers)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> EngineClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """Send with retries on transport errors and retryable statuses."""
        attempt = 0
        while True:
            try:
                response = self._http.request(method, path, **kwargs)
            except httpx.TransportError as exc:
                if attempt >= self.retries:
                    raise ReplayError(f"cannot reach {self.url}{path}: {exc}") from None
            else:
                if response.status_code not in RETRY_STATUSES or attempt >= self.retries:
                    return response
            time.sleep(self.backoff * 2**attempt)
            attempt += 1

    def served_model(self) -> str | None:
        """The first model id that ``/v1/models`` lists, if the server answers it."""
        response = self._send("GET", "/v1/models")
        if response.status_code != 200:
            return None
        data = _dig(response.json(), "data")
        if isinstance(data, list) and data and isinstance(data[0], dict):
            return data[0].get("id")
        return None

    def prefix_cache_counters(self) -> PrefixCacheCounters | None:
        """vLLM's prefix-cache counters from ``/metrics``, or None when not exported."""
        response = self._send("GET", "/metrics")
        if response.status_code != 200:
            return None
        return PrefixCacheCounters.from_text(response.text)

    def reset_cache(self) -> str:
        """Empty the engine's prefix cache; the endpoint that did it, or a :class:`ReplayError`."""
        for path in RESET_PATHS:
            if self._send("POST", path).is_success:
                return path
        raise ReplayError(
            f"{self.url} offers no prefix-cache reset (tried {', '.join(RESET_PATHS)};"
            " vLLM serves /reset_prefix_cache with VLLM_SERVER_DEV_MODE=1)"
        )

    def complete(self, body: dict[str, Any]) -> ServerReply:
        start = time.monotonic()
        response = self._send("POST", "/v1/chat/completions", json=body)
        latency = time.monotonic() - start
        if response.status_code != 200:
            first = response.text.strip().splitlines()[0][:200] if response.text.strip() else ""
            error = f"HTTP {response.status_code}: {first}"
            return ServerReply(None, None, None, latency, error)
        try:
            reply = response.json()
        except ValueError:
            return ServerReply(None, None, None, latency, "response is not JSON")
        cached, field = reported_cached_tokens(reply)
        prompt_tokens = _count(_dig(reply, "usage", "prompt_tokens"))
        if cached is None and self.absent_means_zero and prompt_tokens is not None:
            cached, field = 0, "absent"
        return ServerReply(prompt_tokens, cached, field, latency)


def send_in_order(
    client: EngineClient, bodies: Iterable[dict[str, Any]], concurrency: int = 1
) -> Iterator[ServerReply]:
    """Send ``bodies`` in log order, ``concurrency`` at most in flight; replies in that order."""
    if concurrency <= 1:
        for body in bodies:
            yield client.complete(body)
        return
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        pending = []
        for body in bodies:
            pending.append(pool.submit(client.complete, body))
            if len(pending) >= concurrency:
                yield pending.pop(0).result()
        for future in pending:
            yield future.result()
