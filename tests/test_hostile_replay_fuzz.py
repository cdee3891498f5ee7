"""Fuzzing the server replay's reading of answers: arbitrary statuses, headers and bodies
(JSON of any shape, bytes, gzip that is not gzip, cut-off bodies, Prometheus text with
NaN and Infinity). Every call returns; a chat answer is a reply or a counted error, and the
report built from the replies is strict JSON."""

from __future__ import annotations

import gzip
import json

import pytest
from hostile_server import hostile_server, response, send
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.replay.metrics import PrefixCacheCounters
from prefixlint.replay.report import ReplayReport, render_json
from prefixlint.replay.server import EngineClient, ServerReply

JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(min_value=-(2**70), max_value=2**70),
        st.floats(),
        st.text(max_size=10),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=10,
)
USAGE_LIKE = st.fixed_dictionaries(
    {},
    optional={
        "usage": st.one_of(
            JSON_VALUES,
            st.fixed_dictionaries(
                {"prompt_tokens": JSON_VALUES},
                optional={
                    "prompt_tokens_details": st.dictionaries(st.just("cached_tokens"), JSON_VALUES)
                },
            ),
        ),
        "meta_info": st.dictionaries(st.just("cached_tokens"), JSON_VALUES),
        "timings": st.dictionaries(st.sampled_from(["cache_n", "prompt_n"]), JSON_VALUES),
        "data": st.lists(st.dictionaries(st.just("id"), JSON_VALUES), max_size=2),
    },
)
METRICS = st.lists(
    st.tuples(
        st.sampled_from(["vllm:prefix_cache_queries_total", "vllm:prefix_cache_hits_total", "x"]),
        st.sampled_from(["", '{model="m"}', '{a="}"', "{"]),
        st.sampled_from(["1", "NaN", "+Inf", "-Inf", "1e400", "x", ""]),
    ),
    max_size=4,
).map(lambda samples: "\n".join(f"{n}{labels} {value}" for n, labels, value in samples).encode())


def dump(value) -> bytes:
    return json.dumps(value, allow_nan=True).encode()


BODIES = st.one_of(
    USAGE_LIKE.map(dump),
    JSON_VALUES.map(dump),
    st.binary(max_size=64),
    METRICS,
    USAGE_LIKE.map(lambda v: gzip.compress(dump(v))),
)
ANSWERS = st.tuples(
    st.sampled_from([200, 200, 200, 201, 204, 400, 404, 429, 500, 503]),
    st.dictionaries(
        st.sampled_from(["Content-Encoding", "Content-Type", "Retry-After"]),
        st.sampled_from(["gzip", "deflate", "br", "identity", "x", "0", "-1", "nan"]),
        max_size=2,
    ),
    BODIES,
    st.sampled_from(["whole", "cut", "reset"]),
)


@pytest.fixture(scope="module")
def server():
    def scenario(path, connection, state):
        status, headers, body, ending = state["answer"]
        if ending == "whole":
            send(connection, status, body, headers)
        elif ending == "cut":
            connection.sendall(response(status, body + b"0123456789", headers)[:-10])
        # "reset": the handler returns and the connection closes without an answer

    with hostile_server(scenario) as (url, state):
        yield url, state


def ask_everything(url: str, state: dict, answer) -> None:
    state["answer"] = answer
    with EngineClient(url, timeout=2.0, retries=1, backoff=0.0) as client:
        reply = client.complete({"messages": [{"role": "user", "content": "hi"}]})
        model = client.served_model()
        counters = client.prefix_cache_counters()
    assert isinstance(reply, ServerReply)
    if reply.error is not None:
        assert reply.cached_tokens is None and "\n" not in reply.error
    assert model is None or isinstance(model, str)
    assert counters is None or isinstance(counters, PrefixCacheCounters)
    summary = {"cached": reply.cached_tokens, "error": reply.error}
    if counters is not None:
        summary.update(queries=counters.queries, hits=counters.hits)
    report = ReplayReport("server", {}, summary, {}, [summary])
    json.loads(render_json(report), parse_constant=pytest.fail)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(ANSWERS)
def test_any_answer_is_read_or_counted(server, answer):
    ask_everything(*server, answer)


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(ANSWERS)
def test_any_answer_is_read_or_counted_many(server, answer):
    ask_everything(*server, answer)
