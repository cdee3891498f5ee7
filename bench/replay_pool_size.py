"""Print a KV pool size (bytes) that holds FACTOR times the longest prompt of LOGS.

Used by bench/gpu_replay.sh to replay with a pool small enough to evict:

    python3 bench/replay_pool_size.py --model qwen3-0.6b --dtype-bytes 2 --factor 3 LOG...
"""

from __future__ import annotations

import argparse
import math

from prefixlint.replay.inputs import load_prompts
from prefixlint.replay.models import read_config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+")
    parser.add_argument("--model", default="qwen3-0.6b")
    parser.add_argument("--dtype-bytes", type=int, default=2)
    parser.add_argument("--factor", type=float, default=3.0)
    parser.add_argument("--block-size", type=int, default=16)
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    longest = max(len(p.tokens) for p in load_prompts(args.logs, limit=args.limit).prompts)
    _, config = read_config(args.model)
    heads = config["num_attention_heads"]
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    kv_heads = config.get("num_key_value_heads") or heads
    per_token = 2 * config["num_hidden_layers"] * kv_heads * head_dim * args.dtype_bytes
    blocks = math.ceil(args.factor * longest / args.block_size)
    print(blocks * args.block_size * per_token)


if __name__ == "__main__":
    main()
