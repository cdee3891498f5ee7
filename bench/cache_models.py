"""Replay a Mooncake trace through prefixlint's cache models and kvcache-simulator.

    .venv/bin/python bench/cache_models.py [TRACE] [--capacities 4000,16000] [--limit N]
    .venv/bin/python bench/cache_models.py TRACE --repeat 5
    .venv/bin/python bench/cache_models.py --synthetic 10000

Capacities are in trace blocks (512 tokens). For each capacity it prints, side by side, the
CPU time and the hit rate (cached prompt tokens / prompt tokens) of kvcache-simulator's
LRU and optimal policies, each on its C++ core and on its Python backend, and of
prefixlint's ``vllm`` (block 512 and the default 16), ``sglang`` (page 1), ``belady``
(block 512) and, once, the unlimited ceilings. Rates are measured over the requests after
kvcache-simulator's warm-up (the first half by default), with the cache warmed by all
earlier requests, as kvcache-simulator measures them.

Each timed run starts with a garbage collection, so that none pays for an earlier run's
objects. The C++ core runs as a child process (compiled on first use, before timing); its time is
that process's CPU time plus the parent's for writing its binary input, as its Python
wrapper does for every run. After each capacity, a line gives the ``vllm`` times as
multiples of the C++ LRU time. ``--repeat N`` then times those three N more times, each
round in one go, and prints each round's multiples, their spread and the worst round against
the targets (``vllm@512`` at most the C++ LRU time, ``vllm@16`` at most twice it; the
machine may be shared: the multiples of one round are measured side by side).

Why the rates differ (all on the same trace and capacity):

* kvcache-simulator counts a request's last, partial block as hit when its id matches and
  serves a repeated prompt completely; vLLM caches only full blocks and recomputes at least
  the last token (a repeat of N tokens hits ``floor((N-1)/B)*B``); SGLang also keeps the
  last token out. So at infinite capacity the engines sit below its ceiling.
* Under pressure the engines that do not keep partial blocks (vLLM at the trace's block
  size) waste no capacity on a request's unique last block, so they beat its LRU slightly;
  SGLang at page size 1 keeps the partial block as it does. Its LRU evicts trie leaves and
  gives up inserting when only the running request's path is left; vLLM evicts freed blocks
  from an LRU queue in which a request's tail goes first and needs room for the whole request
  before it runs; SGLang evicts whole radix nodes.
* Its optimal policy may decline to insert a block needed later than everything cached;
  ``belady`` always caches the running request (as an engine must) and so sits a little
  below it.
* ``--outputs`` also feeds each request's output tokens, which engines keep in their cache
  (here as blocks nothing can hit, as the trace has no ids for them): they take capacity.

``--synthetic N`` instead times every model on N token-id requests of about 10,000 tokens:
conversations of 10 turns under a shared 8,000-token head, each turn appending 200 tokens.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import resource
import sys
import time
from pathlib import Path

from kvcache_sim.cpp_backend import ensure_cpp_simulator, run_cpp_sweep
from kvcache_sim.plan import build_execution_plan
from kvcache_sim.policies import simulate_ceiling, simulate_policy
from kvcache_sim.trace import parse_trace_lines

from prefixlint.cache import CacheQuery, make_cache_model
from prefixlint.cache.belady import BeladyCache

DEFAULT_TRACE = (
    Path(__file__).resolve().parent.parent.parent
    / "shared/corpora/traces/kvcache-ai_Mooncake/conversation_trace.jsonl"
)
TRACE_BLOCK = 512


def read_trace(path: Path, limit: int | None) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        lines = [line for line in handle if line.strip()]
    return lines[:limit] if limit else lines


def queries(lines: list[str], with_outputs: bool) -> list[CacheQuery]:
    records = [json.loads(line) for line in lines]
    return [
        CacheQuery(
            block_hashes=r["hash_ids"],
            block_tokens=TRACE_BLOCK,
            input_length=r["input_length"],
            output_tokens=r["output_length"] if with_outputs else 0,
            timestamp=r["timestamp"] / 1000,
        )
        for r in records
    ]


def measured_rate(results, start: int) -> float:
    window = results[start:]
    total = sum(r.prompt_tokens for r in window)
    return sum(r.cached_tokens for r in window) / total if total else 0.0


def replay(name: str, params: dict, trace: list[CacheQuery], start: int) -> tuple[float, float]:
    gc.collect()  # the garbage of earlier runs is theirs
    began = time.process_time()
    if name == "belady":
        results = BeladyCache(**params).run(trace)
    else:
        model = make_cache_model(name, **params)
        results = [model.process(query) for query in trace]
    return time.process_time() - began, measured_rate(results, start)


def synthetic(count: int) -> list[CacheQuery]:
    """Conversations under one shared head, each turn extending the previous prompt."""
    rng = random.Random(0)
    head = [rng.randrange(150_000) for _ in range(8_000)]
    trace, prompt = [], head
    for index in range(count):
        if index % 10 == 0:
            prompt = head + [rng.randrange(150_000) for _ in range(200)]
        prompt = prompt + [rng.randrange(150_000) for _ in range(200)]
        trace.append(
            CacheQuery(
                tokens=prompt,
                output_tokens=[rng.randrange(150_000) for _ in range(50)],
                timestamp=index * 0.1,
                breakpoints=[(len(head), 300), (len(prompt), 300)],
                model="gpt-4o",
            )
        )
    return trace


def time_models(count: int) -> None:
    trace = synthetic(count)
    tokens = sum(query.prompt_tokens for query in trace)
    print(f"{count} requests, {tokens / count:,.0f} prompt tokens on average")
    print(f"{'model':<34} {'cpu s':>8}  {'hit rate':>8}")
    for name in ("vllm", "sglang", "llamacpp", "unlimited", "openai", "anthropic", "gemini"):
        params = {"capacity_tokens": 2_000_000} if name in ("vllm", "sglang") else {}
        seconds, rate = replay(name, params, trace, 0)
        print(f"{label(name, params):<34} {seconds:8.2f}  {rate:8.2%}")


def simulator(plan, policy: str, capacity: int | None) -> tuple[float, float, str]:
    """kvcache-simulator's Python backend."""
    gc.collect()
    began = time.process_time()
    result = simulate_ceiling(plan) if capacity is None else simulate_policy(plan, policy, capacity)
    return time.process_time() - began, result.hitRate, result.measurementMode


def cpu_with_children() -> float:
    """CPU seconds of this process and of its finished children."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def cpp_simulator(data, warmup: int, policy: str, capacity: int) -> tuple[float, float, str]:
    """kvcache-simulator's C++ core on one policy and capacity."""
    gc.collect()
    began = cpu_with_children()
    result = run_cpp_sweep(data, capacities=[capacity], policies=[policy], warmup_requests=warmup)
    point = result.results[(policy, capacity)]
    return cpu_with_children() - began, point.hitRate, point.measurementMode


ENGINES = (
    ("vllm", {"block_size": TRACE_BLOCK}),
    ("vllm", {"block_size": 16}),
    ("sglang", {"page_size": 1}),
)
VLLM_SIZES = (TRACE_BLOCK, 16)
TARGETS = (1.0, 2.0)  # the most each of VLLM_SIZES may take, as a multiple of the C++ LRU


def versus_cpp_lru(data, warmup: int, trace: list[CacheQuery], capacity: int) -> list[float]:
    """One round: C++ LRU, then ``vllm`` at each block size; the latter as multiples."""
    base = cpp_simulator(data, warmup, "lru", capacity)[0]
    tokens = capacity * TRACE_BLOCK
    return [
        replay("vllm", {"block_size": size, "capacity_tokens": tokens}, trace, warmup)[0] / base
        for size in VLLM_SIZES
    ]


def show_multiples(capacity: int, multiples: list[float], where: str = "") -> None:
    shown = ", ".join(f"vllm@{s} {m:.2f}x" for s, m in zip(VLLM_SIZES, multiples, strict=True))
    print(f"{capacity:>10}  {where}of C++ LRU time: {shown}")


def show_rounds(capacity: int, rounds: list[list[float]]) -> None:
    """Each round's multiples, their spread, and the worst round against the targets."""
    for number, multiples in enumerate(rounds, 1):
        show_multiples(capacity, multiples, f"round {number} ")
    spread, worst = [], []
    for size, target, column in zip(VLLM_SIZES, TARGETS, zip(*rounds, strict=True), strict=True):
        spread.append(f"vllm@{size} {min(column):.2f}-{max(column):.2f}x")
        top = max(column)
        verdict = "met" if top <= target else "missed"
        worst.append(
            f"vllm@{size} {top:.2f}x in round {column.index(top) + 1} "
            f"(target {target:g}x: {verdict})"
        )
    print(f"{capacity:>10}  spread over {len(rounds)} rounds: {', '.join(spread)}")
    print(f"{capacity:>10}  worst round: {', '.join(worst)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", nargs="?", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--capacities", default="4000,16000", help="in 512-token blocks")
    parser.add_argument("--limit", type=int, default=None, help="first N requests only")
    parser.add_argument("--warmup", type=float, default=0.5)
    parser.add_argument("--outputs", action="store_true", help="also feed output lengths")
    parser.add_argument("--synthetic", type=int, metavar="N", help="time N token requests")
    parser.add_argument("--repeat", type=int, default=0, help="rounds of C++ LRU vs vllm")
    args = parser.parse_args(argv)
    if args.synthetic:
        time_models(args.synthetic)
        return 0
    if not args.trace.is_file():
        print(f"{args.trace}: no such trace file", file=sys.stderr)
        return 2
    lines = read_trace(args.trace, args.limit)
    data = parse_trace_lines(lines, block_size=TRACE_BLOCK)
    plan = build_execution_plan(data, warmup_fraction=args.warmup)
    ensure_cpp_simulator()  # compiles it once, untimed
    trace = queries(lines, args.outputs)
    start = plan.warmup_requests
    print(
        f"{len(trace)} requests, {plan.unique_blocks} distinct prefix blocks, "
        f"measured from request {start}"
    )
    print(f"{'capacity':>10}  {'model':<34} {'cpu s':>8}  {'hit rate':>8}")

    rows = [("kvcache-simulator Python ceiling", *simulator(plan, "ceiling", None)[:2])]
    for name, params in (("unlimited", {}), *ENGINES):
        rows.append((label(name, params), *replay(name, params, trace, start)))
    show("inf", rows)

    capacities = [int(value) for value in args.capacities.split(",")]
    for capacity in capacities:
        tokens = capacity * TRACE_BLOCK
        rows = []
        for backend, run in (("C++", cpp_simulator), ("Python", None)):
            for policy in ("lru", "optimal"):
                if run is None:
                    seconds, rate, mode = simulator(plan, policy, capacity)
                else:
                    seconds, rate, mode = run(data, start, policy, capacity)
                note = "" if mode == "fixed_window" else f" ({mode})"
                rows.append((f"kvcache-simulator {backend} {policy}{note}", seconds, rate))
        for name, params in (*ENGINES, ("belady", {"block_size": TRACE_BLOCK})):
            params = {**params, "capacity_tokens": tokens}
            rows.append((label(name, params), *replay(name, params, trace, start)))
        show(str(capacity), rows)
        show_multiples(capacity, [rows[4 + i][1] / rows[0][1] for i in range(len(VLLM_SIZES))])

    for capacity in capacities if args.repeat else ():
        show_rounds(
            capacity, [versus_cpp_lru(data, start, trace, capacity) for _ in range(args.repeat)]
        )
    return 0


def label(name: str, params: dict) -> str:
    shown = {k: v for k, v in params.items() if k != "capacity_tokens"}
    return name + "".join(f" {k}={v}" for k, v in shown.items())


def show(capacity: str, rows: list[tuple[str, float, float]]) -> None:
    for name, seconds, rate in rows:
        print(f"{capacity:>10}  {name:<34} {seconds:8.2f}  {rate:8.2%}")


if __name__ == "__main__":
    sys.exit(main())
