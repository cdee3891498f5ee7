"""vLLM LoRA adapters (``--lora-modules``): each adapter's blocks carry its name."""

import json

import pytest
from click.testing import CliRunner

from prefixlint.cache.base import CacheQuery
from prefixlint.cache.query import build_query, model_namespace
from prefixlint.cache.vllm import VllmCache, block_hashes, chain_hashes
from prefixlint.chat import get_renderer
from prefixlint.cli.audit import audit
from prefixlint.request import ChatRequest

MESSAGES = [
    {"role": "system", "content": "You answer questions about the airline's booking policy."},
    {"role": "user", "content": "Can I change my flight to Boston without a fee?"},
]
LORAS = ["--lora-modules", "sql=/adapters/sql", "--lora-modules", '{"name": "chat", "path": "/c"}']


def test_adapter_namespace_is_its_name():
    adapters = frozenset({"sql", "chat"})
    assert model_namespace("sql", adapters) == (("lora_name", "sql"),)
    assert model_namespace("base", adapters) == ("model:base",)
    request = ChatRequest(line=1, format="openai-chat", messages=MESSAGES, model="sql")
    query = build_query(request, get_renderer("qwen3", "qwen").render(request), adapters)
    contents = [tuple(query.tokens[i : i + 16]) for i in range(0, len(query.tokens) // 16 * 16, 16)]
    assert block_hashes(query) == chain_hashes(contents, (("lora_name", "sql"),))


def test_two_adapters_and_the_base_share_nothing():
    """40 tokens, blocks of 16: a repeat in the same namespace hits 2 blocks (32 tokens)."""
    cache = VllmCache(block_size=16)
    tokens = list(range(40))
    spaces = [(), (("lora_name", "sql"),), (("lora_name", "chat"),)]
    first = [cache.process(CacheQuery(tokens=tokens, extra_keys=k)).cached_tokens for k in spaces]
    again = [cache.process(CacheQuery(tokens=tokens, extra_keys=k)).cached_tokens for k in spaces]
    assert first == [0, 0, 0]
    assert again == [32, 32, 32]


def test_audit_with_lora_modules(tmp_path):
    log = tmp_path / "log.jsonl"
    models = ["base", "sql", "chat", "sql", "base", "chat"]
    log.write_text(
        "".join(json.dumps({"request": {"model": m, "messages": MESSAGES}}) + "\n" for m in models)
    )
    result = CliRunner().invoke(audit, [str(log), "--format", "json", "--no-what-if", *LORAS])
    assert result.exit_code in (0, 1), result.output
    rows = json.loads(result.output)["requests"]
    prompt = rows[0]["prompt_tokens"]
    repeat = (prompt - 1) // 16 * 16
    assert [r["cached_tokens"] for r in rows] == [0, 0, 0, repeat, repeat, repeat]


@pytest.mark.parametrize("value", ["sql", "=/p", "sql=", '{"path": "/p"}', "{bad"])
def test_bad_lora_module_is_a_usage_error(tmp_path, value):
    log = tmp_path / "log.jsonl"
    log.write_text(json.dumps({"request": {"model": "base", "messages": MESSAGES}}) + "\n")
    result = CliRunner().invoke(audit, [str(log), "--lora-modules", value])
    assert result.exit_code == 2
    assert "--lora-modules" in result.output
