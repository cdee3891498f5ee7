"""Fingerprints and causes of the monitor, without HTTP."""

from __future__ import annotations

import copy
import pickle

import pytest

from prefixlint.monitor import Monitor
from prefixlint.monitor.causes import divergence
from prefixlint.monitor.fingerprint import BLOCK_CHARS, fingerprint, request_format
from prefixlint.monitor.usage import StreamUsage, usage_from

SYSTEM = "You are the support assistant of Example Corp. Today is 2026-01-15."
TOOLS = [
    {"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
    for name in ("search", "fetch", "summarise")
]
BASE = {
    "model": "gpt-4o-mini",
    "tools": TOOLS,
    "messages": [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "How do I restart it?"},
        {"role": "assistant", "content": "Hold the red button."},
        {"role": "user", "content": "And reset it?"},
    ],
}


def _changed(**edits) -> dict:
    body = copy.deepcopy(BASE)
    for path, value in edits.items():
        target = body
        *parents, last = path.split("__")
        for key in parents:
            target = target[int(key) if key.isdigit() else key]
        target[int(last) if last.isdigit() else last] = value
    return body


def _swap(items, i, j):
    items = list(items)
    items[i], items[j] = items[j], items[i]
    return items


@pytest.mark.parametrize(
    ("new", "cause", "component"),
    (
        (BASE, None, None),
        (_changed(model="gpt-4o"), "PFX601", "model"),
        (_changed(tool_choice="required"), "PFX601", "params"),
        # vLLM's and SGLang's salt, OpenAI's routing key; a field no cache reads is none
        (_changed(cache_salt="tenant-2"), "PFX601", "params"),
        (_changed(prompt_cache_key="user-2"), "PFX601", "params"),
        (_changed(user="user-2"), None, None),
        (_changed(tools=_swap(TOOLS, 0, 2)), "PFX201", "tools[0]"),
        (_changed(tools=TOOLS[:2]), "PFX204", "tools[2]"),
        (_changed(messages__0__content=SYSTEM.replace("15", "16")), "PFX101", "messages[0]"),
        (_changed(messages__0__content=SYSTEM + "  "), "PFX402", "messages[0]"),
        (_changed(messages__0__content=SYSTEM + " Be brief."), "content-changed", "messages[0]"),
        (_changed(messages__2__content="Hold the RED button."), "PFX501", "messages[2]"),
        (_changed(messages__1__content="Where is the button?"), "first-seen", "messages[1]"),
        (_changed(messages__3__content="And update it?"), "first-seen", "messages[3]"),
        (
            _changed(messages=[*BASE["messages"], {"role": "assistant", "content": "Hold both."}]),
            "first-seen",
            "messages[4]",
        ),
        (
            _changed(messages=[BASE["messages"][0], *BASE["messages"][2:]]),
            "PFX502",
            "messages[1]",
        ),
        (
            _changed(
                tools=[
                    {**TOOLS[0], "function": {"parameters": {"type": "object"}, "name": "search"}},
                    *TOOLS[1:],
                ]
            ),
            "PFX202",
            "tools[0]",
        ),
    ),
)
def test_divergence(new, cause, component):
    old = fingerprint(BASE, "openai-chat")
    assert divergence(old, fingerprint(new, "openai-chat")) == (cause, component)


def test_uuid_change_in_anthropic_system_is_an_id():
    body = {
        "model": "claude",
        "system": "Session 3f2a9c4e-1b7d-4e11-9a2b-0c1d2e3f4a5b.",
        "messages": [],
    }
    other = {**body, "system": "Session 7c9e6679-7425-40de-944b-e07fc1f90ae7."}
    assert divergence(fingerprint(body, "anthropic"), fingerprint(other, "anthropic")) == (
        "PFX102",
        "system",
    )


def test_stable_chars_stop_at_the_block_of_the_first_difference():
    long_system = "x" * (10 * BLOCK_CHARS)
    old = _changed(messages__0__content=long_system + " 1")
    new = _changed(messages__0__content=long_system + " 2")
    a, b = fingerprint(old, "openai-chat"), fingerprint(new, "openai-chat")
    assert 10 * BLOCK_CHARS <= a.stable_chars(b) < a.chars
    assert a.stable_chars(a) == a.chars


def test_fingerprints_hold_no_prompt_text():
    monitor = Monitor()
    monitor.observe_request(BASE, "openai-chat", "route")
    state = pickle.dumps([record.print for record in monitor._routes["route"].recent])
    for text in ("support assistant", "restart", "red button", "search"):
        assert text.encode() not in state


@pytest.mark.parametrize(
    ("path", "expected"),
    (
        ("/v1/chat/completions", "openai-chat"),
        ("/openai/deployments/x/chat/completions", "openai-chat"),
        ("/v1/responses", "openai-responses"),
        ("/v1/messages", "anthropic"),
        ("/v1/messages/count_tokens", None),
        ("/v1/embeddings", None),
    ),
)
def test_request_format(path, expected):
    assert request_format(path) == expected


@pytest.mark.parametrize(
    ("usage", "fmt", "prompt", "cached"),
    (
        (
            {"prompt_tokens": 2000, "prompt_tokens_details": {"cached_tokens": 1024}},
            "openai-chat",
            2000,
            1024,
        ),
        ({"prompt_tokens": 10}, "openai-chat", 10, None),
        (
            {"input_tokens": 3000, "input_tokens_details": {"cached_tokens": 2048}},
            "openai-responses",
            3000,
            2048,
        ),
        (
            {
                "input_tokens": 50,
                "cache_read_input_tokens": 1800,
                "cache_creation_input_tokens": 200,
            },
            "anthropic",
            2050,
            1800,
        ),
        (None, "anthropic", None, None),
        # Read as the audit reads logged usage (prefixlint.sources.logs.usage): DeepSeek's
        # and LiteLLM's cache fields count, and an unreported cache read is None, not 0.
        ({"prompt_tokens": 900, "prompt_cache_hit_tokens": 640}, "openai-chat", 900, 640),
        ({"prompt_tokens": 900, "cache_read_input_tokens": 512}, "openai-chat", 900, 512),
        ({"input_tokens": 70}, "anthropic", 70, None),
        ({"cache_read_input_tokens": 1800}, "anthropic", None, 1800),
    ),
)
def test_usage_fields(usage, fmt, prompt, cached):
    parsed = usage_from(usage, fmt)
    assert (parsed.prompt_tokens if parsed else None, parsed.cached_tokens if parsed else None) == (
        prompt,
        cached,
    )


def test_stream_usage_across_chunk_boundaries():
    events = (
        b'event: message_start\ndata: {"type":"message_start","message":{"usage":'
        b'{"input_tokens":5,"cache_read_input_tokens":1000,"cache_creation_input_tokens":0}}}\n\n'
        b'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":7}}\n\n'
    )
    reader = StreamUsage("anthropic")
    for start in range(0, len(events), 17):
        reader.feed(events[start : start + 17])
    usage = reader.usage()
    assert (usage.prompt_tokens, usage.cached_tokens) == (1005, 1000)


def test_stream_usage_ignores_a_message_start_without_a_message_object():
    reader = StreamUsage("anthropic")
    reader.feed(b'data: {"type":"message_start","message":"usage"}\n\n')
    assert reader.usage() is None
