"""A versioned price table (``prices.toml`` beside this module, or ``--prices FILE``)."""

from __future__ import annotations

import fnmatch
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    import tomli as tomllib

DEFAULT_PRICES = Path(__file__).with_name("prices.toml")
PER_TOKENS = 1_000_000


class PriceError(Exception):
    """A price file cannot be read; the message names the file and the problem."""


@dataclass(frozen=True)
class Price:
    """US dollars per million prompt tokens for models whose name matches ``match``."""

    match: str
    input: float
    cached_input: float
    cache_write: float | None
    source: str
    date: str

    def cost(self, prompt: int, cached: int, written: int = 0) -> float:
        """What a prompt costs: cached tokens at the cached rate, written ones at the write
        rate, the rest at the input rate."""
        write_rate = self.input if self.cache_write is None else self.cache_write
        fresh = max(0, prompt - cached - written)
        return (fresh * self.input + cached * self.cached_input + written * write_rate) / PER_TOKENS


@dataclass(frozen=True)
class GpuTimePrice:
    """The GPU time a self-hosted engine spends prefilling what it did not have cached."""

    usd_per_hour: float
    prefill_tokens_per_second: float

    def cost(self, prompt: int, cached: int, written: int = 0) -> float:
        return max(0, prompt - cached) / self.prefill_tokens_per_second / 3600 * self.usd_per_hour


@dataclass(frozen=True)
class PriceTable:
    version: str
    prices: tuple[Price, ...]

    def lookup(self, model: str | None) -> Price | None:
        """The first entry whose pattern matches ``model`` (case-insensitive), if any."""
        if not model:
            return None
        name = model.lower()
        return next((p for p in self.prices if fnmatch.fnmatchcase(name, p.match.lower())), None)

    @staticmethod
    def load(path: str | Path | None = None) -> PriceTable:
        return _load(str(path or DEFAULT_PRICES))


@cache
def _load(path: str) -> PriceTable:
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise PriceError(f"{path}: cannot read price table: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise PriceError(f"{path}: not valid TOML: {exc}") from None
    prices = []
    for number, entry in enumerate(data.get("price", []), start=1):
        try:
            prices.append(
                Price(
                    match=str(entry["match"]),
                    input=float(entry["input"]),
                    cached_input=float(entry["cached_input"]),
                    cache_write=None if "cache_write" not in entry else float(entry["cache_write"]),
                    source=str(entry.get("source", "")),
                    date=str(entry.get("date", "")),
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise PriceError(f"{path}: price entry {number}: missing or bad field {exc}") from None
    return PriceTable(version=str(data.get("version", "unversioned")), prices=tuple(prices))
