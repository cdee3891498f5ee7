"""The torch replay reuses KV exactly where the audit's ``vllm`` model predicts a hit,
across model switches and ``cache_salt`` namespaces."""

import json

import pytest
from click.testing import CliRunner

from prefixlint.api import audit
from prefixlint.cli.replay import replay

SYSTEM = (
    "You are the airline's booking assistant. Verify the user's identity, never change a "
    "reservation without explicit confirmation, and answer in one short paragraph."
)
TURNS = ["Change my flight to Boston.", "My code is ZX81QP.", "Friday morning.", "I confirm."]


def session_log(path, params, images=None):
    """One conversation resent in full each turn; turn ``i`` adds ``params[i]`` to the body
    and, with ``images``, shows image ``images[i]`` in the first user message."""
    history = [{"role": "system", "content": SYSTEM}]
    lines = []
    for index, (turn, extra) in enumerate(zip(TURNS, params, strict=True)):
        history.append({"role": "user", "content": turn})
        messages = list(history)
        if images is not None:
            part = {"type": "image_url", "image_url": {"url": images[index]}}
            messages[1] = {"role": "user", "content": [{"type": "text", "text": TURNS[0]}, part]}
        body = {"model": "base", "messages": messages, **extra}
        lines.append(json.dumps({"session_id": "s", "request": body}))
        history.append({"role": "assistant", "content": "Noted."})
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("params", "lora", "hits"),
    [
        # the third request switches model: nothing cached under "base" serves it
        ([{}, {}, {"model": "other"}, {}], (), [False, True, False, True]),
        # a new salt shares nothing; the salt's own earlier blocks serve the last request
        (
            [{"cache_salt": "a"}, {"cache_salt": "a"}, {"cache_salt": "b"}, {"cache_salt": "a"}],
            (),
            [False, True, False, True],
        ),
        # OpenAI's prompt_cache_key is no vLLM namespace: every turn reuses the one before
        (
            [{"prompt_cache_key": k} for k in ("a", "b", "c", "a")],
            (),
            [False, True, True, True],
        ),
        # LoRA adapters served with the base: each adapter is a namespace of its own
        (
            [{"model": "sql"}, {"model": "sql"}, {"model": "chat"}, {}],
            ("sql", "chat"),
            [False, True, False, False],
        ),
    ],
)
def test_torch_replay_reuses_what_the_audit_predicts(tmp_path, params, lora, hits):
    log = session_log(tmp_path / "log.jsonl", params)
    report = audit([log], what_if=False, lora_modules=frozenset(lora))
    predicted = [r.cached_tokens for r in report.records]
    assert [c > 0 for c in predicted] == hits
    flags = [f"--lora-modules={name}=/adapters/{name}" for name in lora]
    assert torch_replay(log, *flags) == predicted


def test_torch_replay_and_audit_agree_on_images(tmp_path):
    """vllm engine: the third request shows another image in the first user turn."""
    log = session_log(tmp_path / "log.jsonl", [{}] * 4, ["a.png", "a.png", "b.png", "a.png"])
    flags = ["--engine", "vllm", "--image-tokens", "24"]
    report = audit([log], what_if=False, engine="vllm", image_tokens=24)
    predicted = [r.cached_tokens for r in report.records]
    assert 0 < predicted[2] < predicted[1] < predicted[3]
    assert torch_replay(log, *flags) == predicted


def torch_replay(log, *flags):
    """Cached tokens per request of the torch replay (tiny model, CPU); checks its
    prediction agrees."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        result = CliRunner().invoke(
            replay,
            [str(log), "--backend", "torch", "--model", "tiny", "--device", "cpu",
             "--kv-memory", "4MiB", "--format", "json", *flags],
        )  # fmt: skip
    finally:
        torch.set_num_threads(threads)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["requests"]
    assert [r["cached_tokens"] for r in rows] == [r["sim_cached_tokens"] for r in rows]
    return [r["cached_tokens"] for r in rows]
