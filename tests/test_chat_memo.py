"""Segment-memoized tokens equal encoding the whole rendered text."""

from __future__ import annotations

import unicodedata
from dataclasses import replace
from itertools import accumulate
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_chat_qwen3 import CASES, REQUESTS

from prefixlint.chat import Renderer, memo, render
from prefixlint.chat.memo import SegmentEncoder
from prefixlint.chat.pieces import encode_block
from prefixlint.sources.logs import read_log
from prefixlint.tokenizers import get_tokenizer


@pytest.mark.parametrize("spec", ["qwen", "qwen-raw"])
@pytest.mark.parametrize("name", CASES)
def test_memoized_tokens_equal_full_encode(name, spec):
    rendered = render(CASES[name], tokenizer=spec)
    assert list(rendered.tokens) == get_tokenizer(spec).encode(rendered.text)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(REQUESTS)
def test_generated_requests_memoized_tokens_equal_full_encode(req):
    rendered = render(req)
    assert list(rendered.tokens) == get_tokenizer("qwen").encode(rendered.text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain text, no special tokens",
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
        "<|im_end|><|im_start|>",
        "a\n\n<tool_call>\n{}\n</tool_call><|im_end|>\n",
        "e\u0301 caf\u00e9 \u212b<|im_end|>\n\u00c5",
    ],
)
def test_segment_encoder_matches_tokenizer(text):
    tokenizer = get_tokenizer("qwen")
    encoder = SegmentEncoder(tokenizer)
    tokens, _ = encoder.encode(text)
    assert tokens == tokenizer.encode(text)


def test_boundaries_map_to_first_token_starting_there():
    tokenizer = get_tokenizer("qwen")
    text = "<|im_start|>user\nHello world<|im_end|>\n"
    tokens, at = SegmentEncoder(tokenizer).encode(text, [0, 12, 17, len(text)])
    assert at[0] == 0
    assert tokens[at[0]] == tokenizer.special_tokens["<|im_start|>"]
    assert tokenizer.decode(tokens[at[1] : at[2]]) == "user\n"
    assert tokenizer.decode(tokens[at[2] :]) == "Hello world<|im_end|>\n"
    assert at[3] == len(tokens)


def test_boundaries_in_non_nfc_text():
    tokenizer = get_tokenizer("qwen")
    text = "<|im_start|>user\nCafe\u0301 ok<|im_end|>\n"
    boundary = text.index(" ok")
    tokens, at = SegmentEncoder(tokenizer).encode(text, [boundary])
    assert tokenizer.decode(tokens[at[0] :]).startswith(" ok")


def test_memo_reuses_segments_and_stays_bounded():
    renderer = Renderer(tokenizer="qwen", cache_size=3)
    conversation = CASES["multi-turn"]
    for turn in range(1, len(conversation.messages) + 1):
        renderer.render(replace(conversation, messages=conversation.messages[:turn]))
    assert renderer.encoder.hits > 0
    assert len(renderer.encoder) == 3


LOGS = Path(__file__).parent.parent / "fixtures" / "logs"


@pytest.mark.parametrize(
    "name", ["tau_openai_breakers", "tau_anthropic_breakers", "responses_small", "otel_spans"]
)
def test_fixture_logs_memoized_tokens_equal_full_encode(name):
    tokenizer = get_tokenizer("qwen")
    renderer = Renderer(tokenizer="qwen")
    for request in read_log(str(LOGS / f"{name}.jsonl")):
        rendered = renderer.render(request)
        assert list(rendered.tokens) == tokenizer.encode(rendered.text), request.line
    assert renderer.turns.hits + renderer.encoder.hits > renderer.encoder.misses


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="ab é東京😀\n\t.,\u0301Å\u212b", max_size=40))
def test_token_starts_match_tokenizer_offsets(text):
    tokenizer = get_tokenizer("qwen")
    segment = SegmentEncoder(tokenizer).segment(text)
    seen = unicodedata.normalize("NFC", text)
    offsets = tokenizer.offsets(text)
    assert list(segment.ids) == tokenizer.encode(text)
    assert list(segment.starts) == [start for start, _ in offsets]
    assert segment.normalized == (seen != text)


LINES = st.text(alphabet="ab é東京😀\n\r\t .,:-/'s1\u0301Å\u212b\u00a0\u2028", max_size=24)


@settings(max_examples=400, deadline=None)
@given(st.lists(LINES, min_size=1, max_size=60), st.sampled_from(["qwen", "qwen-raw"]))
def test_long_segments_encoded_line_by_line_equal_a_full_encode(lines, spec):
    """A segment past CHUNKED_CHARS is encoded line by line (memo of lines shared with the
    next segment): ids and token starts are those of the whole text."""
    tokenizer = get_tokenizer(spec)
    text = "\n".join(lines) + "\n" + "x" * memo.CHUNKED_CHARS
    encoder = SegmentEncoder(tokenizer)
    for probe in (text, "Now: 09:00\n" + text, text.replace("a", "b", 1)):
        segment = encoder.segment(probe)
        seen = unicodedata.normalize("NFC", probe) if spec == "qwen" else probe
        assert list(segment.ids) == tokenizer.encode(probe)
        assert list(segment.starts) == [start for start, _ in tokenizer.offsets(probe)]
        assert segment.normalized == (seen != probe)
        assert segment.length == len(seen)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(LINES, min_size=1, max_size=30),
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 2), LINES), min_size=1, max_size=6),
)
def test_segments_reusing_the_previous_lines_equal_a_full_encode(lines, edits):
    """Each segment takes the lines it shares at its start and end with the previous one
    from that one's encoding: ids, token starts and length stay those of a full encode."""
    tokenizer = get_tokenizer("qwen")
    encoder = SegmentEncoder(tokenizer)
    tail = "\n" + "x" * memo.CHUNKED_CHARS
    for at, how, line in edits:
        at %= len(lines) + 1
        if how == 0:
            lines = [*lines[:at], line, *lines[at:]]  # a line added
        elif how == 1 and at < len(lines):
            lines = [*lines[:at], line, *lines[at + 1 :]]  # a line replaced
        elif len(lines) > 1:
            lines = [*lines[:at], *lines[at + 1 :]]  # a line removed
        text = "\n".join(lines) + tail
        segment = encoder.segment(text)
        seen = unicodedata.normalize("NFC", text)
        assert list(segment.ids) == tokenizer.encode(text)
        assert list(segment.starts) == [start for start, _ in tokenizer.offsets(text)]
        assert segment.normalized == (seen != text)
        assert segment.length == len(seen)


def test_shared_lines_cut_where_both_texts_cut():
    def previous(text):
        ends = list(accumulate(map(len, memo.LINE_CUT.split(text))))
        return memo.LineEncoding(text, None, ends, [])

    def shared(before, after):
        return memo.shared_lines(previous(before), after)

    assert shared("A\nB\nCC\nD", "A\nB\nCX\nD") == (2, 3)
    # "B\n x" is one line (no cut before a space): it is not shared with "B\nx".
    assert shared("A\nB\n x\nD", "A\nB\nx\nD") == (1, 2)
    # The first line is never a suffix line, and the two parts never overlap.
    assert shared("A\nA\nA\nA", "A\nA\nA") == (2, 3)
    assert shared("A\nA\nA", "A\nA\nA\nA") == (2, 2)


@pytest.mark.parametrize(
    "pieces",
    [
        ["<|im_start|>system\nS", "\n\n# Tools", "\n{}", "<|im_end|>\n"],
        ["a", "b", "c"],
        ["<|im_start|>user\nx<|im_end|>\n", "<|im_start|>assistant\n"],
        ["x</tool_response>", "\n<tool_response>\ny", "</tool_response><|im_end|>\n"],
    ],
)
def test_encode_pieces_matches_encoding_the_joined_text(pieces):
    tokenizer = get_tokenizer("qwen")
    encoder = SegmentEncoder(tokenizer)
    for _ in range(2):  # cold, then from the memo
        tokens, starts = encoder.encode_pieces(pieces)
        assert list(tokens) == tokenizer.encode("".join(pieces))
        offsets = tokenizer.offsets("".join(pieces))
        for index, start in enumerate(starts):
            position = sum(map(len, pieces[:index]))
            assert start == sum(1 for first, _ in offsets if first < position)


def test_pieces_of_one_run_share_its_remembered_ids():
    encoder = SegmentEncoder(get_tokenizer("qwen"))
    turn = [("messages[0]", "<|im_start|>user\n"), ("messages[0]", "hi<|im_end|>\n")]
    first, again = encode_block(turn, encoder), encode_block(turn, encoder)
    assert isinstance(first.ids, tuple)
    assert first.ids is again.ids  # one tuple, remembered once, not a copy per block
    two_runs = ["<|im_start|>user\nhi<|im_end|>\n", "<|im_start|>assistant\n"]
    tokens, starts = encoder.encode_pieces(two_runs)
    assert isinstance(tokens, tuple)
    assert starts == [0, len(encoder.encode_pieces(two_runs[:1])[0])]
