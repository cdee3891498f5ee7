from __future__ import annotations

import pytest

from prefixlint.cache import CacheQuery, InvalidQuery, make_cache_model

PROMPT = list(range(6000))
FIVE_MINUTES, ONE_HOUR = 300, 3600
BLOCKS = list(range(100, 6001, 100))  # a content block ends every 100 tokens


def query(breakpoints, timestamp=None, length=6000, model="claude-sonnet-4-5"):
    return CacheQuery(
        tokens=PROMPT[:length],
        breakpoints=breakpoints,
        boundaries=[b for b in BLOCKS if b <= length],
        timestamp=timestamp,
        model=model,
    )


def test_write_then_read_at_a_breakpoint():
    model = make_cache_model("anthropic")
    first = model.process(query([(1500, FIVE_MINUTES), (3000, FIVE_MINUTES)]))
    second = model.process(query([(1500, FIVE_MINUTES), (3000, FIVE_MINUTES)]))
    third = model.process(query([(1500, FIVE_MINUTES), (3000, FIVE_MINUTES), (4500, FIVE_MINUTES)]))
    assert (first.cached_tokens, first.cache_write_tokens, first.miss_reason) == (
        0,
        3000,
        "first-seen",
    )
    assert (second.cached_tokens, second.cache_write_tokens, second.miss_reason) == (3000, 0, None)
    assert (third.cached_tokens, third.cache_write_tokens) == (3000, 1500)


@pytest.mark.parametrize(
    ("later_breakpoint", "expected"),
    (
        (2000, 2000),
        (3900, 2000),  # 2000 is the 20th boundary back, counting 3900 itself
        (4000, 0),  # beyond the lookback window
    ),
)
def test_lookback_of_20_blocks(later_breakpoint, expected):
    model = make_cache_model("anthropic")
    model.process(query([(2000, FIVE_MINUTES)]))
    assert model.process(query([(later_breakpoint, FIVE_MINUTES)])).cached_tokens == expected


def test_a_second_breakpoint_extends_the_lookback():
    model = make_cache_model("anthropic")
    model.process(query([(2000, FIVE_MINUTES)]))
    result = model.process(query([(2000, FIVE_MINUTES), (5000, FIVE_MINUTES)]))
    assert (result.cached_tokens, result.cache_write_tokens) == (2000, 3000)


def test_more_than_four_breakpoints_is_an_error():
    model = make_cache_model("anthropic")
    with pytest.raises(InvalidQuery, match="at most 4"):
        model.process(query([(p, FIVE_MINUTES) for p in (1000, 2000, 3000, 4000, 5000)]))


def test_longer_ttl_after_shorter_is_an_error():
    model = make_cache_model("anthropic")
    with pytest.raises(InvalidQuery, match="longer cache TTL"):
        model.process(query([(1000, FIVE_MINUTES), (2000, ONE_HOUR)]))


def test_no_breakpoint_no_caching():
    model = make_cache_model("anthropic")
    model.process(query([]))
    result = model.process(query([]))
    assert (result.cached_tokens, result.cache_write_tokens, result.miss_reason) == (0, 0, None)


@pytest.mark.parametrize(
    ("model_name", "breakpoint", "expected", "reason"),
    (
        ("claude-opus-5", 600, 600, None),
        ("claude-sonnet-4-5-20250929", 1000, 0, "below-minimum"),
        ("claude-sonnet-4-5-20250929", 1100, 1100, None),
        ("claude-opus-4-7", 2000, 0, "below-minimum"),
        ("claude-opus-4-7", 2100, 2100, None),
        ("claude-opus-4-5", 4000, 0, "below-minimum"),
        ("claude-haiku-4-5", 4100, 4100, None),
        ("anthropic.claude-sonnet-4-6-v1:0", 1100, 1100, None),
    ),
)
def test_minimum_by_model(model_name, breakpoint, expected, reason):
    model = make_cache_model("anthropic")
    model.process(query([(breakpoint, FIVE_MINUTES)], model=model_name))
    result = model.process(query([(breakpoint, FIVE_MINUTES)], model=model_name))
    assert (result.cached_tokens, result.miss_reason) == (expected, reason)


def test_minimum_override():
    model = make_cache_model("anthropic", minimum=100)
    model.process(query([(200, FIVE_MINUTES)], model="claude-opus-4-5"))
    assert model.process(query([(200, FIVE_MINUTES)], model="claude-opus-4-5")).cached_tokens == 200


def test_five_minute_ttl_refreshes_on_hit():
    model = make_cache_model("anthropic")
    hits = [
        model.process(query([(3000, FIVE_MINUTES)], timestamp=t)).cached_tokens
        for t in (0, 200, 450, 751)
    ]
    assert hits == [0, 3000, 3000, 0]


def test_expired_entry_is_reported():
    model = make_cache_model("anthropic")
    model.process(query([(3000, FIVE_MINUTES)], timestamp=0))
    result = model.process(query([(3000, FIVE_MINUTES)], timestamp=301))
    assert (result.cached_tokens, result.miss_reason, result.longest_available) == (
        0,
        "ttl-expired",
        3000,
    )
    assert result.cache_write_tokens == 3000


def test_one_hour_ttl():
    model = make_cache_model("anthropic")
    model.process(query([(3000, ONE_HOUR)], timestamp=0))
    assert model.process(query([(3000, FIVE_MINUTES)], timestamp=3000)).cached_tokens == 3000
