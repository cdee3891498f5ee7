"""Image parts on the vllm engine path: pad tokens per item, and per-image block hashes."""

import json

import pytest
from click.testing import CliRunner

from prefixlint.cache.base import CacheQuery
from prefixlint.cache.query import build_query
from prefixlint.cache.vllm import VllmCache, block_hashes
from prefixlint.chat import TemplateError, get_renderer
from prefixlint.chat.media import VISION_PROCESSORS, part_identity
from prefixlint.cli.audit import audit
from prefixlint.request import ChatRequest


def image(url):
    return {"type": "image_url", "image_url": {"url": url}}


def request(*parts, text="What is in this picture?"):
    content = [{"type": "text", "text": text}, *parts]
    return ChatRequest(
        line=1, format="openai-chat", messages=[{"role": "user", "content": content}]
    )


def test_vllm_expands_the_pad_token_and_records_the_item():
    rendered = get_renderer("qwen3", "qwen", engine="vllm", image_tokens=3).render(
        request(image("http://x/a.png"), text="look")
    )
    pads = "<|image_pad|>" * 3
    user = f"<|im_start|>user\nlook\n<|vision_start|>{pads}<|vision_end|><|im_end|>\n"
    assert rendered.text == user + "<|im_start|>assistant\n"
    # <|im_start|> user \n look \n <|vision_start|>: the pads start at token 6
    (item,) = rendered.media
    assert (item.offset, item.length) == (6, 3)
    assert item.identity == part_identity(image("http://x/a.png"))
    assert rendered.tokens[6:9] == (151655,) * 3
    message = rendered.components[0]
    assert (message.char_end, message.token_end) == (len(user), 12)
    assert rendered.tokens == tuple(get_renderer("qwen3", "qwen").tokenizer.encode(rendered.text))


def test_other_engines_keep_one_pad_token():
    rendered = get_renderer("qwen3", "qwen", engine="transformers").render(request(image("a")))
    assert rendered.media == ()
    assert rendered.tokens.count(151655) == 1


def test_identity_is_the_url_or_data_or_uuid():
    assert part_identity(image("a")) == part_identity(image("a")) != part_identity(image("b"))
    audio = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
    other = {"type": "input_audio", "input_audio": {"data": "BBBB", "format": "wav"}}
    assert part_identity(audio) != part_identity(other)
    tagged = {"type": "image_url", "image_url": {"url": "a", "uuid": "u1"}}
    assert part_identity(tagged) == part_identity(
        {"type": "image_url", "image_url": {"url": "b", "uuid": "u1"}}
    )


@pytest.mark.parametrize(
    "part",
    [
        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}},
        {"type": "audio_url", "audio_url": {"url": "http://x/a.wav"}},
    ],
)
def test_vllm_refuses_audio_parts_as_a_qwen_vl_server_does(part):
    with pytest.raises(TemplateError, match=r"At most 0 audio\(s\)"):
        get_renderer("qwen3", "qwen", engine="vllm").render(request(image("a"), part))
    # transformers renders the part as a placeholder; an image alone is served
    assert get_renderer("qwen3", "qwen", engine="transformers").render(request(part)).tokens
    assert get_renderer("qwen3", "qwen", engine="vllm").render(request(image("a"))).media


def test_audit_counts_the_requests_vllm_refuses(tmp_path):
    log = tmp_path / "log.jsonl"
    audio = {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
    lines = [request(image("a")), request(audio), request(image("a"))]
    log.write_text(
        "".join(
            json.dumps({"request": {"model": "vl", "messages": r.messages}}) + "\n" for r in lines
        )
    )
    args = [str(log), "--engine", "vllm", "--format", "json", "--no-what-if"]
    result = CliRunner().invoke(audit, args)
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.output)
    assert [r["line"] for r in report["requests"]] == [1, 3]
    assert "audio" in json.dumps(report["skipped"])


def test_a_pad_token_without_a_media_part_is_an_error():
    with pytest.raises(TemplateError, match="image_pad"):
        get_renderer("qwen3", "qwen", engine="vllm").render(request(text="<|image_pad|>"))


@pytest.mark.parametrize(
    ("media", "second", "cached"),
    [
        # 64 tokens, blocks of 16; a repeat hits 3 blocks (the last token is recomputed)
        (((20, 8, "A"),), ((20, 8, "A"),), 48),
        # another image in block 1: only block 0 hits
        (((20, 8, "A"),), ((20, 8, "B"),), 16),
        # an image over blocks 1 and 2, changed: block 0 hits
        (((28, 8, "A"),), ((28, 8, "B"),), 16),
        # an image in block 2 only, changed: blocks 0 and 1 hit
        (((36, 8, "A"),), ((36, 8, "B"),), 32),
        # the same tokens with no image: the blocks before the image's block hit
        (((36, 8, "A"),), (), 32),
        # the same image at another offset: its pad tokens moved, block 1 differs
        (((20, 8, "A"),), ((24, 8, "A"),), 16),
    ],
)
def test_hits_at_block_granularity(media, second, cached):
    cache = VllmCache(block_size=16)
    tokens = list(range(64))
    assert cache.process(CacheQuery(tokens=tokens, media=media)).cached_tokens == 0
    assert cache.process(CacheQuery(tokens=tokens, media=second)).cached_tokens == cached


def test_blocks_before_an_image_hash_as_text():
    tokens = list(range(64))
    plain, with_image = (
        block_hashes(CacheQuery(tokens=tokens)),
        block_hashes(CacheQuery(tokens=tokens, media=((36, 8, "A"),))),
    )
    assert plain[:2] == with_image[:2] and plain[2] != with_image[2]


def test_rendered_requests_same_and_different_image():
    renderer = get_renderer("qwen3", "qwen", engine="vllm", image_tokens=40)
    first = request(image("http://x/a.png"))
    same, other = request(image("http://x/a.png")), request(image("http://x/b.png"))
    queries = [build_query(r, renderer.render(r)) for r in (first, same, other)]
    offset = queries[0].media[0][0]
    prompt = queries[0].prompt_tokens
    assert all(q.tokens == queries[0].tokens for q in queries)
    cache = VllmCache(block_size=16)
    cached = [cache.process(q).cached_tokens for q in queries]
    assert cached == [0, (prompt - 1) // 16 * 16, offset // 16 * 16]


def test_audit_image_tokens_option(tmp_path):
    log = tmp_path / "log.jsonl"
    urls = ["http://x/a.png", "http://x/a.png", "http://x/b.png"]
    log.write_text(
        "".join(
            json.dumps({"request": {"model": "vl", "messages": request(image(u)).messages}}) + "\n"
            for u in urls
        )
    )

    def rows(count):
        args = [str(log), "--engine", "vllm", "--image-tokens", count, "--format", "json"]
        result = CliRunner().invoke(audit, [*args, "--no-what-if"])
        assert result.exit_code in (0, 1), result.output
        return json.loads(result.output)["requests"]

    few, many = rows("8"), rows("40")
    assert many[0]["prompt_tokens"] - few[0]["prompt_tokens"] == 32
    renderer = get_renderer("qwen3", "qwen", engine="vllm", image_tokens=40)
    offset = renderer.render(request(image(urls[0]))).media[0].offset
    prompt = many[0]["prompt_tokens"]
    assert [r["cached_tokens"] for r in many] == [0, (prompt - 1) // 16 * 16, offset // 16 * 16]


def inline_png(width, height):
    import base64
    import struct
    import zlib

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    data = (
        b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    )
    return image("data:image/png;base64," + base64.b64encode(data).decode())


@pytest.mark.parametrize(
    ("name", "width", "height", "tokens"),
    [
        # Qwen2.5-VL: 28-pixel cells; 224x224 is 8x8 cells
        ("qwen2.5-vl", 224, 224, 64),
        ("qwen2.5-vl", 448, 448, 256),
        ("qwen2.5-vl", 640, 480, 23 * 17),  # 644x476 after rounding to 28
        # Qwen3-VL: 32-pixel cells; 448x448 is 14x14 cells
        ("qwen3-vl", 448, 448, 196),
        ("qwen3-vl", 1920, 1080, 60 * 34),  # 1920x1088
        # below the least pixels: scaled up (65536 for Qwen3-VL, 3136 for Qwen2.5-VL)
        ("qwen3-vl", 10, 20, 6 * 12),
        ("qwen2.5-vl", 28, 28, 4),
    ],
)
def test_image_tokens_from_size(name, width, height, tokens):
    assert VISION_PROCESSORS[name].image_tokens(width, height) == tokens


def transformers_smart_resize():
    """transformers' own ``smart_resize``, taken from its source: the module that holds it
    imports torchvision, which the function does not need."""
    import ast
    import importlib.util
    import math
    from pathlib import Path

    spec = importlib.util.find_spec("transformers")
    if spec is None or spec.origin is None:
        pytest.skip("transformers is not installed")
    source = Path(spec.origin).parent / "models" / "qwen2_vl" / "image_processing_qwen2_vl.py"
    tree = ast.parse(source.read_text())
    (function,) = [n for n in tree.body if getattr(n, "name", None) == "smart_resize"]
    namespace = {"math": math}
    exec(compile(ast.Module([function], []), str(source), "exec"), namespace)
    return namespace["smart_resize"]


@pytest.mark.parametrize("name", sorted(VISION_PROCESSORS))
@pytest.mark.parametrize(
    "size", [(1, 1), (10, 20), (224, 224), (333, 777), (4032, 3024), (8000, 100), (40000, 600)]
)
def test_image_tokens_equal_transformers_smart_resize(name, size):
    smart_resize = transformers_smart_resize()
    processor = VISION_PROCESSORS[name]
    width, height = size
    factor = processor.patch_size * processor.merge_size
    h, w = smart_resize(height, width, factor, processor.min_pixels, processor.max_pixels)
    patches = (h // processor.patch_size) * (w // processor.patch_size)
    assert processor.image_tokens(width, height) == patches // processor.merge_size**2


def test_inline_images_get_their_own_pad_counts():
    renderer = get_renderer("qwen3", "qwen", engine="vllm", image_tokens=5)
    parts = (inline_png(448, 448), image("http://x/a.png"), inline_png(64, 64))
    rendered = renderer.render(request(*parts, text="compare"))
    assert [item.length for item in rendered.media] == [196, 5, 64]
    offsets = [item.offset for item in rendered.media]
    # each item's pads follow the previous item's and its <|vision_end|>\n<|vision_start|>
    assert offsets[1] - offsets[0] == 196 + 3 and offsets[2] - offsets[1] == 5 + 3
    message = rendered.components[0]
    assert message.token_end == rendered.tokens.index(151645) + 2  # through <|im_end|>\n
    assert rendered.text[message.char_start : message.char_end].endswith("<|im_end|>\n")
    assert rendered.tokens == tuple(get_renderer("qwen3", "qwen").tokenizer.encode(rendered.text))
    older = get_renderer("qwen3", "qwen", engine="vllm", vision_processor="qwen2.5-vl")
    assert [i.length for i in older.render(request(*parts)).media] == [256, 64, 4]


def test_audit_vision_processor_option(tmp_path):
    log = tmp_path / "log.jsonl"
    messages = request(inline_png(448, 448)).messages
    log.write_text(json.dumps({"request": {"model": "vl", "messages": messages}}) + "\n")

    def prompt_tokens(*extra):
        args = [str(log), "--engine", "vllm", "--format", "json", "--no-what-if", *extra]
        result = CliRunner().invoke(audit, args)
        assert result.exit_code in (0, 1), result.output
        return json.loads(result.output)["requests"][0]["prompt_tokens"]

    assert prompt_tokens("--vision-processor", "qwen2.5-vl") - prompt_tokens() == 256 - 196
    result = CliRunner().invoke(audit, [str(log), "--vision-processor", "qwen9"])
    assert result.exit_code == 2 and "qwen9" in result.output
