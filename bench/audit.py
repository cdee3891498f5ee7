"""Benchmark ``prefixlint audit`` on a realistic request log built from tau-bench.

    .venv/bin/python bench/audit.py [--replicas 5] [--variants plain,stamped,anthropic]
        [--scale 10] [--skip-mooncake] [--jobs 2] [--ray]

The log: the 200 GPT-4o airline conversations of tau-bench, each replayed turn by turn (one
request whenever the agent answers), with tau-bench's long shared system prompt and an airline
tool list derived from the logged tool calls. Each conversation is replayed ``--replicas``
times as separate sessions (a ticket number in the first user message makes every replica its
own conversation), sessions interleaved by time: 5 replicas give 12,270 requests. Replica
``r`` runs on day ``r`` and its system prompt says so ("The current time is 2024-05-15 ..."
moves one day per replica), a common real-world cache breaker that the audit attributes
(PFX101) and the what-if pass re-simulates. The ``stamped`` variant also writes the request's
own time into every system prompt, after its first line ("Current date and time: 2025-03-03
09:00:18 UTC"): the log people audit because their cache is broken, where no two requests
share a system prompt. The ``anthropic`` variant is the stamped log as Anthropic Messages
requests (``fixtures/logs/generate.py``'s conversion: system and tools apart, tool calls as
``tool_use`` and ``tool_result`` blocks, ``cache_control`` on the last tool, the system
block and the last message block), rendered tools first.

Measured in one run, each in a fresh process (peak RSS is per process), in CPU seconds of
that process (``time.process_time``: the work is single-threaded, and other load on a shared
machine disturbs the ratios far less than it does wall time):

* floor: the log's distinct text (system prompt, tool list, each distinct message) encoded
  once with the same tokenizer (tiktoken-backed Qwen BPE);
* read: every line of the log parsed with ``json.loads``, the least any reader of the log
  pays (each request repeats its conversation's history, so this grows with the log's size,
  the encoding floor only with its distinct text);
* naive: every request rendered and its whole prompt encoded from scratch;
* audit: ``run_audit`` with the vllm model, without and with the what-if re-simulation;
* memory: the audit (no what-if) on ``--memory-replicas`` replicas and on ``--scale`` times
  as many, to show that memory does not grow with the log beyond one small record per request;
* ``--jobs N``: instead of the above, the audit (vllm, no what-if) with ``-j 1`` and with
  ``-j N`` rendering workers, in wall seconds (the workers' CPU is not this process's);
* ``--ray``: instead of the above, the audit (vllm, no what-if) with the local executor and
  with ``--executor ray`` on a local Ray cluster of every core, in wall seconds (the
  cluster's start apart), checking that both give the same JSON report;
* Mooncake: the conversation trace through vllm and sglang by the audit, and the cache-model
  comparison with kvcache-simulator (``bench/cache_models.py``).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The shared corpora sit beside the checkout (a git worktree: one level further up).
CORPORA = next(
    (p / "shared" / "corpora" / "traces" for p in ROOT.parents if (p / "shared").is_dir()),
    ROOT.parent / "shared" / "corpora" / "traces",
)
TAU = CORPORA / "sierra-research_tau-bench" / "gpt-4o-airline.json"
MOONCAKE = CORPORA / "kvcache-ai_Mooncake" / "conversation_trace.jsonl"
START = 1_741_000_000.0
TURN_SECONDS = 20.0
# The memory run gives vLLM a fixed KV capacity (about what an 80 GB GPU holds for an 8B
# model), as a server has: an unlimited cache model would grow with the distinct text.
MEMORY_RUN_CAPACITY = 500_000

sys.path.insert(0, str(ROOT / "fixtures" / "logs"))
import generate  # noqa: E402  (fixtures/logs/generate.py: the Anthropic request shape)


def airline_tools(conversations: list[dict]) -> list[dict]:
    """One function schema per tool name in the logged calls, with the arguments seen."""
    arguments: dict[str, dict[str, str]] = {}
    for conversation in conversations:
        for message in conversation["traj"]:
            for call in message.get("tool_calls") or ():
                function = call["function"]
                fields = arguments.setdefault(function["name"], {})
                for key, value in json.loads(function["arguments"] or "{}").items():
                    kind = {bool: "boolean", int: "integer", float: "number", list: "array"}
                    fields.setdefault(key, kind.get(type(value), "string"))
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": f"Airline tool {name.replace('_', ' ')}.",
                "parameters": {
                    "type": "object",
                    "properties": {k: {"type": t} for k, t in sorted(fields.items())},
                    "required": sorted(fields),
                },
            },
        }
        for name, fields in sorted(arguments.items())
    ]


def build_log(path: Path, replicas: int, stamped: bool = False, anthropic: bool = False) -> int:
    """Write the interleaved log (``stamped``: the request time in every system prompt;
    ``anthropic``: as Anthropic Messages requests); returns the number of requests."""
    conversations = json.loads(TAU.read_text(encoding="utf-8"))
    tools = airline_tools(conversations)
    entries = []
    for replica in range(replicas):
        for number, conversation in enumerate(conversations):
            session = f"tau-{number}-{replica}"
            start = START + (replica * len(conversations) + number) * 7.0
            messages = [dict(m) for m in conversation["traj"]]
            day = f"2024-05-{15 + replica % 15:02d}"
            messages[0]["content"] = messages[0]["content"].replace("2024-05-15", day)
            if replica:
                first_user = next(i for i, m in enumerate(messages) if m["role"] == "user")
                ticket = f"[ticket {replica:03d}-{number:03d}] "
                messages[first_user]["content"] = ticket + messages[first_user]["content"]
            turn = 0
            for index in range(1, len(messages)):
                if (
                    messages[index]["role"] != "assistant"
                    or messages[index - 1]["role"] == "assistant"
                ):
                    continue
                timestamp = start + turn * TURN_SECONDS
                sent = messages[:index]
                if stamped:
                    sent = [_stamped(sent[0], timestamp), *sent[1:]]
                request = {"model": "gpt-4o", "messages": sent, "tools": tools}
                if anthropic:
                    request = generate.anthropic_body(request)
                entries.append((timestamp, session, request))
                turn += 1
    entries.sort(key=lambda e: e[0])
    with path.open("w", encoding="utf-8") as out:
        for timestamp, session, request in entries:
            envelope = {"timestamp": timestamp, "session_id": session, "request": request}
            out.write(json.dumps(envelope) + "\n")
    return len(entries)


def _stamped(system: dict, timestamp: float) -> dict:
    first, _, rest = system["content"].partition("\n")
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(timestamp))
    return {**system, "content": f"{first}\nCurrent date and time: {stamp} UTC\n{rest}"}


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def worker(mode: str, log: str) -> dict:
    """Run one measurement in this process and return its figures."""
    from prefixlint.auditing import AuditOptions, run_audit
    from prefixlint.chat import Renderer
    from prefixlint.sources.logs import read_log
    from prefixlint.tokenizers import get_tokenizer

    tokenizer = get_tokenizer("qwen")
    tokenizer.encode("warm up")
    if mode == "floor":
        distinct: set[str] = set()
        for request in read_log(log):
            distinct.add(json.dumps(request.tools))
            distinct.add(request.system or "")
            for message in request.messages:
                distinct.add(json.dumps(message, sort_keys=True))
        started = time.process_time()
        tokens = sum(len(tokenizer.encode(text)) for text in distinct)
        return {"seconds": time.process_time() - started, "tokens": tokens, "texts": len(distinct)}
    if mode == "read":
        started = time.process_time()
        with open(log, "rb") as lines:
            requests = sum(1 for line in lines if json.loads(line))
        return {"seconds": time.process_time() - started, "tokens": 0, "requests": requests}
    if mode == "naive":
        renderer = Renderer("qwen3", tokenizer)
        started = time.process_time()
        tokens = requests = 0
        for request in read_log(log):
            tokens += len(tokenizer.encode(renderer.render(request).text))
            requests += 1
        return {"seconds": time.process_time() - started, "tokens": tokens, "requests": requests}
    if mode.startswith("audit-jobs-"):
        # Worker processes: CPU time of this process leaves theirs out, so wall time.
        options = AuditOptions(caches=("vllm",), what_if=False, jobs=int(mode.split("-")[2]))
        started = time.perf_counter()
        report = run_audit([log], options)
        totals = report.totals("vllm")
        return {
            "seconds": time.perf_counter() - started,
            "requests": totals.requests,
            "tokens": totals.prompt_tokens,
            "hit_rate": totals.hit_rate,
        }
    if mode in ("audit-local", "audit-ray"):
        return executor_run(mode, log)
    what_if = mode == "audit-what-if"
    capacity = MEMORY_RUN_CAPACITY if mode == "audit-capacity" else None
    started = time.process_time()
    options = AuditOptions(caches=("vllm",), what_if=what_if, capacity_tokens=capacity)
    report = run_audit([log], options)
    seconds = time.process_time() - started
    totals = report.totals("vllm")
    return {
        "seconds": seconds,
        "requests": totals.requests,
        "tokens": totals.prompt_tokens,
        "hit_rate": totals.hit_rate,
        "causes": {c: e.requests for c, e in report.by_cause("vllm").items()},
        "what_if": {w.fix: round(w.fixed.hit_rate, 4) for w in report.what_if},
    }


def executor_run(mode: str, log: str) -> dict:
    """The audit (vllm, no what-if) on the local executor or on a local Ray cluster: wall
    seconds, and a digest of its JSON report."""
    import hashlib
    import os

    from prefixlint.auditing import AuditOptions, run_audit
    from prefixlint.auditing.report_json import render_json

    options = AuditOptions(caches=("vllm",), what_if=False)
    started = time.perf_counter()
    cluster = 0.0
    if mode == "audit-ray":
        import ray

        from prefixlint.auditing.distributed import run_distributed

        ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False)
        cluster = time.perf_counter() - started
        report = run_distributed([log], options)
    else:
        report = run_audit([log], options)
    seconds = time.perf_counter() - started - cluster
    digest = hashlib.sha256(render_json(report).encode()).hexdigest()
    return {"seconds": seconds, "cluster_start": cluster, "report": digest}


def measure_executors(log: Path) -> None:
    """The audit on the local executor and on a local Ray cluster, in wall seconds: the
    same JSON report, or the bench stops."""
    local = measure("audit-local", log)
    distributed = measure("audit-ray", log)
    if local["report"] != distributed["report"]:
        raise SystemExit("--executor ray changed the report")
    print(
        f"audit, vllm, wall time: local {local['seconds']:.2f} s, ray "
        f"{distributed['seconds']:.2f} s (x{local['seconds'] / distributed['seconds']:.2f}; "
        f"cluster start {distributed['cluster_start']:.2f} s apart), same report"
    )


def measure(mode: str, log: Path) -> dict:
    command = [sys.executable, __file__, "--worker", mode, str(log)]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(output.strip().splitlines()[-1])


def mooncake_audit() -> dict:
    from prefixlint.auditing import AuditOptions, run_audit

    started = time.perf_counter()
    report = run_audit([str(MOONCAKE)], AuditOptions(caches=("vllm", "sglang"), what_if=False))
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "requests": report.totals("vllm").requests,
        "hit_rates": {m: round(report.totals(m).hit_rate, 4) for m in report.cache_models},
    }


def measure_jobs(log: Path, jobs: int) -> None:
    """The audit (vllm, no what-if) in this process and with ``jobs`` rendering workers, in
    wall seconds: the same figures each time, or the bench stops."""
    serial = measure("audit-jobs-1", log)
    parallel = measure(f"audit-jobs-{jobs}", log)
    for key in ("requests", "tokens", "hit_rate"):
        if serial[key] != parallel[key]:
            raise SystemExit(f"--jobs {jobs} changed {key}: {serial[key]} -> {parallel[key]}")
    print(
        f"audit, vllm, wall time: -j 1 {serial['seconds']:.2f} s, -j {jobs} "
        f"{parallel['seconds']:.2f} s (x{serial['seconds'] / parallel['seconds']:.2f})"
    )


def measure_log(log: Path, count: int) -> None:
    """The floor, the reading, the naive rendering and the audit of one log, side by side."""
    floor = measure("floor", log)
    read = measure("read", log)
    naive = measure("naive", log)
    audit = measure("audit", log)
    what_if = measure("audit-what-if", log)
    rows = [("floor (distinct text once)", floor), ("read (json.loads per line)", read)]
    rows += [("naive (full prompt per request)", naive)]
    rows += [("audit, vllm", audit), ("audit, vllm + what-if", what_if)]
    both = floor["seconds"] + read["seconds"]
    for name, figures in rows:
        requests = figures.get("requests", count)
        seconds = figures["seconds"]
        print(
            f"{name:34s} {seconds:7.2f} s CPU {requests / seconds:9,.0f} req/s"
            f"  {figures['tokens'] / seconds / 1e6:6.2f} M tok/s"
            f"  x{seconds / floor['seconds']:6.2f} floor  x{seconds / both:5.2f} floor+read"
            f"  peak RSS {figures['peak_rss_mib']:7.1f} MiB"
        )
    print(f"hit rate {audit['hit_rate']:.2%}; causes {audit['causes']}")
    print(f"what-if hit rates {what_if['what_if']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=5)
    parser.add_argument(
        "--variants", default="plain,stamped,anthropic", help="plain, stamped, anthropic"
    )
    parser.add_argument("--memory-replicas", type=int, default=1, help="replicas, memory run")
    parser.add_argument("--scale", type=int, default=10, help="size factor of the memory run")
    parser.add_argument("--skip-mooncake", action="store_true")
    parser.add_argument(
        "--jobs", type=int, help="only the audit's wall time with -j 1 and with -j JOBS"
    )
    parser.add_argument(
        "--ray", action="store_true", help="only the audit's wall time, local and on Ray"
    )
    parser.add_argument("--worker", nargs=2, metavar=("MODE", "LOG"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        figures = worker(*args.worker)
        figures["peak_rss_mib"] = round(peak_rss_mib(), 1)
        print(json.dumps(figures))
        return 0
    with tempfile.TemporaryDirectory() as folder:
        for variant in args.variants.split(","):
            log = Path(folder) / f"tau-{variant}.jsonl"
            stamped = variant in ("stamped", "anthropic")
            count = build_log(log, args.replicas, stamped, anthropic=variant == "anthropic")
            print(f"{variant} log: {count:,} requests, {log.stat().st_size / 2**20:.1f} MiB")
            if args.ray:
                measure_executors(log)
            elif args.jobs:
                measure_jobs(log, args.jobs)
            else:
                measure_log(log, count)
            log.unlink()
        if args.jobs or args.ray:
            return 0
        sizes = []
        for replicas in (args.memory_replicas, args.memory_replicas * args.scale):
            path = Path(folder) / f"tau-{replicas}.jsonl"
            sizes.append((build_log(path, replicas), measure("audit-capacity", path)))
            path.unlink()
        (small, first), (large, second) = sizes
        print(
            f"memory (audit, vllm, {MEMORY_RUN_CAPACITY:,}-token cache): "
            f"{small:,} requests {first['peak_rss_mib']:.0f} MiB in "
            f"{first['seconds']:.0f} s; {large:,} requests {second['peak_rss_mib']:.0f} MiB in "
            f"{second['seconds']:.0f} s (x{second['peak_rss_mib'] / first['peak_rss_mib']:.2f} "
            f"memory for x{large / small:.0f} requests)"
        )
    if not args.skip_mooncake:
        mooncake = mooncake_audit()
        print(
            f"mooncake conversation trace: {mooncake['requests']:,} requests in "
            f"{mooncake['seconds']:.1f} s, hit rates {mooncake['hit_rates']}"
        )
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import cache_models

        cache_models.main([str(MOONCAKE)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
