import itertools

import pytest

from prefixlint.tokenizers import TokenizerError, get_tokenizer


@pytest.fixture(scope="module")
def qwen():
    return get_tokenizer("qwen")


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("\n", [198]),
        ("\n\n", [271]),
        ("<|im_start|>system\n", [151644, 8948, 198]),
        ("<|im_end|>", [151645]),
        ("<tool_call>", [151657]),
        ("<think>", [151667]),
        ("</think>", [151668]),
    ],
)
def test_qwen_known_ids(qwen, text, ids):
    assert qwen.encode(text) == ids


@pytest.mark.parametrize(
    "text",
    ["", "hello world", "café 日本語 🙂", "a\r\nb\n\n\tc  ", "<|im_start|>user\nhi<|im_end|>\n"],
)
def test_offsets_cover_text_and_decode_roundtrips(qwen, text):
    ids = qwen.encode(text)
    offsets = qwen.offsets(text)
    assert len(offsets) == len(ids)
    assert qwen.decode(ids) == text
    if text:
        assert offsets[0][0] == 0
        assert offsets[-1][1] == len(text)
        for (_, end), (start, _) in itertools.pairwise(offsets):
            assert start <= end


def test_offsets_never_split_a_character(qwen):
    text = "🙂🙃 日本"
    for start, end in qwen.offsets(text):
        assert 0 <= start <= end <= len(text)


def test_qwen_normalises_to_nfc_like_hugging_face():
    decomposed = "cafe\u0301"
    assert get_tokenizer("qwen").encode(decomposed) == get_tokenizer("qwen").encode("café")
    assert get_tokenizer("qwen-raw").encode(decomposed) != get_tokenizer("qwen-raw").encode("café")


def test_tokenizers_are_loaded_once():
    assert get_tokenizer("qwen") is get_tokenizer("qwen")


def test_missing_tiktoken_file_names_the_cache_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    get_tokenizer.cache_clear()
    with pytest.raises(TokenizerError, match="TIKTOKEN_CACHE_DIR"):
        get_tokenizer("tiktoken:cl100k_base")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("nope", "unknown tokenizer"),
        ("tiktoken:not_an_encoding", "unknown tiktoken encoding"),
        ("hf:/nonexistent/model/path", "cannot load Hugging Face tokenizer"),
    ],
)
def test_bad_specs_fail_with_one_line(spec, message):
    with pytest.raises(TokenizerError, match=message) as info:
        get_tokenizer(spec)
    assert "\n" not in str(info.value)
