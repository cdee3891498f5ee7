"""Image parts on the vllm engine path: pad tokens per item, and per-image block hashes."""

import json

import pytest
from click.testing import CliRunner

from prefixlint.cache.base import CacheQuery
from prefixlint.cache.query import build_query
from prefixlint.cache.vllm import VllmCache, block_hashes
from prefixlint.chat import TemplateError, get_renderer
from prefixlint.chat.media import part_identity
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
