"""The ``llamacpp`` cache model against a real llama-server (``bench/llama_server_loop.py``).

Opt-in: set ``PREFIXLINT_LLAMA_SERVER`` to a built ``llama-server`` (``bash
bench/build_llama_server.sh`` prints its path; its source tree's ``gguf-py`` writes the tiny
model). Every replayed request's prompt tokens must equal the server's and its cached tokens
the model's, in each configuration; with two requests in flight each is sent once the one
before shows on a slot (``/slots``), and the model is fed the launches the slots showed.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SERVER = os.environ.get("PREFIXLINT_LLAMA_SERVER")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not SERVER or not Path(SERVER).is_file(),
        reason="set PREFIXLINT_LLAMA_SERVER to a llama-server (bench/build_llama_server.sh)",
    ),
]


@pytest.mark.parametrize("configuration", ["defaults", "cache-ram-0", "np2-concurrency2"])
def test_the_model_agrees_with_llama_server(tmp_path, configuration):
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "llama_server_loop.py"),
            str(tmp_path),
            "--server",
            str(SERVER),
            "--only",
            configuration,
        ],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    report_path = tmp_path / f"{configuration}.json"
    assert report_path.exists(), done.stdout + done.stderr
    rows = json.loads(report_path.read_text())["requests"]
    assert len(rows) == 126
    assert [r["error"] for r in rows] == [None] * len(rows)
    assert [r["server_prompt_tokens"] for r in rows] == [r["prompt_tokens"] for r in rows]
    assert [r["cached_tokens"] for r in rows] == [r["sim_cached_tokens"] for r in rows]
    assert done.returncode == 0, done.stdout
