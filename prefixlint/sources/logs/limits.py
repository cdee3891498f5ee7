"""Size limits for reading request logs, so that a broken or hostile log cannot take
unbounded memory or time.

- A line longer than :attr:`LogLimits.max_line_bytes` is never held whole: it is read in
  chunks up to its newline, thrown away, and reported as an :class:`OverlongLine` (the audit
  skips it with its reason and goes on).
- A file that yields more than :attr:`LogLimits.max_log_bytes` (after decompression) stops
  the read with a :class:`LogLimitError`.
- A gzip stream that expands past :attr:`LogLimits.gzip_floor_bytes` at more than
  :attr:`LogLimits.max_gzip_ratio` times the compressed bytes read so far (a decompression
  bomb) stops the read with a :class:`LogLimitError`. Real request logs compress about 25:1.

Zero turns a limit off.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

MIB = 1 << 20
DISCARD_CHUNK = MIB


@dataclass(frozen=True)
class LogLimits:
    """How much a log may hold; see the module docstring."""

    max_line_bytes: int = 8 * MIB
    max_log_bytes: int = 0
    max_gzip_ratio: int = 200
    gzip_floor_bytes: int = 4 * MIB


DEFAULT_LIMITS = LogLimits()


class LogLimitError(Exception):
    """The log is larger than a limit allows; the message names the limit."""


@dataclass(frozen=True)
class OverlongLine:
    """A line over the line limit, already read past; ``size`` is its length in bytes."""

    size: int

    def reason(self, limit: int) -> str:
        return f"line of {self.size:,} bytes is over the {limit:,}-byte limit (--max-line-bytes)"


class CountingReader:
    """A read-only byte stream that counts the bytes read through it (compressed input)."""

    def __init__(self, raw: BinaryIO) -> None:
        self.raw = raw
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.count += len(data)
        return data


class _Budget:
    """Bytes read from one log, checked against the file and gzip limits."""

    def __init__(self, limits: LogLimits, compressed: CountingReader | None) -> None:
        self.limits = limits
        self.compressed = compressed
        self.total = 0

    def add(self, size: int) -> None:
        self.total += size
        limits = self.limits
        if limits.max_log_bytes and self.total > limits.max_log_bytes:
            raise LogLimitError(
                f"log is over the {limits.max_log_bytes:,}-byte limit (--max-log-bytes)"
            )
        if (
            self.compressed is not None
            and limits.max_gzip_ratio
            and self.total > limits.gzip_floor_bytes
            and self.total > limits.max_gzip_ratio * max(self.compressed.count, 1)
        ):
            raise LogLimitError(
                f"gzip stream expands {self.total:,} bytes from {self.compressed.count:,}, "
                f"more than {limits.max_gzip_ratio}:1 (--max-gzip-ratio)"
            )


def bounded_lines(
    stream: BinaryIO, limits: LogLimits, compressed: CountingReader | None = None
) -> Iterator[bytes | OverlongLine]:
    """The lines of ``stream`` (newline kept), an :class:`OverlongLine` for each one over
    the line limit; raises :class:`LogLimitError` past the file or gzip limit."""
    budget = _Budget(limits, compressed)
    cap = limits.max_line_bytes
    while True:
        raw = stream.readline(cap + 1) if cap else stream.readline()
        if not raw:
            return
        budget.add(len(raw))
        if not cap or len(raw) <= cap or (len(raw) == cap + 1 and raw.endswith(b"\n")):
            yield raw
            continue
        size = len(raw)
        while not raw.endswith(b"\n"):
            raw = stream.readline(DISCARD_CHUNK)
            if not raw:
                break
            size += len(raw)
            budget.add(len(raw))
        yield OverlongLine(size)
