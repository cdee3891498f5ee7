"""Log files: plain or gzip, stdin, size limits, one request or skipped line per line; a
``.parquet`` log, one per row (:mod:`prefixlint.sources.logs.parquet`); local paths, or URLs
of any filesystem fsspec reads."""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import re
import sys
import zlib
from collections.abc import Iterator
from typing import BinaryIO

from prefixlint.sources.logs.base import FORMATS, LogItem, LogReadError, SkippedLine
from prefixlint.sources.logs.json_lines import LineDecoder
from prefixlint.sources.logs.limits import (
    DEFAULT_LIMITS,
    CountingReader,
    LogLimitError,
    LogLimits,
    OverlongLine,
    bounded_lines,
)
from prefixlint.sources.logs.parquet import read_parquet
from prefixlint.sources.logs.records import READERS, parse_line

GZIP_MAGIC = b"\x1f\x8b"
GZIP_BUFFER = 1 << 20
PARQUET_SUFFIX = ".parquet"
# A log named by URL (file://, s3://, gs://, ...) is opened through fsspec.
URL_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]+://")


def _open_url(url: str) -> BinaryIO:
    """The log at ``url``, opened through fsspec (installed with ``prefixlint[ray]``, with the
    filesystem's own package for remote ones: ``s3fs``, ``gcsfs``, ...)."""
    try:
        import fsspec
    except ImportError:
        raise LogReadError(f"{url}: logs named by URL need fsspec: pip install fsspec") from None
    try:
        opened: BinaryIO = fsspec.open(url, "rb").open()
    except (OSError, ImportError, ValueError) as exc:
        raise LogReadError(f"{url}: cannot read log: {exc}") from None
    return opened


def open_log(path: str, stack: contextlib.ExitStack) -> tuple[BinaryIO, CountingReader | None]:
    """The log's decompressed bytes and, for gzip, the counter of compressed bytes read;
    what must be closed goes on ``stack``.

    Raises :class:`LogReadError` when the file cannot be opened.
    """
    if path == "-":
        raw = sys.stdin.buffer
    elif URL_SCHEME.match(path):
        raw = stack.enter_context(_open_url(path))
    else:
        try:
            raw = stack.enter_context(open(path, "rb"))  # noqa: SIM115
        except OSError as exc:
            raise LogReadError(f"{path}: cannot read log: {exc.strerror or exc}") from None
    if path.endswith(".gz") or (hasattr(raw, "peek") and raw.peek(2)[:2] == GZIP_MAGIC):
        compressed = CountingReader(raw)
        # GzipFile seeks its file only to rewind, which reading forward never does.
        unzipped = stack.enter_context(gzip.GzipFile(fileobj=compressed, mode="rb"))  # type: ignore[call-overload]
        # Buffered in C: reading a gzip log line by line costs no more than a plain one.
        return io.BufferedReader(unzipped, buffer_size=GZIP_BUFFER), compressed
    return raw, None


def read_log(
    path_or_dash: str | os.PathLike[str],
    *,
    format: str = "auto",
    limits: LogLimits = DEFAULT_LIMITS,
) -> Iterator[LogItem]:
    """Stream a JSONL log: one :data:`LogItem` per line (see the module docstring).

    The file is opened before this returns, so a missing or unreadable file raises
    :class:`LogReadError` here; a corrupt gzip stream, or a log past one of the size
    ``limits`` (:mod:`prefixlint.sources.logs.limits`), raises it while iterating. A line
    over the line limit is skipped with its reason.
    Lines are decoded by one :class:`~prefixlint.sources.logs.json_lines.LineDecoder`: a message or
    tool list that repeats on later lines is the same object in every request holding it,
    so requests must not be mutated.
    """
    if format != "auto" and format not in READERS:
        raise ValueError(f"unknown log format {format!r}: use auto or one of {', '.join(FORMATS)}")
    path = os.fspath(path_or_dash)
    stack = contextlib.ExitStack()
    if path.endswith(PARQUET_SUFFIX):
        source = stack.enter_context(_open_url(path)) if URL_SCHEME.match(path) else path
        return read_parquet(path, source, format, stack)
    try:
        stream, compressed = open_log(path, stack)
    except BaseException:
        stack.close()
        raise
    return _items(path, bounded_lines(stream, limits, compressed), stack, format, limits)


def _items(
    path: str,
    lines: Iterator[bytes | OverlongLine],
    stack: contextlib.ExitStack,
    format: str,
    limits: LogLimits,
) -> Iterator[LogItem]:
    with stack:
        line_number = 0
        decode = LineDecoder()
        try:
            for raw in lines:
                line_number += 1
                if isinstance(raw, OverlongLine):
                    yield SkippedLine(line_number, raw.reason(limits.max_line_bytes))
                else:
                    yield parse_line(line_number, raw, format, decode)
        except LogLimitError as exc:
            raise LogReadError(f"{path}: line {line_number + 1}: {exc}") from None
        except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
            raise LogReadError(
                f"{path}: line {line_number + 1}: not a valid gzip stream: {exc}"
            ) from None
        except OSError as exc:
            raise LogReadError(f"{path}: line {line_number + 1}: cannot read log: {exc}") from None
