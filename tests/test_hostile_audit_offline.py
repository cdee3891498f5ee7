"""``hf:`` tokenizers and templates never touch the network: the Hugging Face offline
switches are set before anything loads, a hub id in the local cache loads from it, and one
that is not there is a one-line error (exit 2). Each run is a fresh process with every
socket connection and name lookup refused and recorded."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")

ROOT = Path(__file__).parent.parent
GUARDED_RUN = """
import json, socket, sys
attempts = []
def refuse(*args, **kwargs):
    attempts.append(repr(args[:2]))
    raise OSError("network access in an offline run")
socket.getaddrinfo = refuse
socket.create_connection = refuse
socket.socket.connect = lambda self, *args: refuse(*args)
socket.socket.connect_ex = lambda self, *args: refuse(*args)
if sys.argv[1] == "preimport":  # huggingface_hub loaded before prefixlint sets anything
    import huggingface_hub  # noqa: F401
from prefixlint.cli import main
code = None
try:
    main(sys.argv[2:])
except SystemExit as exc:
    code = exc.code
with open("attempts.json", "w") as out:
    json.dump({"code": code, "attempts": attempts}, out)
"""


def guarded(tmp_path: Path, *args: str, preimport: bool = False, env=None):
    """Exit code, stderr and network attempts of ``prefixlint ARGS`` with no network."""
    environment = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    environment.update(env or {})
    result = subprocess.run(
        [sys.executable, "-c", GUARDED_RUN, "preimport" if preimport else "plain", *args],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    outcome = json.loads((tmp_path / "attempts.json").read_text())
    return outcome["code"], result.stderr, outcome["attempts"]


@pytest.fixture
def log(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}) + "\n")
    return path


@pytest.mark.parametrize(
    ("option", "preimport"),
    [
        ("--tokenizer", False),
        ("--template", False),
        pytest.param("--tokenizer", True, marks=pytest.mark.slow),
        pytest.param("--template", True, marks=pytest.mark.slow),
    ],
)
def test_uncached_hub_id_is_one_line_error_without_network(tmp_path, log, option, preimport):
    code, stderr, attempts = guarded(
        tmp_path, "audit", str(log), option, "hf:acme/not-cached", preimport=preimport
    )
    assert attempts == []
    assert code == 2
    assert len(stderr.strip().splitlines()) == 1, stderr
    assert "acme/not-cached" in stderr and "Traceback" not in stderr


@pytest.mark.slow
def test_check_with_uncached_hub_id_is_one_line_error_without_network(tmp_path):
    prompt = tmp_path / "system.txt"
    prompt.write_text("You are terse.\n")
    code, stderr, attempts = guarded(tmp_path, "check", str(prompt), "--tokenizer", "hf:acme/x")
    assert attempts == []
    assert code == 2
    assert "never downloads" in stderr


def cached_model(cache: Path, repo: str) -> None:
    """A tiny word-level tokenizer laid out as the Hugging Face hub cache holds a download."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "You": 1, "are": 2, "terse": 3, ".": 4, "hi": 5}
    core = Tokenizer(WordLevel(vocab, unk_token="[UNK]"))
    core.pre_tokenizer = Whitespace()
    folder = cache / f"models--{repo.replace('/', '--')}"
    snapshot = folder / "snapshots" / "0123456789abcdef"
    PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]").save_pretrained(snapshot)
    (folder / "refs").mkdir()
    (folder / "refs" / "main").write_text("0123456789abcdef")
    # How the cache records a file the repository does not have (this one has no config).
    missing = folder / ".no_exist" / "0123456789abcdef"
    missing.mkdir(parents=True)
    (missing / "config.json").touch()


def test_cached_hub_id_loads_without_network(tmp_path, log):
    cache = tmp_path / "hub"
    cached_model(cache, "acme/tiny")
    code, stderr, attempts = guarded(
        tmp_path,
        "audit",
        str(log),
        "--tokenizer",
        "hf:acme/tiny",
        "--no-what-if",
        env={"HF_HUB_CACHE": str(cache)},
    )
    assert attempts == []
    assert code == 0, stderr
