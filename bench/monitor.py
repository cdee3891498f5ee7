"""Benchmark what ``prefixlint.monitor`` adds to each request.

    .venv/bin/python bench/monitor.py [--requests 2000]

Three prompt sizes, each a conversation that grows turn by turn on one route (so every
request is compared with the 16 recent ones kept per route):

* small: a 1.5 kB system prompt, 3 tools, 2-8 messages (~3-5 kB of JSON);
* typical: a 6 kB system prompt, 12 tools, 10-30 messages of a few hundred characters
  (~25-40 kB of JSON, roughly 6-10k tokens);
* large: a 40 kB system prompt, 30 tools, 40-80 messages (~150-250 kB).

Measured per request, in microseconds of CPU time of the calling thread (median and 99th
percentile; CPU time rather than wall time so that other load on the machine does not count):

* observe: ``Monitor.observe_request`` + ``observe_response`` on an already parsed body
  (fingerprint, match against recent requests, cause, metrics, event decision);
* json: ``json.loads`` + ``json.dumps`` of the same body, for scale: what the SDK and the
  HTTP server already spend on it;
* transport: a request through ``MonitorTransport`` minus the same request through the bare
  inner transport (an in-memory ``MockTransport`` answering with usage), i.e. everything the
  monitor adds on the request path, body parsing and response reading included.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import httpx
from prometheus_client import CollectorRegistry

from prefixlint.monitor import Monitor, MonitorTransport, PrometheusMetrics
from prefixlint.request import Usage

SIZES = {"small": (1_500, 3, 2, 8), "typical": (6_000, 12, 10, 30), "large": (40_000, 30, 40, 80)}
ANSWER = json.dumps(
    {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}],
        "usage": {"prompt_tokens": 9000, "prompt_tokens_details": {"cached_tokens": 8192}},
    }
).encode()


def _body(size: str, turn: int) -> dict:
    system_chars, tools, first, last = SIZES[size]
    count = first + turn % (last - first + 1)
    system = ("You are the support assistant of Example Corp. " * 400)[:system_chars]
    tool_list = [
        {
            "type": "function",
            "function": {
                "name": f"tool_{i}",
                "description": f"Tool number {i} does one thing well. " * 3,
                "parameters": {
                    "type": "object",
                    "properties": {"query": {"type": "string", "description": "What to do"}},
                    "required": ["query"],
                },
            },
        }
        for i in range(tools)
    ]
    messages = [{"role": "system", "content": system}]
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        messages.append({"role": role, "content": f"Message {i}: " + "some words here " * 20})
    return {"model": "gpt-4o-mini", "tools": tool_list, "messages": messages}


def _stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[int(0.99 * (len(ordered) - 1))]


def bench_observe(size: str, requests: int) -> tuple[float, float, int]:
    monitor = Monitor(metrics=[PrometheusMetrics(CollectorRegistry())])
    bodies = [_body(size, turn) for turn in range(64)]
    usage = Usage(prompt_tokens=9000, cached_tokens=8192)
    samples = []
    for index in range(requests):
        body = bodies[index % len(bodies)]
        start = time.thread_time()
        observation = monitor.observe_request(body, "openai-chat", "bench")
        monitor.observe_response(observation, usage)
        samples.append((time.thread_time() - start) * 1e6)
    return (*_stats(samples), len(json.dumps(bodies[len(bodies) // 2])))


def bench_json(size: str, requests: int) -> tuple[float, float]:
    bodies = [json.dumps(_body(size, turn)) for turn in range(64)]
    samples = []
    for index in range(requests):
        start = time.thread_time()
        json.dumps(json.loads(bodies[index % len(bodies)]))
        samples.append((time.thread_time() - start) * 1e6)
    return _stats(samples)


def bench_transport(size: str, requests: int) -> tuple[float, float]:
    inner = httpx.MockTransport(lambda request: httpx.Response(200, content=ANSWER))
    monitored = MonitorTransport(Monitor(), inner, route="bench", http=httpx)
    bodies = [json.dumps(_body(size, turn)).encode() for turn in range(64)]
    url = "https://api.example.com/v1/chat/completions"

    def one(transport, body: bytes) -> float:
        request = httpx.Request("POST", url, content=body)
        start = time.thread_time()
        response = transport.handle_request(request)
        response.read()
        response.close()
        return (time.thread_time() - start) * 1e6

    plain, observed = [], []
    for index in range(requests):
        body = bodies[index % len(bodies)]
        plain.append(one(inner, body))
        observed.append(one(monitored, body))
    extra = [b - a for a, b in zip(plain, observed, strict=True)]
    return _stats(extra)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    args = parser.parse_args()
    print(
        f"{'prompt':<8} {'JSON chars':>10} {'observe p50':>12} {'p99':>6}"
        f" {'json p50':>9} {'transport p50':>14} {'p99':>6}  (microseconds of CPU)"
    )
    for size in SIZES:
        p50, p99, chars = bench_observe(size, args.requests)
        j50, _ = bench_json(size, args.requests)
        t50, t99 = bench_transport(size, args.requests)
        print(
            f"{size:<8} {chars:>10} {p50:>12.0f} {p99:>6.0f} {j50:>9.0f} {t50:>14.0f} {t99:>6.0f}"
        )


if __name__ == "__main__":
    main()
