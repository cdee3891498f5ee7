"""Server replay against servers that answer badly: each bad answer is a counted error for
its request (retried where the status says so), the run goes on, the JSON stays strict, and
``--timeout`` bounds each whole request."""

from __future__ import annotations

import gzip
import json
import time

import pytest
from click.testing import CliRunner
from hostile_server import CHAT_OK, dribble, hostile_server, reset, response, send

from prefixlint.cli.replay import replay
from prefixlint.replay import ReplayError
from prefixlint.replay.server import EngineClient

BODY = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1}


def client(url: str, **options) -> EngineClient:
    settings = {"timeout": 2.0, "retries": 1, "backoff": 0.0, **options}
    return EngineClient(url, **settings)


def ask(answer, **options):
    """``(reply, seconds taken, server state)`` of one chat request to a server that
    answers with ``answer(connection, state)``."""
    with hostile_server(chat_answer(answer)) as (url, state), client(url, **options) as engine:
        start = time.monotonic()
        reply = engine.complete(BODY)
        return reply, time.monotonic() - start, state


def chat_answer(answer):
    """A scenario: ``answer(connection, state)`` for chat completions, 404 elsewhere."""

    def scenario(path, connection, state):
        if path == "/v1/chat/completions":
            answer(connection, state)
        else:
            send(connection, 404, b"no")

    return scenario


BAD_ANSWERS = {
    "not JSON": (lambda c, s: send(c, 200, b"hello"), "response is not JSON"),
    "empty body": (lambda c, s: send(c, 200, b""), "response is not JSON"),
    "JSON array": (lambda c, s: send(c, 200, [1, 2]), "not a JSON object (got list)"),
    "bad gzip": (
        lambda c, s: send(c, 200, b"not gzip at all", {"Content-Encoding": "gzip"}),
        "cannot be decoded (Content-Encoding gzip)",
    ),
    "no usage": (lambda c, s: send(c, 200, {"id": "x"}), "response has no usage"),
    "usage a list": (lambda c, s: send(c, 200, {"usage": [1]}), "usage is not an object"),
    "prompt tokens text": (
        lambda c, s: send(c, 200, {"usage": {"prompt_tokens": "many"}}),
        "usage.prompt_tokens is not a count",
    ),
    "HTTP 400": (lambda c, s: send(c, 400, b'{"error": "bad request"}'), "HTTP 400: {"),
    "HTTP 500": (lambda c, s: send(c, 500, b""), "HTTP 500"),
    "reset": (lambda c, s: reset(c), "Error"),
    "partial body": (
        lambda c, s: c.sendall(response(200, b'{"usage": {"prompt_tokens": 1}}')[:-10]),
        "Error",
    ),
    "nested too deeply": (lambda c, s: send(c, 200, b"[" * 100_000), "response is not JSON"),
}


@pytest.mark.parametrize("name", sorted(BAD_ANSWERS))
def test_bad_answer_is_a_counted_error(name):
    answer, reason = BAD_ANSWERS[name]
    reply, _, _ = ask(answer)
    assert reply.error is not None and reason in reply.error
    assert reply.cached_tokens is None


def test_retry_after_429_then_success():
    def answer(connection, state):
        state["tries"] = state.get("tries", 0) + 1
        if state["tries"] < 3:
            send(connection, 429, b"slow down", {"Retry-After": "0"})
        else:
            send(connection, 200, CHAT_OK)

    reply, _, state = ask(answer, retries=3)
    assert reply.error is None and reply.cached_tokens == 0
    assert state["tries"] == 3


def test_retries_are_bounded():
    reply, _, state = ask(lambda c, s: send(c, 503, b"busy"), retries=2)
    assert reply.error == "HTTP 503: busy"
    assert len(state["requests"]) == 3


def test_a_dribbling_body_cannot_outlast_the_timeout():
    body = json.dumps(CHAT_OK).encode()

    def answer(connection, state):
        head = response(200, body)[: -len(body)]
        connection.sendall(head)
        dribble(connection, body, pause=0.05, limit=len(body))

    reply, elapsed, _ = ask(answer, timeout=0.5, retries=0)
    assert "no complete response within 0.5 s" in reply.error
    assert elapsed < 2.0


def test_dribbling_headers_cannot_outlast_the_timeout():
    def answer(connection, state):
        dribble(connection, response(200, json.dumps(CHAT_OK).encode()), pause=0.05, limit=200)

    reply, elapsed, _ = ask(answer, timeout=0.5, retries=0)
    assert "no complete response within 0.5 s" in reply.error
    assert elapsed < 2.0


def test_unreachable_server_is_a_replay_error_even_after_retries():
    with hostile_server(chat_answer(lambda c, s: None)) as (url, _):
        pass  # closed again: nothing listens on its port now
    with client(url, retries=2) as engine, pytest.raises(ReplayError, match="cannot reach"):
        engine.complete(BODY)


def test_response_size_is_limited():
    def answer(connection, state):
        payload = gzip.compress(b" " * (20 << 20))
        send(connection, 200, payload, {"Content-Encoding": "gzip"})

    reply, _, _ = ask(answer, max_response_bytes=1 << 20)
    assert "response over 1,048,576 bytes" in reply.error


@pytest.mark.parametrize(
    "answer",
    [
        lambda c: send(c, 200, b"<html>"),
        lambda c: send(c, 200, b""),
        lambda c: send(c, 200, b"zzz", {"Content-Encoding": "gzip"}),
        lambda c: send(c, 200, {"data": [{"id": 5}]}),
        lambda c: send(c, 200, {"data": "x"}),
    ],
)
def test_odd_model_lists_mean_no_model(answer):
    def scenario(path, connection, state):
        answer(connection)

    with hostile_server(scenario) as (url, _), client(url) as engine:
        assert engine.served_model() is None


def strict_json(text: str):
    def refuse(constant):
        raise AssertionError(f"bare {constant} in the JSON report")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "log.jsonl"
    lines = [{"messages": [{"role": "user", "content": f"question {i}"}]} for i in range(3)]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


def test_replay_goes_on_past_bad_answers_and_reports_strict_json(log):
    def scenario(path, connection, state):
        if path == "/v1/models":
            send(connection, 200, b"")
        elif path == "/metrics":
            metrics = b"vllm:prefix_cache_queries_total NaN\nvllm:prefix_cache_hits_total +Inf\n"
            send(connection, 200, metrics)
        else:
            state["chat"] = state.get("chat", 0) + 1
            bad = [
                lambda: send(connection, 200, b"oops"),
                lambda: send(connection, 200, CHAT_OK),
                lambda: send(connection, 200, b"not gzip data", {"Content-Encoding": "gzip"}),
            ]
            bad[(state["chat"] - 1) % 3]()

    with hostile_server(scenario) as (url, _):
        result = CliRunner().invoke(
            replay,
            [str(log), "--backend", "server", "--url", url, "--format", "json", "--retries", "0"],
        )
    assert result.exit_code == 1, result.output
    data = strict_json(result.output)
    errors = [row["error"] for row in data["requests"]]
    assert errors[1] is None
    assert "not JSON" in errors[0] and "cannot be decoded" in errors[2]
    assert data["summary"]["errors"] == 2 and data["summary"]["reported"] == 1
    assert data["summary"]["metrics_prefix_cache_queries"] is None


def _slots_dribble(connection, state):
    dribble(connection, response(200, b'[{"id_task": 1, "is_processing": true}]'), 0.05, 200)


def _slots_new_task_each_look(connection, state):
    state["look"] = state.get("look", 0) + 1
    send(connection, 200, [{"id_task": state["look"], "is_processing": True}])


@pytest.mark.parametrize(
    ("slots", "launched"),
    [(_slots_dribble, 0), (_slots_new_task_each_look, 4), (lambda c, s: reset(c), 0)],
)
def test_bad_slots_answers_cannot_hold_concurrent_sends(slots, launched):
    from prefixlint.replay.server import send_in_order

    def scenario(path, connection, state):
        if path == "/slots":
            slots(connection, state)
        else:
            send(connection, 200, CHAT_OK)

    with hostile_server(scenario) as (url, _), client(url, timeout=1.0, retries=0) as engine:
        start = time.monotonic()
        replies = list(send_in_order(engine, [BODY] * 4, concurrency=2))
        took = time.monotonic() - start
    assert [r.error for r in replies] == [None] * 4
    assert sum(r.launch is not None for r in replies) == launched
    assert took < 4.0
