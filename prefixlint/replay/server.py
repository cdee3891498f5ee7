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

A server is untrusted input: every answer that cannot be used (not JSON, not an object, a
body that does not decode, wrong types, no usage, an error status, a reset, a partial or
oversized body, an answer not complete within the timeout) becomes that request's
``error`` and the replay goes on; only a server that cannot be connected to at all is a
:class:`~prefixlint.replay.ReplayError`.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import httpx

from prefixlint.cache.base import CacheQuery
from prefixlint.cache.query import build_query, prefill_query
from prefixlint.chat.renderer import Renderer
from prefixlint.replay import ReplayError
from prefixlint.replay.launches import Launch, LaunchWatch, SlotState, read_slots
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
MAX_WAIT_S = 30.0
"""The longest wait before a retry, whatever ``Retry-After`` asks."""
MAX_RESPONSE_BYTES = 8 << 20
# Transport errors that mean no connection was made (a reset or a timeout later is an answer).
UNREACHABLE = (httpx.ConnectError, httpx.ConnectTimeout, httpx.UnsupportedProtocol)
# vLLM (vllm/entrypoints/serve/cache/api_router.py, dev mode), SGLang (http_server.py).
RESET_PATHS = ("/reset_prefix_cache", "/flush_cache")


def request_from_body(body: dict[str, Any], line: int = 0) -> ChatRequest:
    """The request that an OpenAI-compatible server reads from a chat-completions ``body``."""
    item = parse_record(line, body, "openai-chat")
    if isinstance(item, SkippedLine):
        raise ReplayError(f"not a chat-completions request: {item.reason}")
    return item


def sent_query(
    renderer: Renderer, request: ChatRequest, lora_modules: frozenset[str] = frozenset()
) -> CacheQuery:
    """The prefill a server is sent for ``request``, with the namespace the audit gives it."""
    return prefill_query(build_query(request, renderer.render(request), lora_modules))


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
    """What the engine said about one replayed request; ``error`` says why it said nothing
    usable (the request is counted, not fatal). ``started_s`` is when it was sent, on
    :func:`time.monotonic`'s clock; the answer came ``latency_s`` later. ``timings`` are
    llama.cpp's ``timings.prompt_n``, ``prompt_ms`` and ``predicted_ms``, when reported;
    ``launch`` is when the request was seen on a server slot, when it was watched for."""

    prompt_tokens: int | None
    cached_tokens: int | None
    cached_field: str | None
    latency_s: float
    error: str | None = None
    started_s: float = 0.0
    timings: tuple[int, float, float] | None = None
    launch: Launch | None = None

    @property
    def finished_s(self) -> float:
        return self.started_s + self.latency_s


class ResponseError(Exception):
    """One response could not be read whole (timeout, size, reset, bad encoding);
    ``retry`` says whether trying again may help."""

    def __init__(self, message: str, *, retry: bool = False) -> None:
        super().__init__(message)
        self.retry = retry


@dataclass(frozen=True)
class Fetched:
    """A response read whole: status, headers and the decoded body."""

    status: int
    headers: httpx.Headers
    body: bytes

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        """The body as JSON; :class:`ResponseError` when it is not."""
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError):
            raise ResponseError("response is not JSON") from None


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:200]


def _usable_reply(reply: object) -> dict[str, Any] | str:
    """A chat-completions JSON body that carries usable counts, or why it does not."""
    if not isinstance(reply, dict):
        return f"response is not a JSON object (got {type(reply).__name__})"
    usage = reply.get("usage")
    if usage is None and not any(isinstance(reply.get(k), dict) for k in ("meta_info", "timings")):
        return "response has no usage"
    if usage is not None and not isinstance(usage, dict):
        return f"usage is not an object (got {type(usage).__name__})"
    prompt = _dig(reply, "usage", "prompt_tokens")
    if prompt is not None and _count(prompt) is None:
        return "usage.prompt_tokens is not a count of tokens"
    return reply


def _retry_after(headers: httpx.Headers) -> float | None:
    """A ``Retry-After`` header in seconds (the HTTP-date form is not read)."""
    try:
        seconds = float(headers.get("retry-after", ""))
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


T = TypeVar("T")


def within(seconds: float, work: Callable[[], T]) -> T:
    """``work()``, or :class:`ResponseError` when it is not done after ``seconds``.

    It runs on a daemon thread so that nothing (a server that sends its headers a byte at a
    time) can hold the caller; an abandoned call ends by itself at its own deadline check or
    when the server lets go.
    """
    values: list[T] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            values.append(work())
        except BaseException as exc:  # handed to the caller below
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True, name="prefixlint-request")
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        raise ResponseError(f"no complete response within {seconds:g} s (--timeout)", retry=True)
    if errors:
        raise errors[0]
    return values[0]


class EngineClient:
    """A small OpenAI-compatible client with timeouts, retries and backoff.

    ``timeout`` bounds each whole request, body included; a body larger than
    ``max_response_bytes`` (after decoding) is an error. Statuses in
    :data:`RETRY_STATUSES`, resets and timeouts are retried ``retries`` times, waiting
    ``backoff * 2**attempt`` seconds or the server's ``Retry-After``, at most
    :data:`MAX_WAIT_S`. A server never reached is a :class:`ReplayError`; once it has
    answered, a request that fails is a :class:`ServerReply` with its ``error``.
    """

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 60.0,
        retries: int = 3,
        backoff: float = 0.5,
        api_key: str | None = None,
        absent_means_zero: bool = False,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.absent_means_zero = absent_means_zero
        self.max_response_bytes = max_response_bytes
        self.reached = False
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.Client(base_url=self.url, timeout=timeout, headers=headers)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> EngineClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _read(self, method: str, path: str, kwargs: dict[str, Any]) -> Fetched:
        """One request, its body read in chunks against the deadline and the size limit."""
        deadline = time.monotonic() + self.timeout
        with self._http.stream(method, path, **kwargs) as response:
            self.reached = True
            body = bytearray()
            try:
                for chunk in response.iter_bytes():
                    body += chunk
                    if len(body) > self.max_response_bytes:
                        raise ResponseError(
                            f"response over {self.max_response_bytes:,} bytes "
                            "(--max-response-bytes)"
                        )
                    if time.monotonic() > deadline:
                        raise ResponseError(
                            f"no complete response within {self.timeout:g} s (--timeout)",
                            retry=True,
                        )
            except httpx.DecodingError:
                encoding = response.headers.get("content-encoding", "")
                raise ResponseError(
                    f"response body cannot be decoded (Content-Encoding {encoding})"
                ) from None
            return Fetched(response.status_code, response.headers, bytes(body))

    def _send(self, method: str, path: str, **kwargs: Any) -> Fetched:
        """Send with retries on resets, timeouts and retryable statuses.

        Raises :class:`ReplayError` when no connection could be made to a server that never
        answered before, else :class:`ResponseError` when the last try gave no whole
        response.
        """
        attempt = 0
        while True:
            unreachable = False
            failure: ResponseError | None
            try:
                fetched = within(self.timeout, lambda: self._read(method, path, kwargs))
            except httpx.TransportError as exc:
                failure = ResponseError(f"{type(exc).__name__}: {exc}".rstrip(": "))
                failure.retry = not isinstance(exc, httpx.UnsupportedProtocol)
                unreachable = isinstance(exc, UNREACHABLE)
            except ResponseError as exc:
                failure = exc
            else:
                if fetched.status not in RETRY_STATUSES or attempt >= self.retries:
                    return fetched
                failure = None
            if failure is not None and (not failure.retry or attempt >= self.retries):
                if unreachable and not self.reached:
                    raise ReplayError(f"cannot reach {self.url}{path}: {failure}") from None
                raise failure
            wait = None if failure is not None else _retry_after(fetched.headers)
            if wait is None:
                wait = self.backoff * 2**attempt
            time.sleep(min(wait, MAX_WAIT_S))
            attempt += 1

    def served_model(self) -> str | None:
        """The first model id that ``/v1/models`` lists, if the server answers it."""
        try:
            response = self._send("GET", "/v1/models")
            data = _dig(response.json(), "data") if response.status == 200 else None
        except ResponseError:
            return None
        if isinstance(data, list) and data and isinstance(data[0], dict):
            model = data[0].get("id")
            return model if isinstance(model, str) else None
        return None

    def prefix_cache_counters(self) -> PrefixCacheCounters | None:
        """vLLM's prefix-cache counters from ``/metrics``, or None when not exported."""
        try:
            response = self._send("GET", "/metrics")
        except ResponseError:
            return None
        if response.status != 200:
            return None
        return PrefixCacheCounters.from_text(response.text())

    def slots(self) -> tuple[SlotState, ...] | None:
        """llama-server's slots from ``/slots`` (one try, no retry), or None when the server
        does not show them (see :mod:`prefixlint.replay.launches`)."""
        try:
            response = within(self.timeout, lambda: self._read("GET", "/slots", {}))
            return read_slots(response.json()) if response.status == 200 else None
        except (ResponseError, httpx.TransportError):
            return None

    def reset_cache(self) -> str:
        """Empty the engine's prefix cache; the endpoint that did it, or a :class:`ReplayError`."""
        for path in RESET_PATHS:
            try:
                if self._send("POST", path).ok:
                    return path
            except ResponseError:
                continue
        raise ReplayError(
            f"{self.url} offers no prefix-cache reset (tried {', '.join(RESET_PATHS)};"
            " vLLM serves /reset_prefix_cache with VLLM_SERVER_DEV_MODE=1)"
        )

    def complete(self, body: dict[str, Any]) -> ServerReply:
        start = time.monotonic()
        try:
            response = self._send("POST", "/v1/chat/completions", json=body)
            reply = response.json() if response.status == 200 else None
        except ResponseError as exc:
            return ServerReply(None, None, None, time.monotonic() - start, str(exc), start)
        latency = time.monotonic() - start
        if response.status != 200:
            status = f"HTTP {response.status}: {_first_line(response.text())}".rstrip(": ")
            return ServerReply(None, None, None, latency, status, start)
        usable = _usable_reply(reply)
        if isinstance(usable, str):
            return ServerReply(None, None, None, latency, usable, start)
        cached, field = reported_cached_tokens(usable)
        prompt_tokens = _count(_dig(reply, "usage", "prompt_tokens"))
        if cached is None and self.absent_means_zero and prompt_tokens is not None:
            cached, field = 0, "absent"
        return ServerReply(
            prompt_tokens, cached, field, latency, started_s=start, timings=_timings(usable)
        )


def _timings(reply: dict[str, Any]) -> tuple[int, float, float] | None:
    timings = reply.get("timings")
    if not isinstance(timings, dict):
        return None
    count = _count(timings.get("prompt_n"))
    values = [timings.get(key) for key in ("prompt_ms", "predicted_ms")]
    if count is None or not all(
        isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v >= 0
        for v in values
    ):
        return None
    return count, float(values[0]), float(values[1])  # type: ignore[arg-type]


def server_time_s(reply: ServerReply) -> float:
    """How long the server worked on the request from its launch on a slot: llama.cpp's
    ``prompt_ms`` (from the launch, ``server_slot_stats::t_start``, to the end of the prompt)
    and ``predicted_ms``; 0 without timings."""
    if reply.timings is None:
        return 0.0
    _, prompt_ms, predicted_ms = reply.timings
    return (prompt_ms + predicted_ms) / 1000


BATCH_TOKENS = 2048
"""llama-server's logical batch (``n_batch``, ``common/common.h``): the most prompt tokens
one ``update_slots`` pass decodes."""


def last_pass_s(reply: ServerReply, batch_tokens: int = BATCH_TOKENS) -> float:
    """How long the request's last decode pass took, from llama.cpp's ``timings``: the share
    of ``prompt_ms`` of the last ``batch_tokens`` chunk of the evaluated prompt, and
    ``predicted_ms``; 0 without timings."""
    if reply.timings is None:
        return 0.0
    evaluated, prompt_ms, predicted_ms = reply.timings
    last = evaluated % batch_tokens or batch_tokens
    share = last / evaluated if evaluated > 0 else 0.0
    return (prompt_ms * share + predicted_ms) / 1000


def timed_queries(
    queries: Sequence[CacheQuery], replies: Sequence[ServerReply], batch_tokens: int = BATCH_TOKENS
) -> list[tuple[int, CacheQuery]]:
    """``(log index, query)`` in the order the server took the requests, each query timed
    from the first send: ``timestamp`` when the server took it, ``finish`` when it let it go.

    A request seen on a slot (its reply's ``launch``) was taken when that was seen; an earlier
    one processing in the same look still ran then (``finish`` just after), one not
    processing was over (``finish`` no later). Otherwise the take is estimated: its answer
    less :func:`server_time_s`, never before it was sent nor before an earlier send was taken
    (when it was sent if the server reports no timings); the release halfway through its last
    decode pass (its answer less half of :func:`last_pass_s`). A look comes after the launch
    it shows, so a request released in between counts as over at that launch; llama-server
    launches between decode passes and releases at the end of one, so that takes a whole
    pass between the launch and the look.

    llama-server takes tasks in the order they reach its queue: a task that finds no free
    slot waits at the back of the deferred tasks and comes back first when a slot is
    released (``server_queue::defer``, ``pop_deferred_task``). Requests sent once the one
    before shows on a slot, or paced :data:`SEND_GAP_S` apart, reach the queue in the order
    sent (see :func:`send_in_order`), so that is the order taken. llama-server takes new tasks
    only between ``update_slots`` passes (``server_queue::start_loop``;
    ``process_single_task`` declines a completion while a decode runs) and releases a slot in
    the pass that samples its last token. A request taken while another held its slot was
    taken before that one's last pass began; one taken after the release was taken when that
    pass ended: the middle of the last pass parts the two with half a pass to spare on either
    side of the client's clock."""
    if not replies:
        return []
    origin = min(reply.started_s for reply in replies)
    order = sorted(range(len(replies)), key=lambda i: (replies[i].started_s, i))
    taken = [0.0] * len(replies)
    previous = 0.0
    for i in order:
        reply = replies[i]
        if reply.launch is not None:
            took = reply.launch.seen_s
        elif reply.timings is None:
            took = reply.started_s
        else:
            took = reply.finished_s - server_time_s(reply)
        previous = taken[i] = max(took - origin, reply.started_s - origin, previous)
    finish = [
        max(reply.finished_s - last_pass_s(reply, batch_tokens) / 2 - origin, taken[i])
        for i, reply in enumerate(replies)
    ]
    _bound_by_launches(order, replies, taken, finish)
    return [(i, replace(queries[i], timestamp=taken[i], finish=finish[i])) for i in order]


def _bound_by_launches(
    order: Sequence[int], replies: Sequence[ServerReply], taken: list[float], finish: list[float]
) -> None:
    """Move each ``finish`` of a request seen launched to the side of every later launch that
    the look which saw that launch showed it on: after it while processing, else not after."""
    unsettled: list[int] = []
    for k in order:
        launch = replies[k].launch
        if launch is None:
            continue
        for j in unsettled:
            if j in launch.running:
                finish[j] = max(finish[j], math.nextafter(taken[k], math.inf))
            else:
                finish[j] = min(finish[j], taken[k])
        unsettled = [j for j in unsettled if finish[j] > taken[k]] + [k]


SEND_GAP_S = 0.025
"""The least time between two sends when several are in flight and the server shows no
slots: more than the difference in time two requests spend in the server's HTTP threads
(rendering, tokenizing) before they reach its queue, so that, on an idle server, they reach
it in the order sent."""


def send_in_order(
    client: EngineClient,
    bodies: Iterable[dict[str, Any]],
    concurrency: int = 1,
    gap_s: float = SEND_GAP_S,
) -> Iterator[ServerReply]:
    """Send ``bodies`` in log order, ``concurrency`` at most in flight; replies in that order.

    With several in flight, each request waits to be sent until the one before it shows on a
    slot of the server (:class:`~prefixlint.replay.launches.LaunchWatch`, llama-server's
    ``/slots``), and its reply carries that ``launch``; a server that shows no slots (vLLM,
    SGLang, llama-server with ``--no-slots``) gets its sends ``gap_s`` apart at least, which
    keeps their order only while its HTTP threads are not held up."""
    if concurrency <= 1:
        for body in bodies:
            yield client.complete(body)
        return
    watch = LaunchWatch.start(client.slots)
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        pending: list[tuple[Future[ServerReply], Launch | None]] = []
        last_send = -math.inf
        for index, body in enumerate(bodies):
            if watch is None:
                time.sleep(max(0.0, last_send + gap_s - time.monotonic()))
                last_send = time.monotonic()
            future = pool.submit(client.complete, body)
            pending.append((future, None if watch is None else watch.wait(index, future)))
            if len(pending) >= concurrency:
                yield _launched(*pending.pop(0))
        for future, launch in pending:
            yield _launched(future, launch)


def _launched(future: Future[ServerReply], launch: Launch | None) -> ServerReply:
    return replace(future.result(), launch=launch)
