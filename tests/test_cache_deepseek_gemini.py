from __future__ import annotations

import pytest

from prefixlint.cache import CacheQuery, make_cache_model

A = list(range(100))


def hits(model, *prompts, **fields):
    return [model.process(CacheQuery(tokens=list(p), **fields)).cached_tokens for p in prompts]


def test_deepseek_common_prefix_is_persisted_after_two_requests():
    # The documented example: A+B and A+C both miss, A+D then hits A.
    model = make_cache_model("deepseek")
    assert hits(model, [*A, -1], [*A, -2], [*A, -3]) == [0, 0, 100]


def test_deepseek_hits_only_whole_units():
    model = make_cache_model("deepseek")
    hits(model, A)
    # A prompt sharing 50 tokens with A: no unit ends there (yet).
    assert hits(model, [*A[:50], -1], [*A[:50], -2]) == [0, 50]


def test_deepseek_end_of_input_and_output_units():
    model = make_cache_model("deepseek")
    model.process(CacheQuery(tokens=A, output_tokens=[-5, -6]))
    assert hits(model, A, [*A, -5, -6, -7]) == [100, 102]


def test_deepseek_expiry():
    model = make_cache_model("deepseek", idle_seconds=60)
    assert hits(model, A, timestamp=0) == [0]
    result = model.process(CacheQuery(tokens=A, timestamp=61))
    assert (result.cached_tokens, result.miss_reason) == (0, "ttl-expired")


def test_deepseek_fixed_interval_units():
    model = make_cache_model("deepseek", interval_tokens=32)
    hits(model, A)
    assert hits(model, [*A[:70], -1]) == [64]


@pytest.mark.parametrize(("length", "expected"), ((63, 0), (64, 64), (100, 64), (128, 128)))
def test_deepseek_legacy_64_token_units(length, expected):
    model = make_cache_model("deepseek", rules="legacy")
    assert hits(model, range(length), range(length))[1] == expected


@pytest.mark.parametrize(
    ("model_name", "length", "expected", "reason"),
    (
        ("gemini-2.5-flash", 2000, 0, "below-minimum"),
        ("gemini-2.5-flash", 2100, 2100, None),
        ("gemini-3.1-pro-preview", 4000, 0, "below-minimum"),
        ("gemini-3.1-pro-preview", 4100, 4100, None),
        ("gemini-3-flash-preview", 1100, 1100, None),
    ),
)
def test_gemini_minimum_by_model(model_name, length, expected, reason):
    model = make_cache_model("gemini")
    query = CacheQuery(tokens=list(range(length)), model=model_name)
    model.process(query)
    result = model.process(query)
    assert (result.cached_tokens, result.miss_reason) == (expected, reason)


def test_gemini_shared_prefix_and_idle_expiry():
    model = make_cache_model("gemini", model="gemini-2.5-pro", idle_seconds=60)
    prompt = list(range(5000))
    model.process(CacheQuery(tokens=prompt, timestamp=0))
    shared = model.process(CacheQuery(tokens=[*prompt[:3000], -1], timestamp=30))
    late = model.process(CacheQuery(tokens=prompt, timestamp=200))
    assert shared.cached_tokens == 3000
    assert (late.cached_tokens, late.miss_reason) == (0, "ttl-expired")
