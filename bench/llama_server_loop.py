"""Replay fixture logs on a real llama-server and check the ``llamacpp`` cache model against it.

Writes the tiny Qwen3 GGUF (``bench/tiny_qwen3_gguf.py``), then for each configuration starts
``llama-server`` on 127.0.0.1 with that model, runs ``prefixlint replay --backend server
--cache llamacpp`` with the matching model settings, and stops the server:

- ``defaults``: the server's defaults (4 slots, unified KV, 8 GiB prompt cache);
- ``cache-ram-0``: ``--cache-ram 0`` (no prompt cache);
- ``np2-concurrency2``: ``-np 2`` and two requests in flight (``--concurrency 2``);
- ``cache-reuse-64``: ``--cache-reuse 64`` (chunks of 64 tokens or more shifted into place).

Each replay renders as llama-server does (``--engine llamacpp``); ``--only`` also takes
``defaults-transformers``, which renders as ``transformers`` does (the replay sends
``chat_template_kwargs: {"enable_thinking": false}``): requests without tool calls must match
the server's prompt tokens, the others differ where the server parses arguments and rebuilds
tools; and ``np2-concurrency2-no-slots``, two in flight on a server started with
``--no-slots``, where the replay cannot see launches and falls back to sends 25 ms apart.

Each replay writes ``RESULTS/NAME.json``; ``RESULTS/summary.md`` tabulates requests, reported
counts, agreement and prompt-token matches; ``RESULTS/NAME.server.log`` is the server's log.
Exit status 0 when every configuration agrees on every request.

    python bench/llama_server_loop.py --server PATH/llama-server [--gguf-py PATH] [RESULTS]

``--gguf-py`` defaults to the ``gguf-py`` folder of the source tree the server was built in
(``bench/build_llama_server.sh`` layout: ``DIR/build/bin/llama-server``, ``DIR/src``).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
WRITER = REPO / "bench" / "tiny_qwen3_gguf.py"
LOGS = ("fixtures/logs/tau_openai_clean.jsonl", "fixtures/logs/tau_openai_breakers.jsonl")


@dataclass(frozen=True)
class Config:
    name: str
    server_args: tuple[str, ...]
    replay_args: tuple[str, ...]


CONFIGS = (
    Config("defaults", (), ("--engine", "llamacpp")),
    Config("cache-ram-0", ("--cache-ram", "0"), ("--engine", "llamacpp", "--cache-ram", "0")),
    Config(
        "np2-concurrency2",
        ("-np", "2"),
        ("--engine", "llamacpp", "--parallel", "2", "--concurrency", "2"),
    ),
    Config(
        "cache-reuse-64",
        ("--cache-reuse", "64"),
        ("--engine", "llamacpp", "--cache-reuse", "64"),
    ),
)
EXTRA = (
    Config("defaults-transformers", (), ("--engine", "transformers", "--tokenizer", "qwen-raw")),
    Config(
        "np2-concurrency2-no-slots",
        ("-np", "2", "--no-slots"),
        ("--engine", "llamacpp", "--parallel", "2", "--concurrency", "2"),
    ),
)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_ready(url: str, server: subprocess.Popen, seconds: float) -> None:
    """Wait until ``/health`` answers 200; SystemExit if the server dies or takes too long."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise SystemExit(f"llama-server exited with {server.returncode} before it was ready")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"llama-server not ready after {seconds:g} s")


def run_config(config: Config, args: argparse.Namespace, model: Path, results: Path) -> dict:
    """Serve ``model`` with ``config``, replay the logs on it, return the report."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (results / f"{config.name}.server.log").open("w")
    command = [
        *(["nice", "-n", str(args.nice)] if args.nice else []),
        str(args.server),
        "-m",
        str(model),
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--threads",
        str(args.threads),
        *config.server_args,
    ]
    server = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(url, server, args.start_timeout)
        props = httpx.get(f"{url}/props", timeout=10).json()
        output = results / f"{config.name}.json"
        replay = [
            sys.executable,
            "-m",
            "prefixlint",
            "replay",
            *args.logs,
            "--backend",
            "server",
            "--cache",
            "llamacpp",
            "--url",
            url,
            "--timeout",
            str(args.request_timeout),
            "--no-metrics",
            "--format",
            "json",
            "--output",
            str(output),
            *(["--limit", str(args.limit)] if args.limit else []),
            *config.replay_args,
        ]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        done = subprocess.run(replay, cwd=REPO, env=env, capture_output=True, text=True)
        if not output.exists():
            raise SystemExit(f"{config.name}: replay failed ({done.returncode}): {done.stderr}")
        report = json.loads(output.read_text())
        report["server_props"] = {
            key: props.get(key) for key in ("total_slots", "build_info", "model_path")
        }
        report["server_props"]["n_ctx"] = props.get("default_generation_settings", {}).get("n_ctx")
        output.write_text(json.dumps(report, indent=2))
        return report
    finally:
        server.terminate()
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def summary_row(name: str, report: dict) -> dict:
    rows = report["requests"]
    return {
        "configuration": name,
        "requests": len(rows),
        "reported": sum(r["cached_tokens"] is not None for r in rows),
        "agreeing": sum(bool(r["agrees"]) for r in rows),
        "prompt_tokens_match": sum(r["server_prompt_tokens"] == r["prompt_tokens"] for r in rows),
        "server_cached_tokens": sum(r["cached_tokens"] or 0 for r in rows),
        "model_cached_tokens": sum(r["sim_cached_tokens"] for r in rows),
        "errors": sum(r["error"] is not None for r in rows),
    }


def markdown(table: list[dict], commit: str) -> str:
    heads = list(table[0])
    lines = [f"llama.cpp {commit}", "", "| " + " | ".join(heads) + " |"]
    lines.append("|" + "---|" * len(heads))
    lines += ["| " + " | ".join(str(row[h]) for h in heads) + " |" for row in table]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="?", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--server", type=Path, required=True, help="the llama-server binary")
    parser.add_argument("--gguf-py", type=Path, help="llama.cpp's gguf-py folder")
    parser.add_argument("--logs", nargs="+", default=[str(REPO / p) for p in LOGS])
    parser.add_argument("--limit", type=int, help="replay only the first N requests")
    parser.add_argument("--only", nargs="+", help="run only these configurations")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--nice", type=int, default=19, help="niceness of the server (0: none)")
    parser.add_argument("--start-timeout", type=float, default=120.0)
    parser.add_argument("--request-timeout", type=float, default=300.0)
    args = parser.parse_args(argv)
    source = args.server.resolve().parent.parent.parent / "src"
    gguf_py = args.gguf_py or source / "gguf-py"
    commit_file = source / "COMMIT"
    commit = commit_file.read_text().strip() if commit_file.exists() else "unknown"
    results = args.results
    results.mkdir(parents=True, exist_ok=True)
    model = results / "tiny-qwen3.gguf"
    if not model.exists():
        subprocess.run(
            [sys.executable, str(WRITER), str(model), "--gguf-py", str(gguf_py)],
            check=True,
        )
    table = []
    chosen = [c for c in CONFIGS + EXTRA if c.name in args.only] if args.only else CONFIGS
    for config in chosen:
        started = time.monotonic()
        report = run_config(config, args, model, results)
        row = summary_row(config.name, report)
        row["seconds"] = round(time.monotonic() - started)
        table.append(row)
        print(json.dumps(row), flush=True)
    text = markdown(table, commit)
    (results / "summary.md").write_text(text)
    print(text)
    agreed = all(row["agreeing"] == row["requests"] == row["prompt_tokens_match"] for row in table)
    return 0 if table and agreed else 1


if __name__ == "__main__":
    sys.exit(main())
