"""audit --sweep, --kv-memory and --replicas from the command line."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixlint.cli.audit import audit

LOG = str(Path(__file__).resolve().parent.parent / "fixtures" / "logs" / "tau_openai_clean.jsonl")
# The vllm model on LOG (default block size 16, unlimited capacity).
PROMPT, CACHED = 227_381, 209_840
POLICIES = {"lru", "lfu", "fifo", "priority", "belady"}


def run(*args):
    return CliRunner().invoke(audit, [LOG, "--no-what-if", *map(str, args)])


def run_json(*args):
    result = run("--format", "json", *args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_sweep_ends_at_the_unlimited_ceiling(tmp_path):
    csv_path = tmp_path / "sweep.csv"
    data = run_json("--sweep-csv", csv_path, "--model-geometry", "Qwen3-8B")
    points, summary = data["sweep"], data["sweep_summary"]
    capacities = sorted({p["capacity_tokens"] for p in points})
    assert {p["policy"] for p in points} == POLICIES
    assert len(points) == 5 * len(capacities)
    assert capacities[-1] == summary["working_set_tokens"]
    assert summary["ceiling_hit_rate"] == round(CACHED / PROMPT, 6)
    top = [p for p in points if p["capacity_tokens"] == capacities[-1]]
    assert {(p["hit_rate"], p["prefill_tokens"]) for p in top} == {
        (round(CACHED / PROMPT, 6), PROMPT - CACHED)
    }
    assert all(p["capacity_bytes"] == p["capacity_tokens"] * 147_456 for p in points)
    assert set(summary["knee_capacity_tokens"]) == POLICIES
    rows = csv_path.read_text().splitlines()
    assert rows[0] == "policy,capacity_tokens,capacity_bytes,hit_rate,prefill_tokens"
    assert len(rows) == 1 + len(points)


def test_sweep_capacities_in_tokens_and_bytes():
    data = run_json("--sweep-capacities", "20k,40k")
    assert sorted({p["capacity_tokens"] for p in data["sweep"]}) == [20_000, 40_000]
    # 1 GiB / 131,072 bytes per token (Llama-3.1-8B) = 8,192 tokens
    data = run_json("--sweep-capacities", "1GiB,8GiB", "--model-geometry", "Llama-3.1-8B")
    assert sorted({p["capacity_tokens"] for p in data["sweep"]}) == [8192, 65_536]


def test_kv_memory_sets_the_engine_capacity():
    # 1 GiB / 147,456 bytes per token (Qwen3-8B) = 7,281 tokens: evictions cost hits
    data = run_json("--model-geometry", "Qwen3-8B", "--kv-memory", "1GiB")
    assert data["assumptions"]["vllm"]["capacity"].startswith("7,281 tokens")
    assert data["summary"]["cached_tokens"] < CACHED


def test_one_replica_is_the_vllm_model():
    for router in ("round-robin", "session", "prefix-aware"):
        data = run_json("--replicas", 1, "--router", router, "--capacity-tokens", 20_000)
        routing = data["routing"]
        assert routing["replicas"][0]["prompt_tokens"] == PROMPT
        assert routing["replicas"][0]["cached_tokens"] == data["summary"]["cached_tokens"]


def test_replicas_share_the_requests():
    data = run_json("--replicas", 3, "--router", "session", "--html", "/dev/null")
    routing = data["routing"]
    assert sum(r["prompt_tokens"] for r in routing["replicas"]) == PROMPT
    assert sum(r["requests"] for r in routing["replicas"]) == data["summary"]["requests"]
    assert routing["imbalance"] >= 1.0
    terminal = run("--replicas", 3, "--sweep-capacities", "40k")
    assert terminal.exit_code == 0, terminal.output
    assert "Routing what-if" in terminal.output and "Capacity sweep" in terminal.output


def test_html_has_the_sweep_plot_and_routing_table(tmp_path):
    html = tmp_path / "report.html"
    result = run("--sweep-capacities", "20k,40k", "--replicas", 2, "--html", html)
    assert result.exit_code == 0, result.output
    text = html.read_text()
    assert "<h2>Capacity sweep</h2><svg" in text and text.count("<circle") == 5
    assert "<h2>Routing what-if</h2>" in text


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--kv-memory", "8GiB"], "--kv-memory needs --model-geometry"),
        (
            ["--model-geometry", "Qwen3-8B", "--kv-memory", "8GiB", "--capacity-tokens", "9"],
            "not both",
        ),
        (["--model-geometry", "Qwen9-1T", "--sweep"], "not a known model"),
        (["--model-geometry", "Qwen3-8B", "--kv-memory", "lots"], "memory size"),
        (["--sweep-capacities", "1GiB"], "give --model-geometry"),
        (["--sweep-capacities", "16"], "below the largest request"),
    ],
)
def test_bad_planning_options(args, message):
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_malformed_config_json(tmp_path):
    config = tmp_path / "config.json"
    config.write_text('{"num_hidden_layers": 2}')
    result = run("--model-geometry", config, "--sweep")
    assert result.exit_code == 2
    assert "needs head_dim" in result.stderr
