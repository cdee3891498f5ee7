import json
import socket

import pytest
from click.testing import CliRunner

from prefixlint.cli.replay import replay

SYSTEM = (
    "You are the airline's booking assistant. Follow the policy: verify the user's identity, "
    "never change a reservation without explicit confirmation, and answer in one paragraph."
)
QUESTIONS = [
    "I need to change my flight to Boston.",
    "My booking code is ZX81QP.",
    "Move it to Friday morning, please.",
    "Yes, I confirm the change.",
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_reservation",
            "description": "Look a reservation up by its code.",
            "parameters": {
                "type": "object",
                "properties": {"code": {"type": "string"}},
                "required": ["code"],
            },
        },
    }
]


def conversation_log(path, users=("Ada", "Grace")):
    """Two conversations, interleaved, each request resending the whole history."""
    histories = {user: [{"role": "system", "content": SYSTEM}] for user in users}
    lines = []
    for question in QUESTIONS:
        for user in users:
            history = histories[user]
            history.append({"role": "user", "content": f"{user} here. {question}"})
            body = {"model": "gpt-4o", "messages": list(history), "tools": TOOLS}
            lines.append(json.dumps({"session_id": user, "request": body}))
            history.append({"role": "assistant", "content": f"Noted, {user}."})
    lines.append("{broken json")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def log(tmp_path):
    return conversation_log(tmp_path / "chat.jsonl")


def run(*args):
    result = CliRunner().invoke(replay, [str(a) for a in args])
    return result.exit_code, result.output


def test_sim_backend(log):
    code, output = run(log, "--format", "json")
    report = json.loads(output)
    assert code == 0
    assert report["backend"] == "sim"
    assert report["summary"]["requests"] == 8
    assert report["skipped"][0]["line"] == 9
    cached = [row["cached_tokens"] for row in report["requests"]]
    assert cached[:2] == [0, 0] or cached[1] > 0
    assert all(later > 0 for later in cached[2:])


@pytest.mark.parametrize(
    ("args", "settings"),
    [
        (["--cache", "sglang", "--page-size", 16], {"cache": "sglang", "page_size": 16}),
        (["--cache", "llamacpp", "--block-size", 32], {"cache": "llamacpp"}),
        (
            ["--block-size", 32, "--capacity-tokens", 2048],
            {"cache": "vllm", "block_size": 32, "capacity_tokens": 2048},
        ),
    ],
)
def test_sim_backend_cache_models(log, args, settings):
    code, output = run(log, *args, "--format", "json")
    report = json.loads(output)
    assert code == 0
    assert report["settings"] == {"logs": [str(log)], **settings}
    assert report["summary"]["cached_tokens"] > 0


def test_sim_terminal_report(log):
    code, output = run(log, "--capacity-tokens", 4096)
    assert code == 0
    assert "hit_rate" in output and "skipped" in output


@pytest.fixture
def tiny_torch():
    """torch and transformers, on one CPU thread (fastest for the tiny model)."""
    torch = pytest.importorskip(
        "torch", reason="the torch replay needs torch (make torch, or pip install torch)"
    )
    pytest.importorskip("transformers")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.parametrize("kv_memory", ["4MiB", "160KiB"])
def test_torch_backend_matches_simulator(log, tiny_torch, tmp_path, kv_memory):
    out = tmp_path / "report.json"
    code, output = run(
        log, "--backend", "torch", "--model", "tiny", "--device", "cpu",
        "--kv-memory", kv_memory, "--format", "json", "--output", out,
    )  # fmt: skip
    assert code == 0, output
    report = json.loads(out.read_text())
    assert report["checks"] == {"logits_match_full_prefill": True, "reuse_matches_sim": True}
    rows = report["requests"]
    assert [r["cached_tokens"] for r in rows] == [r["sim_cached_tokens"] for r in rows]
    assert report["summary"]["cached_tokens"] > 0
    assert report["settings"]["kv_pool_bytes"] <= 4 * 2**20
    for row in rows:
        assert row["ttft_ms"] > 0 and row["baseline_ttft_ms"] > 0
        assert row["max_abs_logit_diff"] < 1e-3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--backend", "server"], "--backend server needs --url"),
        (["--url", "http://127.0.0.1:9"], "--url is only used by --backend server"),
        (["--backend", "torch", "--model", "nope", "--device", "cpu"], "nope: not a preset"),
        (["--log-format", "yaml"], "unknown log format 'yaml'"),
        (["--cache", "nope"], "unknown cache model 'nope'"),
        (["--backend", "torch", "--capacity-tokens", "64"], "sized by --kv-memory"),
    ],
)
def test_usage_errors_exit_2_with_one_line(log, args, message):
    code, output = run(log, *args)
    assert code == 2
    assert output.count("\n") == 1
    assert message in output


def test_missing_log_exits_2(tmp_path):
    code, output = run(tmp_path / "absent.jsonl")
    assert code == 2
    assert "absent.jsonl" in output and output.count("\n") == 1


@pytest.fixture
def tiny_server(tiny_torch):
    """The tiny model behind an OpenAI-compatible endpoint on loopback, with 40 KV blocks."""
    from prefixlint.replay.block_table import VllmBlockTable
    from prefixlint.replay.kv_pool import DeviceBlockPool
    from prefixlint.replay.models import import_torch, load_model
    from prefixlint.replay.tiny_server import TinyEngine, serve
    from prefixlint.replay.torch_backend import TorchReplayer

    torch, transformers = import_torch()
    tiny = load_model("tiny", device="cpu")
    blocks = 40
    pool = DeviceBlockPool(torch, tiny.geometry, blocks, 16, tiny.device, tiny.dtype)
    replayer = TorchReplayer(torch, transformers, tiny, pool, VllmBlockTable(16, blocks))
    server = serve(TinyEngine(replayer, "tiny", "qwen3", "qwen"))
    yield f"http://127.0.0.1:{server.server_address[1]}", blocks * 16
    server.shutdown()
    server.server_close()


def test_server_backend_agrees_with_simulator(log, tiny_server):
    url, capacity = tiny_server
    code, output = run(
        log, "--backend", "server", "--url", url, "--capacity-tokens", capacity, "--format", "json"
    )
    report = json.loads(output)
    assert code == 0, output
    assert report["settings"]["model"] == "tiny"
    assert all(report["checks"].values())
    rows = report["requests"]
    assert [r["cached_tokens"] for r in rows] == [r["sim_cached_tokens"] for r in rows]
    summary = report["summary"]
    assert summary["agreement"] == 1.0
    assert 0 < summary["cached_tokens"] < summary["prompt_tokens"]
    assert summary["metrics_prefix_cache_hits"] == summary["cached_tokens"]
    assert summary["metrics_prefix_cache_queries"] == summary["prompt_tokens"]


def test_server_backend_with_less_capacity_disagrees(log, tiny_server):
    url, _ = tiny_server
    code, output = run(
        log, "--backend", "server", "--url", url, "--capacity-tokens", 18 * 16,
        "--format", "json",
    )  # fmt: skip
    assert code == 1
    assert json.loads(output)["checks"]["agrees_with_sim"] is False


def test_server_backend_concurrent_requests(log, tiny_server):
    url, _ = tiny_server
    code, output = run(
        log, "--backend", "server", "--url", url, "--concurrency", 3, "--format", "json"
    )
    report = json.loads(output)
    assert code in (0, 1)
    assert report["checks"]["every_request_reported"]
    assert report["summary"]["metrics_prefix_cache_hits"] == report["summary"]["cached_tokens"]


def test_unreachable_server_exits_2(log):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    code, output = run(log, "--backend", "server", "--url", url, "--retries", 0)
    assert code == 2
    assert output.startswith(f"prefixlint replay: cannot reach {url}")
    assert output.count("\n") == 1


def test_reset_cache_makes_a_warm_server_comparable(log, tiny_server):
    url, capacity = tiny_server
    args = (log, "--backend", "server", "--url", url, "--capacity-tokens", capacity)
    assert run(*args)[0] == 0
    code, output = run(*args, "--format", "json")
    assert code == 1
    assert json.loads(output)["requests"][0]["cached_tokens"] > 0
    code, output = run(*args, "--reset-cache", "--format", "json")
    assert code == 0
    assert json.loads(output)["settings"]["cache_reset"] == "/reset_prefix_cache"
