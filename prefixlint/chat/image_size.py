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

# JPEG start-of-frame markers: 0xC0-0xCF without DHT (C4), JPG (C8) and DAC (CC).
_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
# Markers that stand alone, without a length: TEM, RST0-7, SOI, EOI.
_JPEG_BARE = frozenset({0x01, *range(0xD0, 0xDA)})


def part_image_bytes(part: dict[str, object]) -> bytes | None:
    """The bytes of an image part's inline data (a base64 ``data:`` URL or source), or None."""
    kind = part.get("type")
    payload = part.get(kind) if isinstance(kind, str) else None
    source = part.get("source")
    if isinstance(payload, dict) and isinstance(payload.get("url"), str):
        return data_url_bytes(payload["url"])
    if isinstance(payload, str):
        return data_url_bytes(payload)
    if isinstance(source, dict) and source.get("type") == "base64":
        return _base64(source.get("data"))
    return None


def data_url_bytes(url: str) -> bytes | None:
    """The bytes a base64 ``data:`` URL holds, or None for any other URL."""
    head, comma, data = url.partition(",")
    if not comma or not head.startswith("data:") or not head.endswith(";base64"):
        return None
    return _base64(data)


def _base64(data: object) -> bytes | None:
    if not isinstance(data, str):
        return None
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
