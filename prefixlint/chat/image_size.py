"""The width and height of an image a request carries inline, read from its file header.

An OpenAI image part may hold its bytes in a ``data:`` URL (``image_url.url``) and an
Anthropic one in ``source.data`` (base64); the header of a PNG, GIF, WebP, BMP or JPEG file
names its size, so no image library is needed. Anything else (a remote URL, a format not
listed, a header cut short) has no size here.
"""

from __future__ import annotations

import base64
import binascii
import struct
from functools import lru_cache

# JPEG start-of-frame markers: 0xC0-0xCF without DHT (C4), JPG (C8) and DAC (CC).
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# Markers that stand alone, without a length: TEM, RST0-7, SOI, EOI.
_JPEG_BARE = frozenset({0x01, *range(0xD0, 0xDA)})
# Base64 characters enough for the headers that sit at a fixed place (48 bytes: PNG's IHDR,
# GIF's screen, WebP's VP8/VP8L/VP8X chunk, BMP's info header).
_HEAD_CHARS = 64


def part_image_size(part: dict[str, object]) -> tuple[int, int] | None:
    """``(width, height)`` of an image part's inline data (a base64 ``data:`` URL or source),
    or None. Remembered per data string: a conversation's image comes back in every later
    request, and the log reader hands the same string object each time."""
    kind = part.get("type")
    payload = part.get(kind) if isinstance(kind, str) else None
    source = part.get("source")
    if isinstance(payload, dict) and isinstance(payload.get("url"), str):
        return _url_size(payload["url"])
    if isinstance(payload, str):
        return _url_size(payload)
    if isinstance(source, dict) and source.get("type") == "base64":
        data = source.get("data")
        return _base64_size(data) if isinstance(data, str) else None
    return None


def data_url_bytes(url: str) -> bytes | None:
    """The bytes a base64 ``data:`` URL holds, or None for any other URL."""
    data = _data_url_payload(url)
    return None if data is None else _base64(data)


def _data_url_payload(url: str) -> str | None:
    comma = url.find(",", 0, 256)  # a data URL's media type and parameters come first
    head = url[:comma]
    if comma < 0 or not head.startswith("data:") or not head.endswith(";base64"):
        return None
    return url[comma + 1 :]


@lru_cache(maxsize=1024)
def _url_size(url: str) -> tuple[int, int] | None:
    data = _data_url_payload(url)
    return None if data is None else _base64_size(data)


@lru_cache(maxsize=1024)
def _base64_size(data: str) -> tuple[int, int] | None:
    """The size from the header, decoding only its first bytes unless the file is a JPEG,
    whose frame header may follow any amount of metadata."""
    head = _base64(data[:_HEAD_CHARS])
    if head is None:
        return None
    if head.startswith(b"\xff\xd8"):
        whole = _base64(data)
        return None if whole is None else image_size(whole)
    return image_size(head)


def _base64(data: str) -> bytes | None:
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return None


def image_size(data: bytes) -> tuple[int, int] | None:
    """``(width, height)`` from the header of a PNG, GIF, WebP, BMP or JPEG file, else None."""
    size: tuple[int, int] | None = None
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR" and len(data) >= 24:
        size = struct.unpack(">II", data[16:24])
    elif data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        size = struct.unpack("<HH", data[6:10])
    elif data.startswith(b"RIFF") and data[8:12] == b"WEBP":
        size = _webp_size(data)
    elif data.startswith(b"BM") and len(data) >= 26:
        width, height = struct.unpack("<ii", data[18:26])
        size = (width, abs(height))
    elif data.startswith(b"\xff\xd8"):
        size = _jpeg_size(data)
    if size is None or min(size) <= 0:
        return None
    return size


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    """Walk the JPEG segments to the first start-of-frame, whose header holds the size."""
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte before a marker
            at += 1
            continue
        if marker in _JPEG_BARE:
            at += 2
            continue
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        if marker in _JPEG_FRAMES:
            if at + 9 > len(data):
                return None
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        if length < 2:
            return None
        at += 2 + length
    return None
