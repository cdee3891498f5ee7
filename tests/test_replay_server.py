import socket

import pytest

from prefixlint.cache import make_cache_model
from prefixlint.chat import get_renderer
from prefixlint.replay import ReplayError
from prefixlint.replay.server import (
    EngineClient,
    reported_cached_tokens,
    request_body,
    request_from_body,
    sent_query,
)
from prefixlint.request import ChatRequest


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # vLLM --enable-prompt-tokens-details, SGLang --enable-cache-report, llama.cpp OAI.
        (
            {"usage": {"prompt_tokens": 40, "prompt_tokens_details": {"cached_tokens": 32}}},
            (32, "usage.prompt_tokens_details.cached_tokens"),
        ),
        ({"meta_info": {"cached_tokens": 16}}, (16, "meta_info.cached_tokens")),
        ({"timings": {"cache_n": 39, "prompt_n": 1}}, (39, "timings.cache_n")),
        (
            {"usage": {"prompt_tokens_details": None}, "timings": {"cache_n": 5}},
            (5, "timings.cache_n"),
        ),
        ({"usage": {"prompt_tokens": 40, "prompt_tokens_details": None}}, (None, None)),
        ({"usage": {"prompt_tokens_details": {"cached_tokens": True}}}, (None, None)),
        ({"usage": {"prompt_tokens_details": {"cached_tokens": -1}}}, (None, None)),
        ({"tokens_cached": 41}, (None, None)),
    ],
)
def test_reported_cached_tokens(reply, expected):
    assert reported_cached_tokens(reply) == expected


def test_request_body_replays_one_prefill():
    request = ChatRequest(
        line=3,
        format="anthropic",
        system="You are terse.",
        messages=({"role": "user", "content": "hi"},),
        tools=({"type": "function", "function": {"name": "f", "parameters": {}}},),
        params={"tool_choice": "auto", "max_tokens": 900, "temperature": 0.7, "top_k": 5},
    )
    body = request_body(request, "served")
    assert body == {
        "model": "served",
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": "hi"},
        ],
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {}}}],
        "tool_choice": "auto",
        "max_tokens": 1,
        "temperature": 0,
        "stream": False,
    }
    seen = request_from_body(body)
    assert seen.messages == tuple(body["messages"])
    assert seen.tools == tuple(body["tools"])


@pytest.mark.parametrize(
    ("first", "second", "sent_salts", "hit"),
    [
        ({"cache_salt": "a"}, {"cache_salt": "a"}, ("a", "a"), True),
        ({"cache_salt": "a"}, {"cache_salt": "b"}, ("a", "b"), False),
        # the server never sees prompt_cache_key, and the prediction does not read it
        ({"prompt_cache_key": "a"}, {"prompt_cache_key": "b"}, (None, None), True),
        ({"prompt_cache_key": "a", "cache_salt": "s"}, {"cache_salt": "s"}, ("s", "s"), True),
    ],
)
def test_the_prediction_reads_the_salt_the_server_is_sent(first, second, sent_salts, hit):
    renderer = get_renderer("qwen3", "qwen")
    model = make_cache_model("vllm", block_size=4)
    results = []
    for params, salt in zip((first, second), sent_salts, strict=True):
        request = ChatRequest(
            line=1,
            format="openai-chat",
            messages=({"role": "user", "content": "Change my flight to Boston, please."},),
            params=params,
        )
        body = request_body(request, "served")
        assert body.get("cache_salt") == salt and "prompt_cache_key" not in body
        query = sent_query(renderer, request)
        assert query.cache_salt == salt
        results.append(model.process(query).cached_tokens)
    assert (results[1] > 0) is hit


def test_request_from_body_rejects_non_chat():
    with pytest.raises(ReplayError, match="not a chat-completions request"):
        request_from_body({"prompt": "hello"})


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_server_is_one_clear_error():
    url = f"http://127.0.0.1:{_closed_port()}"
    client = EngineClient(url, retries=1, backoff=0.0, timeout=2.0)
    with client, pytest.raises(ReplayError, match=rf"cannot reach {url}/v1/models"):
        client.served_model()


def test_timed_queries_are_in_send_order_and_timed_from_the_first_send():
    from prefixlint.cache import CacheQuery
    from prefixlint.replay.server import ServerReply, timed_queries

    queries = [CacheQuery(tokens=[1, 2]), CacheQuery(tokens=[3]), CacheQuery(tokens=[4])]
    # The second request left before the first (two threads), the third after both.
    replies = [
        ServerReply(2, 0, "timings.cache_n", 1.5, started_s=100.25),
        ServerReply(1, 0, "timings.cache_n", 0.5, started_s=100.0),
        ServerReply(1, 0, None, 2.0, "HTTP 500", started_s=101.0),
    ]
    order = timed_queries(queries, replies)
    assert [i for i, _ in order] == [1, 0, 2]
    assert [(q.timestamp, q.finish) for _, q in order] == [(0.0, 0.5), (0.25, 1.75), (1.0, 3.0)]
    assert [list(q.tokens or []) for _, q in order] == [[3], [1, 2], [4]]
    assert timed_queries([], []) == []


def test_the_server_took_a_request_its_own_time_before_its_answer():
    from prefixlint.cache import CacheQuery
    from prefixlint.replay.server import ServerReply, last_pass_s, server_time_s, timed_queries

    def reply(timings, started, latency):
        return ServerReply(1, 0, "timings.cache_n", latency, started_s=started, timings=timings)

    assert server_time_s(reply((100, 50.0, 1.5), 0.0, 1.0)) == pytest.approx(0.0515)
    assert server_time_s(reply(None, 0.0, 1.0)) == 0.0
    # 3000 evaluated tokens are decoded in passes of 2048 and 952: the last pass is 952/3000
    # of the prompt time (190.4 ms), then the sampled token's 0.5 ms.
    assert last_pass_s(reply((3000, 600.0, 0.5), 0.0, 1.0)) == pytest.approx(0.1909)
    assert last_pass_s(reply((4096, 400.0, 0.0), 0.0, 1.0)) == pytest.approx(0.2)
    assert last_pass_s(reply((0, 0.0, 2.0), 0.0, 1.0)) == pytest.approx(0.002)
    assert last_pass_s(reply(None, 0.0, 1.0)) == 0.0
    # Busy until halfway through the last pass (one pass each here, no pass for the third).
    # The first, sent at 10, worked 0.5 s of its 2: taken at 11.5. The second, sent at 10.5,
    # worked 0.25 of its 1, which would place its take at 11.25; but the server takes tasks
    # in the order they came, so not before the first: 11.5. The third reports no timings
    # and was sent at 11: taken after the second, at 11.5 too.
    queries = [CacheQuery(tokens=[1]), CacheQuery(tokens=[2]), CacheQuery(tokens=[3])]
    replies = [
        reply((100, 500.0, 0.0), 10.0, 2.0),
        reply((100, 250.0, 0.0), 10.5, 1.0),
        reply(None, 11.0, 0.5),
    ]
    order = timed_queries(queries, replies)
    assert [i for i, _ in order] == [0, 1, 2]
    assert [(q.timestamp, q.finish) for _, q in order] == [
        (pytest.approx(1.5), pytest.approx(1.75)),
        (pytest.approx(1.5), pytest.approx(1.5)),
        (pytest.approx(1.5), pytest.approx(1.5)),
    ]
    # Two sent 25 ms apart whose timings put the later one's take 1 ms before the earlier
    # one's (clock noise): taken in the order sent.
    close = [reply((100, 508.0, 0.0), 39.570, 0.540), reply((100, 422.0, 0.0), 39.595, 0.428)]
    order = timed_queries(queries[:2], close)
    assert [i for i, _ in order] == [0, 1]
    assert order[0][1].timestamp == pytest.approx(0.032)
    assert order[1][1].timestamp == pytest.approx(0.032)
    # A server time longer than the latency (clocks apart) is never before the send.
    ((_, query),) = timed_queries(queries[:1], [reply((1, 5000.0, 0.0), 10.0, 1.0)])
    assert query.timestamp == 0.0


def test_concurrent_sends_are_paced_and_in_log_order():
    import threading
    import time

    from prefixlint.replay.server import ServerReply, send_in_order

    sent: list[tuple[int, float]] = []
    lock = threading.Lock()

    class Client:  # of a server that shows no slots
        def slots(self):
            return None

        def complete(self, body):
            with lock:
                sent.append((body["n"], time.monotonic()))
            time.sleep(0.001 * (5 - body["n"] % 5))
            return ServerReply(1, 0, None, 0.0, started_s=0.0)

    bodies = [{"n": n} for n in range(8)]
    started = time.monotonic()
    replies = list(send_in_order(Client(), bodies, concurrency=3, gap_s=0.02))  # type: ignore[arg-type]
    assert len(replies) == 8
    assert [n for n, _ in sent] == list(range(8))
    assert sent[-1][1] - started >= 7 * 0.02
