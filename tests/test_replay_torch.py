import json
import random
import sys

import pytest

torch = pytest.importorskip(
    "torch", reason="the torch replay needs torch (make torch, or pip install torch)"
)
pytest.importorskip("transformers")

from prefixlint.cache.base import CacheQuery  # noqa: E402
from prefixlint.cache.vllm import VllmCache  # noqa: E402
from prefixlint.replay import ReplayError  # noqa: E402
from prefixlint.replay.block_table import VllmBlockTable  # noqa: E402
from prefixlint.replay.inputs import Prompt  # noqa: E402
from prefixlint.replay.kv_pool import DeviceBlockPool, blocks_for_memory, parse_bytes  # noqa: E402
from prefixlint.replay.models import (  # noqa: E402
    import_torch,
    load_model,
    preset_names,
    read_config,
)
from prefixlint.replay.torch_backend import TorchReplayer, replay_with_baseline  # noqa: E402
from prefixlint.request import ChatRequest  # noqa: E402
from prefixlint.tokenizers import get_tokenizer  # noqa: E402

BLOCK = 16
QWEN_VOCAB = get_tokenizer("qwen").vocab_size


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    """Tiny matrices run fastest on one CPU thread (and shared CI runners are small)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def tiny():
    return load_model("tiny", vocab_needed=QWEN_VOCAB)


def replayer_for(tiny, num_blocks):
    torch_module, transformers = import_torch()
    pool = DeviceBlockPool(torch_module, tiny.geometry, num_blocks, BLOCK, tiny.device, tiny.dtype)
    return TorchReplayer(torch_module, transformers, tiny, pool, VllmBlockTable(BLOCK, num_blocks))


def prompts_of(token_lists):
    request = ChatRequest(line=0, format="openai-chat")
    return [
        Prompt("log.jsonl", line, request, tuple(tokens), CacheQuery(tokens=tuple(tokens)))
        for line, tokens in enumerate(token_lists, start=1)
    ]


def sessions(seed=7):
    """Two conversations sharing a system prompt, growing turn by turn, then repeats."""
    rng = random.Random(seed)
    draw = lambda n: [rng.randrange(QWEN_VOCAB) for _ in range(n)]  # noqa: E731
    system = draw(40)
    a, b = system + draw(9), system + draw(23)
    turns = []
    for _ in range(3):
        turns += [list(a), list(b)]
        a += draw(17)
        b += draw(12)
    return [*turns, turns[0], system[:32], turns[3]]


@pytest.mark.parametrize("name", ["tiny", "qwen3-0.6b", "llama-3.1-8b"])
def test_presets_cover_the_tokenizer(name):
    assert name in preset_names()
    _, config = read_config(name)
    assert config["vocab_size"] >= QWEN_VOCAB


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "not a preset"),
        ("[1, 2]", "needs a model_type"),
        ("{not json", "cannot read model config"),
    ],
)
def test_bad_model_configs(tmp_path, content, message):
    path = tmp_path / "config.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(ReplayError, match=message):
        read_config(str(path))


def test_vocabulary_must_cover_the_tokenizer(tmp_path):
    _, config = read_config("tiny")
    (tmp_path / "config.json").write_text(json.dumps({**config, "vocab_size": 1000}))
    with pytest.raises(ReplayError, match="does not cover the tokenizer's 151669 ids"):
        load_model(str(tmp_path), vocab_needed=QWEN_VOCAB)


def test_missing_torch_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(ReplayError, match=r"install prefixlint\[gpu\]"):
        import_torch()


@pytest.mark.parametrize(
    ("text", "expected"),
    [("8GiB", 8 * 2**30), ("512MB", 512 * 10**6), ("1e6", 10**6), ("2.5 kib", 2560)],
)
def test_parse_bytes(text, expected):
    assert parse_bytes(text) == expected


def test_parse_bytes_rejects_nonsense():
    with pytest.raises(ReplayError, match="memory size"):
        parse_bytes("lots")


def test_pool_too_small(tiny):
    with pytest.raises(ReplayError, match="fewer than 2 KV blocks"):
        blocks_for_memory(tiny.geometry.bytes_per_token * BLOCK, tiny.geometry, BLOCK)


def test_pool_gathers_what_it_stored(tiny):
    layers, heads, dim = tiny.geometry.layers, tiny.geometry.kv_heads, tiny.geometry.head_dim
    pool = DeviceBlockPool(torch, tiny.geometry, 6, BLOCK, tiny.device, tiny.dtype)
    kv = [(torch.randn(1, heads, 3 * BLOCK, dim), torch.randn(1, heads, 3 * BLOCK, dim))]
    kv *= layers
    pool.store(kv, blocks=[2, 0], slots=[5, 1])
    gathered = pool.gather([1, 5])
    assert len(gathered) == layers
    for (keys, values), (want_keys, want_values) in zip(gathered, kv, strict=True):
        order = torch.cat([torch.arange(0, BLOCK), torch.arange(2 * BLOCK, 3 * BLOCK)])
        assert torch.equal(keys, want_keys[:, :, order])
        assert torch.equal(values, want_values[:, :, order])


@pytest.mark.parametrize("num_blocks", [64, 6])
def test_reuse_equals_simulator_and_full_prefill(tiny, num_blocks):
    prompts = prompts_of(sessions())
    compared = replay_with_baseline(replayer_for(tiny, num_blocks), prompts)
    sim = VllmCache(block_size=BLOCK, capacity_tokens=num_blocks * BLOCK)
    expected = [sim.process(CacheQuery(tokens=p.tokens)).cached_tokens for p in prompts]
    assert [c.with_reuse.reused_tokens for c in compared] == expected
    assert sum(expected) > 0
    for c in compared:
        assert c.with_reuse.reused_tokens + c.with_reuse.computed_tokens == len(c.prompt.tokens)
        assert c.without_reuse.reused_tokens == 0
        assert c.logits_match, (c.prompt.line, c.max_abs_logit_diff)
        assert c.with_reuse.first_token == c.without_reuse.first_token


def test_small_pool_evicts():
    prompts = prompts_of(sessions())
    roomy, tight = (VllmCache(block_size=BLOCK, capacity_tokens=n * BLOCK) for n in (64, 6))
    hits = [
        [cache.process(CacheQuery(tokens=p.tokens)).cached_tokens for p in prompts]
        for cache in (roomy, tight)
    ]
    assert sum(hits[1]) < sum(hits[0])


def test_corrupted_pool_fails_the_logits_check(tiny):
    replayer = replayer_for(tiny, 64)
    first, again = prompts_of([sessions()[0]] * 2)
    replay_with_baseline(replayer, [first])
    replayer.pool.keys.normal_()
    (compared,) = replay_with_baseline(replayer, [again])
    assert compared.with_reuse.reused_tokens > 0
    assert not compared.logits_match


def test_prompt_longer_than_the_pool(tiny):
    (prompt,) = prompts_of([list(range(5 * BLOCK))])
    with pytest.raises(ReplayError, match=r"log.jsonl:1: .*needs 5 KV blocks"):
        replay_with_baseline(replayer_for(tiny, 3), [prompt])
