"""Image sizes from file headers, for inline images in logged requests."""

import base64
import struct
import zlib

import pytest

from prefixlint.chat.image_size import data_url_bytes, image_size, part_image_size


def png(width, height):
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    return (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(header))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
    )


def jpeg(width, height, frame=0xC0, exif=b""):
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    app1 = b"\xff\xe1" + struct.pack(">H", len(exif) + 2) + exif if exif else b""
    table = b"\xff\xc4" + struct.pack(">H", 5) + b"\x00\x00\x00"  # a DHT before the frame
    sof = bytes([0xFF, frame]) + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + app1 + table + b"\xff" + sof + b"\xff\xd9"


def webp(kind, width, height):
    if kind == "VP8 ":
        body = b"\x00\x00\x00" + b"\x9d\x01\x2a" + struct.pack("<HH", width, height)
    elif kind == "VP8L":
        bits = (width - 1) | (height - 1) << 14
        body = b"\x2f" + bits.to_bytes(4, "little")
    else:
        body = b"\x00" * 4 + (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    chunk = kind.encode() + struct.pack("<I", len(body)) + body
    return b"RIFF" + struct.pack("<I", len(chunk) + 4) + b"WEBP" + chunk


@pytest.mark.parametrize(
    ("data", "size"),
    [
        (png(640, 480), (640, 480)),
        (b"GIF89a" + struct.pack("<HH", 320, 200) + b"\x00" * 4, (320, 200)),
        (b"GIF87a" + struct.pack("<HH", 1, 2), (1, 2)),
        (b"BM" + b"\x00" * 16 + struct.pack("<ii", 100, -50), (100, 50)),
        (jpeg(1024, 768), (1024, 768)),
        (jpeg(800, 600, frame=0xC2), (800, 600)),  # progressive
        (jpeg(300, 200, exif=b"Exif\x00\x00" + b"\x00" * 300), (300, 200)),
        (webp("VP8 ", 500, 400), (500, 400)),
        (webp("VP8L", 16383, 1), (16383, 1)),
        (webp("VP8X", 4000, 3000), (4000, 3000)),
    ],
)
def test_sizes_from_headers(data, size):
    assert image_size(data) == size


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"not an image",
        png(640, 480)[:20],  # cut inside the header
        png(0, 480),  # a zero side is no image
        jpeg(1024, 768)[:34],  # cut inside the frame header
        b"\xff\xd8\x00\x00",  # not a marker where one must be
        b"\xff\xd8\xff\xe0\x00\x01",  # a segment length under 2
        b"RIFF\x00\x00\x00\x00WEBPVP8 \x00\x00\x00\x00",  # no VP8 signature
        b"%PDF-1.7",
    ],
)
def test_no_size_without_a_known_complete_header(data):
    assert image_size(data) is None


def test_data_urls_and_parts():
    data = png(10, 20)
    url = "data:image/png;base64," + base64.b64encode(data).decode()
    assert data_url_bytes(url) == data
    assert data_url_bytes("https://x/a.png") is None
    assert data_url_bytes("data:text/plain,hello") is None  # not base64
    assert data_url_bytes("data:image/png;base64,@@@") in (None, b"")
    openai = {"type": "image_url", "image_url": {"url": url}}
    legacy = {"type": "image_url", "image_url": url}
    responses = {"type": "input_image", "input_image": url}
    source = {"type": "base64", "media_type": "image/png", "data": base64.b64encode(data).decode()}
    anthropic = {"type": "image", "source": source}
    for part in (openai, legacy, responses, anthropic):
        assert part_image_size(part) == (10, 20)
    remote = {"type": "image", "source": {"type": "url", "url": "https://x/a.png"}}
    assert part_image_size(remote) is None
    assert part_image_size({"type": "image_url", "image_url": {"url": "https://x"}}) is None
    # a JPEG's frame header after long metadata: the whole data is decoded for it
    exif = jpeg(300, 200, exif=b"Exif\x00\x00" + b"\x00" * 300)
    part = {
        "type": "image_url",
        "image_url": {"url": "data:image/jpeg;base64," + base64.b64encode(exif).decode()},
    }
    assert part_image_size(part) == (300, 200)
    assert (
        part_image_size({"type": "image_url", "image_url": {"url": "data:image/png;base64,@@"}})
        is None
    )
