"""The bundled price table: lookups by logged model name, costs, and table hygiene."""

import re

import pytest

from prefixlint.auditing.describe import dollars
from prefixlint.auditing.prices import Price, PriceError, PriceTable

TABLE = PriceTable.load()


@pytest.mark.parametrize(
    ("model", "rates"),
    [
        ("gpt-4o-2024-08-06", (2.50, 1.25, None)),
        ("gpt-4o-mini", (0.15, 0.075, None)),
        ("gpt-5", (1.25, 0.125, None)),
        ("gpt-5-2025-08-07", (1.25, 0.125, None)),
        ("gpt-5-mini", (0.25, 0.025, None)),
        ("gpt-5.4", (2.50, 0.25, None)),
        ("gpt-5.4-mini-2026-03-17", (0.75, 0.075, None)),
        ("gpt-5.5", (5.00, 0.50, None)),
        ("gpt-5.5-pro", (30.00, 30.00, None)),
        ("GPT-5.5", (5.00, 0.50, None)),
        ("claude-opus-4-20250514", (15.00, 1.50, 18.75)),
        ("claude-opus-4-1-20250805", (15.00, 1.50, 18.75)),
        ("claude-opus-4-5-20251101", (5.00, 0.50, 6.25)),
        ("claude-opus-4-7", (5.00, 0.50, 6.25)),
        ("claude-opus-5", (5.00, 0.50, 6.25)),
        ("claude-sonnet-4-6", (3.00, 0.30, 3.75)),
        ("claude-haiku-4-5", (1.00, 0.10, 1.25)),
    ],
)
def test_lookup(model, rates):
    price = TABLE.lookup(model)
    assert (price.input, price.cached_input, price.cache_write) == rates


@pytest.mark.parametrize("model", [None, "", "gpt-5.6", "my-finetune", "claude-sonnet-5"])
def test_unknown_models_get_no_price(model):
    assert TABLE.lookup(model) is None


def test_every_entry_is_reachable_dated_and_sourced():
    for price in TABLE.prices:
        example = re.sub(r"\[(.)-.\]", r"\1", price.match).replace("*", "")
        assert TABLE.lookup(example) is price, f"{price.match} is shadowed by an earlier entry"
        assert price.source.startswith("https://") and re.fullmatch(r"\d{4}-\d\d-\d\d", price.date)


@pytest.mark.parametrize(
    ("prompt", "cached", "written", "dollars"),
    [
        (1_000_000, 0, 0, 5.00),
        (1_000_000, 1_000_000, 0, 0.50),
        (1_000_000, 0, 1_000_000, 6.25),
        (2_000_000, 1_000_000, 500_000, 5.00 * 0.5 + 0.50 + 6.25 * 0.5),
    ],
)
def test_cost(prompt, cached, written, dollars):
    price = Price("m", input=5.00, cached_input=0.50, cache_write=6.25, source="", date="")
    assert price.cost(prompt, cached, written) == pytest.approx(dollars)


def test_a_write_without_a_write_rate_costs_the_input_rate():
    price = Price("m", input=2.00, cached_input=0.50, cache_write=None, source="", date="")
    assert price.cost(1_000_000, 0, 1_000_000) == pytest.approx(2.00)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[price]]\nmatch = 'x'\n", "price entry 1: missing or bad field"),
        ("version = \n", "not valid TOML"),
    ],
)
def test_bad_tables_name_the_file_and_problem(tmp_path, text, message):
    path = tmp_path / "prices.toml"
    path.write_text(text)
    with pytest.raises(PriceError, match=message) as caught:
        PriceTable.load(path)
    assert str(path) in str(caught.value)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "-"),
        (0.0, "$0.0000"),
        (0.0381, "$0.0381"),
        (-0.0026, "-$0.0026"),
        (1234.5, "$1,234.5000"),
    ],
)
def test_dollars(value, shown):
    assert dollars(value) == shown
