from __future__ import annotations

import pytest

from prefixlint.cache import CacheQuery, make_cache_model

PROMPT = list(range(5000))


def query(tokens, **fields):
    return CacheQuery(tokens=list(tokens), **fields)


@pytest.mark.parametrize(
    ("length", "expected", "reason"),
    (
        (1000, 0, "below-minimum"),
        (1023, 0, "below-minimum"),
        (1024, 1024, None),
        (1151, 1024, None),
        (1152, 1152, None),
        (2000, 1920, None),
    ),
)
def test_repeat_hits_in_1024_plus_128_steps(length, expected, reason):
    model = make_cache_model("openai", model="gpt-4o")
    model.process(query(PROMPT[:length], timestamp=0))
    result = model.process(query(PROMPT[:length], timestamp=1))
    assert (result.cached_tokens, result.miss_reason) == (expected, reason)


def test_partial_prefix_rounds_down_to_128():
    model = make_cache_model("openai", model="gpt-4o")
    model.process(query(PROMPT[:3000], timestamp=0))
    short = model.process(query([*PROMPT[:1500], -1, -2], timestamp=1))
    longer = model.process(query([*PROMPT[:1500], *range(-1, -300, -1)], timestamp=2))
    assert (short.cached_tokens, short.miss_reason) == (1408, None)  # lost to rounding only
    assert (longer.cached_tokens, longer.miss_reason) == (1408, "first-seen")


def test_shared_prefix_below_the_minimum_is_not_reused():
    model = make_cache_model("openai", model="gpt-4o")
    model.process(query(PROMPT[:3000], timestamp=0))
    result = model.process(query([*PROMPT[:900], *range(-1, -2000, -1)], timestamp=1))
    assert (result.cached_tokens, result.miss_reason, result.longest_available) == (
        0,
        "below-minimum",
        896,
    )


@pytest.mark.parametrize(
    ("model_name", "gap", "expected", "reason"),
    (
        ("gpt-4o", 599, 1920, None),
        ("gpt-4o", 601, 0, "ttl-expired"),
        ("gpt-4.1", 3600, 0, "ttl-expired"),
        ("gpt-5.5", 3 * 3600, 1920, None),  # gpt-5.5 and later: 24h retention only
        ("gpt-5.5", 86401, 0, "ttl-expired"),
    ),
)
def test_retention(model_name, gap, expected, reason):
    model = make_cache_model("openai")
    model.process(query(PROMPT[:2000], timestamp=0, model=model_name))
    result = model.process(query(PROMPT[:2000], timestamp=gap, model=model_name))
    assert (result.cached_tokens, result.miss_reason) == (expected, reason)


def test_hits_refresh_the_idle_time():
    model = make_cache_model("openai", model="gpt-4o")
    hits = [model.process(query(PROMPT[:2000], timestamp=t)).cached_tokens for t in (0, 500, 1000)]
    assert hits == [0, 1920, 1920]


def test_retention_override():
    model = make_cache_model("openai", model="gpt-4o", retention="24h")
    model.process(query(PROMPT[:2000], timestamp=0))
    assert model.process(query(PROMPT[:2000], timestamp=7200)).cached_tokens == 1920


def test_prompt_cache_key_routes_to_separate_caches():
    model = make_cache_model("openai", model="gpt-4o")
    model.process(query(PROMPT[:2000], cache_key="a"))
    other = model.process(query(PROMPT[:2000], cache_key="b"))
    same = model.process(query(PROMPT[:2000], cache_key="a"))
    assert (other.cached_tokens, same.cached_tokens) == (0, 1920)


def test_gpt_5_6_caches_only_at_breakpoints():
    model = make_cache_model("openai", model="gpt-5.6")
    first = model.process(query(PROMPT[:4000], boundaries=[1500, 3000, 4000]))
    # Same first 3000 tokens, new last message: the implicit breakpoint moved, no fallback.
    second = model.process(query([*PROMPT[:3000], *range(-1, -1201, -1)], boundaries=[3000, 4200]))
    assert (first.cached_tokens, first.cache_write_tokens) == (0, 4000)
    assert (second.cached_tokens, second.cache_write_tokens) == (0, 4200)
    assert second.miss_reason == "first-seen"


def test_gpt_5_6_explicit_breakpoint_is_read_by_a_later_request():
    model = make_cache_model("openai", model="gpt-5.6-mini")
    model.process(query(PROMPT[:4000], boundaries=[3000, 4000], breakpoints=[(3000, 1800)]))
    result = model.process(
        query(
            [*PROMPT[:3000], *range(-1, -1201, -1)],
            boundaries=[3000, 4200],
            breakpoints=[(3000, 1800)],
        )
    )
    assert (result.cached_tokens, result.cache_write_tokens) == (3000, 1200)
    assert result.miss_reason == "first-seen"


def test_gpt_5_6_exact_positions_and_30_minute_ttl():
    model = make_cache_model("openai", model="gpt-5.6")
    model.process(query(PROMPT[:1100], timestamp=0))
    soon = model.process(query(PROMPT[:1100], timestamp=1700))
    late = model.process(query(PROMPT[:1100], timestamp=1700 + 1801))
    assert (soon.cached_tokens, soon.cache_write_tokens) == (1100, 0)  # no 128 rounding
    assert (late.cached_tokens, late.miss_reason) == (0, "ttl-expired")


def test_gpt_5_6_breakpoints_below_the_minimum_are_not_cached():
    model = make_cache_model("openai", model="gpt-5.6")
    model.process(query(PROMPT[:1000]))
    result = model.process(query(PROMPT[:1000]))
    assert (result.cached_tokens, result.cache_write_tokens, result.miss_reason) == (
        0,
        0,
        "below-minimum",
    )


def test_mode_follows_the_model_of_each_query():
    model = make_cache_model("openai")
    model.process(query(PROMPT[:2000], model="gpt-5.6"))
    model.process(query(PROMPT[:2000], model="gpt-4o"))
    older = model.process(query(PROMPT[:2000], model="gpt-4o"))
    newer = model.process(query(PROMPT[:2000], model="gpt-5.6"))
    assert (older.cached_tokens, newer.cached_tokens) == (1920, 2000)


def test_invalid_mode():
    with pytest.raises(ValueError, match="mode must be one of"):
        make_cache_model("openai", mode="sometimes")
