"""Rendering and tokenizing a long request log: memoized renderer against two baselines.

    .venv/bin/python bench/render_log.py [--requests 10000]

Builds a log from the tau-bench airline excerpt in ``fixtures/logs``: conversations replayed
turn by turn with the shared 6 KB system prompt and 14 tool schemas, each session made
distinct (a reference number appended to every user message and tool result), so the
distinct text grows with the log as it does in real traffic. Prints:

- ``memoized``: ``prefixlint.chat.Renderer.render`` on every request (text, tokens and
  components);
- ``distinct once``: the floor, encoding every distinct stretch of text between special
  tokens exactly once;
- ``naive``: encoding every full prompt (measured on a tenth of the log, scaled).

Times are CPU seconds of this process, so that other load on the machine counts less.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "fixtures" / "logs"))

import generate  # noqa: E402  (the fixture generator: tool schemas, turn splitting)

from prefixlint.chat import Renderer  # noqa: E402
from prefixlint.sources.logs import parse_record  # noqa: E402
from prefixlint.tokenizers import get_tokenizer  # noqa: E402


def build_log(count: int):
    excerpt = json.loads(generate.EXCERPT.read_text(encoding="utf-8"))
    system = {"role": "system", "content": excerpt["system"]}
    requests, session = [], 0
    while len(requests) < count:
        conversation = excerpt["conversations"][session % len(excerpt["conversations"])]
        messages = []
        for message in conversation["messages"]:
            if message["role"] in ("user", "tool"):
                message = {**message, "content": f"{message['content']} [ref {session}]"}
            messages.append(message)
        for history, _ in generate.conversation_turns(messages):
            body = {
                "model": "gpt-4o",
                "messages": [system, *history],
                "tools": generate.AIRLINE_TOOLS,
            }
            requests.append(parse_record(len(requests) + 1, {"request": body}, "openai-chat"))
        session += 1
    return requests[:count]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=10000)
    args = parser.parse_args()
    requests = build_log(args.requests)
    tokenizer = get_tokenizer("qwen")
    tokenizer.encode("warm up")

    renderer = Renderer(tokenizer="qwen")
    started = time.process_time()
    tokens = sum(len(renderer.render(request).tokens) for request in requests)
    memoized = time.process_time() - started

    distinct: dict[str, None] = {}
    for request in requests:
        parts = renderer.encoder.split(renderer.render(request).text)
        distinct.update((part, None) for part in parts[::2] if part)
    started = time.process_time()
    distinct_tokens = sum(len(tokenizer.encode(part)) for part in distinct)
    floor = time.process_time() - started

    sample = requests[: max(1, len(requests) // 10)]
    texts = [renderer.render(request).text for request in sample]
    started = time.process_time()
    for text in texts:
        tokenizer.encode(text)
    naive = (time.process_time() - started) * len(requests) / len(sample)

    print(f"{len(requests)} requests, {tokens / 1e6:.1f}M prompt tokens")
    print(f"memoized       {memoized:7.2f} s")
    segments = f"({len(distinct)} segments, {distinct_tokens / 1e6:.2f}M tokens)"
    print(f"distinct once  {floor:7.2f} s  {segments}")
    print(f"naive          {naive:7.2f} s")


if __name__ == "__main__":
    main()
