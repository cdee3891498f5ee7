"""Parquet logs: one logged record per row, its columns the record's fields.

Nested values are Parquet structs and lists. A struct column holds every field for every
row, so a null field is left out of the record, as a JSON line would not have it. Rows are
numbered from 1 in place of lines. pyarrow is imported only for a ``.parquet`` log.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any, BinaryIO

from prefixlint.sources.logs.base import LogItem, LogReadError
from prefixlint.sources.logs.records import parse_object

# Rows decoded at a time.
BATCH_ROWS = 1024


def without_nulls(value: Any) -> Any:
    """``value`` with every null field of its objects left out, at every depth."""
    if isinstance(value, dict):
        return {k: without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_nulls(item) for item in value]
    return value


def read_parquet(
    path: str, source: str | BinaryIO, format: str, stack: contextlib.ExitStack
) -> Iterator[LogItem]:
    """The rows of the Parquet log at ``source`` (``path`` names it in errors) as requests or
    skipped rows; what must be closed is on ``stack``. Raises :class:`LogReadError` when
    the file is not Parquet, here for its footer, while iterating for its data."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        stack.close()
        raise LogReadError(
            f"{path}: Parquet logs need pyarrow: pip install 'prefixlint[ray]'"
        ) from None
    try:
        table = pq.ParquetFile(source)
    except (OSError, pa.ArrowException) as exc:
        stack.close()
        raise LogReadError(f"{path}: cannot read Parquet log: {exc}") from None
    return _rows(path, table, format, stack, pa.ArrowException)


def _rows(
    path: str, table: Any, format: str, stack: contextlib.ExitStack, errors: type[Exception]
) -> Iterator[LogItem]:
    with stack:
        row = 0
        try:
            for batch in table.iter_batches(batch_size=BATCH_ROWS):
                for record in batch.to_pylist():
                    row += 1
                    yield parse_object(row, without_nulls(record), format)
        except (OSError, errors) as exc:
            raise LogReadError(f"{path}: row {row + 1}: cannot read Parquet log: {exc}") from None
