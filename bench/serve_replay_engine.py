"""Serve a model with the torch replay backend's block pool as an OpenAI-compatible engine.

    python3 bench/serve_replay_engine.py --model qwen3-0.6b --kv-memory 2GiB \
        --port 8321 --capacity-file /tmp/capacity

Writes the pool's capacity in tokens to --capacity-file once it listens, so that a client
replay can simulate the same cache (``prefixlint replay --backend server --capacity-tokens``).
"""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

from prefixlint.replay.block_table import VllmBlockTable
from prefixlint.replay.kv_pool import DeviceBlockPool, blocks_for_memory, parse_bytes
from prefixlint.replay.models import import_torch, load_model
from prefixlint.replay.tiny_server import TinyEngine, serve
from prefixlint.replay.torch_backend import TorchReplayer
from prefixlint.tokenizers import get_tokenizer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen3-0.6b")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="auto")
    parser.add_argument("--kv-memory", default="2GiB")
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--port", type=int, default=8321)
    parser.add_argument("--capacity-file", required=True)
    args = parser.parse_args()
    torch, transformers = import_torch()
    loaded = load_model(
        args.model,
        device=args.device,
        dtype=args.dtype,
        vocab_needed=get_tokenizer("qwen").vocab_size,
    )
    blocks = blocks_for_memory(parse_bytes(args.kv_memory), loaded.geometry, args.block_size)
    pool = DeviceBlockPool(
        torch, loaded.geometry, blocks, args.block_size, loaded.device, loaded.dtype
    )
    table = VllmBlockTable(args.block_size, blocks)
    replayer = TorchReplayer(torch, transformers, loaded, pool, table)
    replayer.warm_up(list(range(64)))
    serve(TinyEngine(replayer, args.model, "qwen3", "qwen"), port=args.port)
    Path(args.capacity_file).write_text(str(table.capacity_tokens))
    print(f"serving {args.model} on port {args.port}, {table.capacity_tokens} tokens of KV")
    threading.Event().wait()  # until the process is stopped


if __name__ == "__main__":
    main()
