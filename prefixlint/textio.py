"""Read source files as text and write them back byte-faithfully.

A file is decoded without touching its line endings, and a byte-order mark stays in the text
as U+FEFF (so the BOM rule can see and remove it, and every other fix keeps it). UTF-16 and
UTF-32 files are recognised by their BOM; everything else must be UTF-8.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import os
import re
import stat
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from prefixlint.context import SourceError

MAX_FILE_BYTES = 10 * 1024 * 1024
"""Larger files are not analysed: prompt sources are small, and a rule may be quadratic."""

_BOM_ENCODINGS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


class UnreadableText(SourceError):
    """The bytes are not text prefixlint can check; ``line``/``column`` locate the problem."""


@dataclass(frozen=True)
class SourceText:
    """A decoded file: its text (BOM included as U+FEFF) and the encoding to write it back."""

    text: str
    encoding: str = "utf-8"

    @property
    def newline(self) -> str:
        """The file's dominant line ending."""
        crlf = self.text.count("\r\n")
        return "\r\n" if crlf and crlf * 2 >= self.text.count("\n") else "\n"


def _position_of_byte(data: bytes, offset: int) -> tuple[int, int]:
    line_start = data.rfind(b"\n", 0, offset) + 1
    column = len(data[line_start:offset].decode("utf-8", errors="replace")) + 1
    return data.count(b"\n", 0, offset) + 1, column


def decode(data: bytes) -> SourceText:
    """Decode file bytes, or raise :class:`UnreadableText` for binary or non-UTF-8 data."""
    for bom, encoding in _BOM_ENCODINGS:
        if data.startswith(bom):
            try:
                return SourceText(data.decode(encoding), encoding)
            except UnicodeDecodeError as exc:
                raise UnreadableText(f"invalid {encoding} at byte {exc.start}") from None
    nul = data.find(b"\0")
    if nul != -1:
        line, column = _position_of_byte(data, nul)
        raise UnreadableText("binary file (contains NUL bytes), not checked", line, column)
    try:
        return SourceText(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        line, column = _position_of_byte(data, exc.start)
        raise UnreadableText(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})", line, column
        ) from None


def read_source(path: Path) -> SourceText:
    """Read and decode ``path``; files over :data:`MAX_FILE_BYTES`, and anything but a
    regular file (a pipe or device could block the read), are refused unread.

    Raises ``OSError`` when the file cannot be read at all.
    """
    mode = path.stat().st_mode
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    if not stat.S_ISREG(mode):
        raise UnreadableText("not a regular file; not checked")
    descriptor = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(descriptor, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode):  # swapped for a pipe or device since the check
            raise UnreadableText("not a regular file; not checked")
        if status.st_size > MAX_FILE_BYTES:
            raise UnreadableText(
                f"file is {status.st_size / 1e6:.1f} MB, over the"
                f" {MAX_FILE_BYTES // 2**20} MiB limit; not checked"
            )
        data = handle.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableText(f"file grew over the {MAX_FILE_BYTES // 2**20} MiB limit")
    return decode(data)


def read_stream(stream: BinaryIO) -> SourceText:
    """Read and decode a byte stream (stdin), reading at most one byte over the limit."""
    data = stream.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise UnreadableText(f"input is over the {MAX_FILE_BYTES // 2**20} MiB limit; not checked")
    return decode(data)


def encode(text: str, encoding: str) -> bytes:
    """Bytes to write for ``text``; a UTF-16/32 file whose BOM was removed becomes UTF-8."""
    if encoding != "utf-8" and not text.startswith("\ufeff"):
        encoding = "utf-8"
    return text.encode(encoding)


STALE_TEMPORARY_SECONDS = 60
"""A temporary file of :func:`write_atomic` older than this was left by a killed run."""


def remove_stale_temporaries(path: Path) -> list[Path]:
    """Delete the temporary files a killed :func:`write_atomic` of ``path`` left behind.

    Only names :func:`write_atomic` makes (``.NAME.XXXXXXXX.tmp``) older than
    :data:`STALE_TEMPORARY_SECONDS` are removed, so that a run writing the same file right
    now keeps its own. Returns the removed paths.
    """
    pattern = re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]{{8}}\.tmp")
    removed: list[Path] = []
    try:
        candidates = [p for p in path.parent.iterdir() if pattern.fullmatch(p.name)]
    except OSError:
        return removed
    for candidate in candidates:
        with contextlib.suppress(OSError):
            if time.time() - candidate.lstat().st_mtime > STALE_TEMPORARY_SECONDS:
                candidate.unlink()
                removed.append(candidate)
    return removed


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` through a temporary file in the same folder.

    The file keeps its permission bits; readers never see a half-written file. Temporary
    files that an earlier, killed run left beside ``path`` are removed first.
    """
    mode = path.stat().st_mode & 0o7777
    remove_stale_temporaries(path)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
        raise
