"""The monitor between the real OpenAI and Anthropic SDKs and a provider on loopback.

The provider is a stdlib HTTP server started by the tests. It answers like the OpenAI Chat
Completions, OpenAI Responses and Anthropic Messages APIs, whole or streamed, with usage
fields whose cached-token counts come from a small prefix cache of its own (the longest
common prefix with any earlier prompt, four characters a token), which a test can empty.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import anthropic
import httpx
import httpx2
import openai
import pytest
from prometheus_client import CollectorRegistry

from prefixlint.monitor import (
    AsyncMonitorTransport,
    Monitor,
    MonitorTransport,
    OpenTelemetryMetrics,
    PrometheusMetrics,
)


def _common_prefix(a: str, b: str) -> int:
    limit = min(len(a), len(b))
    for index in range(limit):
        if a[index] != b[index]:
            return index
    return limit


class Provider(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), ProviderHandler)
        self.bodies: list[bytes] = []
        self.prompts: list[str] = []
        self.compress = False
        self.lock = threading.Lock()

    def forget(self) -> None:
        with self.lock:
            self.prompts.clear()

    def usage_counts(self, data: dict) -> tuple[int, int]:
        fields = ("tools", "system", "instructions", "messages", "input")
        prompt = json.dumps([data.get(k) for k in fields], ensure_ascii=False)
        with self.lock:
            shared = max((_common_prefix(prompt, p) for p in self.prompts), default=0)
            self.prompts.append(prompt)
        return len(prompt) // 4, shared // 4


def _chat(model, prompt, cached, stream):
    usage = {
        "prompt_tokens": prompt,
        "completion_tokens": 1,
        "total_tokens": prompt + 1,
        "prompt_tokens_details": {"cached_tokens": cached},
    }
    if not stream:
        message = {"role": "assistant", "content": "ok"}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        return {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [choice],
            "usage": usage,
        }
    head = {"id": "c1", "object": "chat.completion.chunk", "created": 0, "model": model}
    delta = {"index": 0, "delta": {"role": "assistant", "content": "ok"}, "finish_reason": None}
    return [
        {**head, "choices": [delta]},
        {**head, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {**head, "choices": [], "usage": usage},
    ]


def _responses(model, prompt, cached):
    return {
        "id": "r1",
        "object": "response",
        "created_at": 0,
        "model": model,
        "status": "completed",
        "output": [
            {
                "type": "message",
                "id": "m1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": "ok", "annotations": []}],
            }
        ],
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": 1,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + 1,
        },
    }


def _anthropic(model, prompt, cached, stream):
    usage = {
        "input_tokens": prompt - cached,
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": 0,
        "output_tokens": 1,
    }
    message = {
        "id": "m1",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": usage,
    }
    if not stream:
        return message
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 0}}
    return [
        ("message_start", {"type": "message_start", "message": start}),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "ok"},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]


class ProviderHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.bodies.append(body)
        data = json.loads(body)
        prompt, cached = self.server.usage_counts(data)
        model, stream = data.get("model"), bool(data.get("stream"))
        if self.path.endswith("/chat/completions"):
            answer = _chat(model, prompt, cached, stream)
            events = [(None, chunk) for chunk in answer] if stream else None
        elif self.path.endswith("/responses"):
            answer, events = _responses(model, prompt, cached), None
        elif self.path.endswith("/messages"):
            answer = _anthropic(model, prompt, cached, stream)
            events = answer if stream else None
        else:
            self.send_error(404)
            return
        if events is None:
            self._send("application/json", json.dumps(answer).encode())
            return
        lines = []
        for name, event in events:
            lines += [f"event: {name}"] if name else []
            lines += [f"data: {json.dumps(event)}", ""]
        if self.path.endswith("/chat/completions"):
            lines += ["data: [DONE]", ""]
        self._send("text/event-stream", ("\n".join(lines) + "\n").encode())

    def _send(self, content_type: str, payload: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        if self.server.compress and "gzip" in self.headers.get("Accept-Encoding", ""):
            payload = gzip.compress(payload)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def provider():
    server = Provider()
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _openai(provider, monitor, **transport_options):
    transport = MonitorTransport(monitor, **transport_options)
    return openai.OpenAI(
        api_key="test",
        base_url=f"http://127.0.0.1:{provider.server_port}/v1",
        http_client=httpx2.Client(transport=transport),
        max_retries=0,
    )


def _anthropic_client(provider, monitor):
    return anthropic.Anthropic(
        api_key="test",
        base_url=f"http://127.0.0.1:{provider.server_port}",
        http_client=httpx2.Client(transport=MonitorTransport(monitor)),
        max_retries=0,
    )


SYSTEM = "You are the support assistant of Example Corp. " + "Answer from the manual. " * 40
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": n,
            "description": f"{n} things",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    for n in ("search", "fetch", "summarise")
]
QUESTIONS = ("How do I restart it?", "And reset it?", "Where is the manual?")


def _conversation(turns: int, system: str = SYSTEM) -> list[dict]:
    messages = [{"role": "system", "content": system}]
    for question in QUESTIONS[:turns]:
        messages += [{"role": "user", "content": question}, {"role": "assistant", "content": "ok"}]
    return [*messages, {"role": "user", "content": QUESTIONS[turns]}]


def _sample(registry, name, **labels):
    return registry.get_sample_value(name, labels) or 0


def _warnings(caplog):
    return [
        r for r in caplog.records if r.name == "prefixlint.monitor" and r.levelno == logging.WARNING
    ]


def test_growing_conversation_is_quiet_and_counted(provider, caplog):
    registry = CollectorRegistry()
    monitor = Monitor(metrics=[PrometheusMetrics(registry)])
    client = _openai(provider, monitor, route="chat")
    for turn in range(3):
        client.chat.completions.create(model="m", messages=_conversation(turn), tools=TOOLS)
    assert _warnings(caplog) == []
    assert _sample(registry, "prefixlint_monitor_requests_total", route="chat") == 3
    assert _sample(registry, "prefixlint_monitor_cached_tokens_total", route="chat") > 0
    assert _sample(registry, "prefixlint_monitor_stable_prefix_chars", route="chat") > len(SYSTEM)


def test_requests_reach_the_provider_unchanged(provider):
    messages = _conversation(1)
    plain = openai.OpenAI(api_key="test", base_url=f"http://127.0.0.1:{provider.server_port}/v1")
    plain.chat.completions.create(model="m", messages=messages, tools=TOOLS)
    _openai(provider, Monitor()).chat.completions.create(model="m", messages=messages, tools=TOOLS)
    assert provider.bodies[0] == provider.bodies[1]


def test_timestamp_in_the_system_prompt_warns_once(provider, caplog):
    registry = CollectorRegistry()
    monitor = Monitor(metrics=[PrometheusMetrics(registry)])
    client = _openai(provider, monitor)
    for minute in ("10:30", "10:31", "10:32"):
        system = f"{SYSTEM} The time is 2026-01-15 {minute}."
        client.chat.completions.create(model="m", messages=_conversation(0, system))
    [record] = _warnings(caplog)
    event = record.prefixlint
    assert (event["kind"], event["cause"], event["component"]) == (
        "prefix-break",
        "PFX101",
        "messages[0]",
    )
    assert event["route"] == f"{__name__}:test_timestamp_in_the_system_prompt_warns_once"
    assert event["stable_prefix_chars"] < event["request_chars"]
    assert "The time is" not in record.getMessage()
    labels = {"route": event["route"], "cause": "PFX101", "component": "messages"}
    assert _sample(registry, "prefixlint_monitor_prefix_breaks_total", **labels) == 2


def test_anthropic_tool_order(provider):
    events = []
    monitor = Monitor(on_event=events.append)
    client = _anthropic_client(provider, monitor)
    tools = [
        {"name": t["function"]["name"], "description": "d", "input_schema": {"type": "object"}}
        for t in TOOLS
    ]
    with monitor.route("agent"):
        for order in (tools, tools[::-1]):
            client.messages.create(
                model="m",
                max_tokens=5,
                system=SYSTEM,
                tools=order,
                messages=[{"role": "user", "content": "hi"}],
            )
    [event] = events
    assert (event.route, event.cause, event.component) == ("agent", "PFX201", "tools[0]")
    assert event.cached_tokens < event.previous_cached_tokens or event.previous_cached_tokens == 0


def test_responses_api_id_in_instructions(provider):
    events = []
    client = _openai(provider, Monitor(on_event=events.append))
    for session in ("3f2a9c4e-1b7d-4e11-9a2b-0c1d2e3f4a5b", "7c9e6679-7425-40de-944b-e07fc1f90ae7"):
        client.responses.create(model="m", instructions=f"{SYSTEM} Session {session}.", input="hi")
    [event] = events
    assert (event.cause, event.component) == ("PFX102", "system")


@pytest.mark.parametrize(("pause_s", "cause"), ((10.0, "evicted"), (900.0, "ttl-expired")))
def test_cache_reads_drop_while_the_prefix_holds(provider, pause_s, cause):
    events, clock = [], Clock()
    registry = CollectorRegistry()
    monitor = Monitor(on_event=events.append, clock=clock, metrics=[PrometheusMetrics(registry)])
    client = _openai(provider, monitor, route="chat")
    for turn in range(3):
        if turn == 2:
            provider.forget()
            clock.now += pause_s
        client.chat.completions.create(model="m", messages=_conversation(turn))
    [event] = events
    assert (event.kind, event.cause, event.cached_tokens) == ("cache-drop", cause, 0)
    assert event.previous_cached_tokens > 0
    assert _sample(registry, "prefixlint_monitor_cache_drops_total", route="chat", cause=cause) == 1


def test_streamed_usage_is_read(provider):
    registry = CollectorRegistry()
    monitor = Monitor(metrics=[PrometheusMetrics(registry)])
    chat = _openai(provider, monitor, route="stream")
    for turn in range(2):
        stream = chat.chat.completions.create(
            model="m",
            messages=_conversation(turn),
            stream=True,
            stream_options={"include_usage": True},
        )
        assert "".join(c.choices[0].delta.content or "" for c in stream if c.choices) == "ok"
    claude = _anthropic_client(provider, monitor)
    with (
        monitor.route("stream"),
        claude.messages.stream(
            model="m", max_tokens=5, system=SYSTEM, messages=[{"role": "user", "content": "hi"}]
        ) as stream,
    ):
        assert stream.get_final_text() == "ok"
    assert _sample(registry, "prefixlint_monitor_prompt_tokens_total", route="stream") > 3 * 200
    assert _sample(registry, "prefixlint_monitor_cached_tokens_total", route="stream") > 0


def test_gzip_responses_are_read(provider):
    provider.compress = True
    registry = CollectorRegistry()
    client = _openai(provider, Monitor(metrics=[PrometheusMetrics(registry)]), route="gz")
    for turn in range(2):
        client.chat.completions.create(model="m", messages=_conversation(turn))
    assert _sample(registry, "prefixlint_monitor_cached_tokens_total", route="gz") > 0


def test_async_client(provider):
    events = []
    monitor = Monitor(on_event=events.append)
    client = openai.AsyncOpenAI(
        api_key="test",
        base_url=f"http://127.0.0.1:{provider.server_port}/v1",
        http_client=httpx2.AsyncClient(transport=AsyncMonitorTransport(monitor)),
        max_retries=0,
    )

    async def run():
        with monitor.route("async"):
            for model in ("m1", "m2"):
                await client.chat.completions.create(model=model, messages=_conversation(0))

    asyncio.run(run())
    [event] = events
    assert (event.route, event.cause, event.component) == ("async", "PFX601", "model")


def test_opentelemetry_metrics(provider):
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    reader = InMemoryMetricReader()
    monitor = Monitor(metrics=[OpenTelemetryMetrics(MeterProvider(metric_readers=[reader]))])
    client = _openai(provider, monitor, route="otel")
    for turn in range(2):
        client.chat.completions.create(model="m", messages=_conversation(turn))
    values = {}
    for resource in reader.get_metrics_data().resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                values[metric.name] = sum(p.value for p in metric.data.data_points)
    assert values["prefixlint.monitor.requests"] == 2
    assert values["prefixlint.monitor.cached_tokens"] > 0
    assert values["prefixlint.monitor.stable_prefix_chars"] > len(SYSTEM)


def test_other_endpoints_pass_through_unobserved(provider):
    monitor = Monitor()
    client = _openai(provider, monitor)
    with pytest.raises(openai.NotFoundError):
        client.embeddings.create(model="m", input="hi")
    assert monitor._routes == {}


def test_plain_httpx_client(provider):
    events = []
    monitor = Monitor(on_event=events.append)
    transport = MonitorTransport(monitor, http=httpx, route="raw")
    assert isinstance(transport, httpx.BaseTransport)
    with httpx.Client(transport=transport) as client:
        for system in ("Today is 2026-01-15.", "Today is 2026-01-16."):
            body = {"model": "m", "system": system, "messages": [{"role": "user", "content": "hi"}]}
            answer = client.post(f"http://127.0.0.1:{provider.server_port}/v1/messages", json=body)
            assert answer.json()["content"][0]["text"] == "ok"
    [event] = events
    assert (event.route, event.cause, event.component) == ("raw", "PFX101", "system")
