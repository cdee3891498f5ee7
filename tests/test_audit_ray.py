"""``audit --executor ray`` on a local Ray cluster gives the local run's report, row by row."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.auditing.hash_trace import TRACE_COLUMNS
from prefixlint.auditing.report_html import render_html
from prefixlint.auditing.report_json import render_json
from prefixlint.cli.audit import audit
from tests.audit_logs import generate_log

ray = pytest.importorskip("ray", reason="audit --executor ray needs the ray extra (make ray)")
pq = pytest.importorskip("pyarrow.parquet")
from prefixlint.auditing.distributed import run_distributed  # noqa: E402

pytestmark = pytest.mark.slow
MALFORMED = '{"request": {"model": "gpt-4o", "messages": [\n'


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    """An OpenAI log with a malformed line among its requests, and an Anthropic log."""
    folder = tmp_path_factory.mktemp("logs")
    openai_lines, _ = generate_log(seed=14, sessions=8, fmt="openai")
    openai_lines.insert(9, MALFORMED.rstrip("\n"))
    anthropic_lines, _ = generate_log(seed=15, sessions=5, fmt="anthropic")
    paths = []
    for name, lines in (("openai.jsonl", openai_lines), ("anthropic.jsonl", anthropic_lines)):
        path = folder / name
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    return paths


def _assert_same(local, distributed):
    mine, theirs = json.loads(render_json(local)), json.loads(render_json(distributed))
    assert len(theirs["requests"]) == len(mine["requests"]) > 0
    for row, other in zip(mine["requests"], theirs["requests"], strict=True):
        assert other == row
    for key in mine:
        assert theirs[key] == mine[key], key
    assert render_html(distributed) == render_html(local)


@pytest.mark.parametrize(
    "options",
    [
        # Provider caches and the ceiling, per partition; vllm one stream; what-if on.
        AuditOptions(caches=("openai", "vllm", "unlimited", "anthropic")),
        # Capacity-limited engines and two replicas: one stream per model and per replica.
        AuditOptions(
            caches=("vllm", "sglang", "openai"),
            capacity_tokens=6_000,
            replicas=2,
            what_if=False,
            group_by="session",
        ),
        # The offline optimum and Anthropic's breakpoints, with a capacity.
        AuditOptions(caches=("anthropic", "belady", "gemini"), capacity_tokens=8_000),
    ],
    ids=["providers", "capacity-replicas", "belady"],
)
def test_the_report_on_ray_equals_the_local_report_row_by_row(local_ray, logs, options):
    local = run_audit(logs, options)
    distributed = run_distributed(logs, options)
    _assert_same(local, distributed)
    assert any(s.line == 10 and "malformed JSON" in s.reason for s in distributed.skipped)
    assert distributed.lines_read == len(distributed.records) // len(options.caches) + len(
        distributed.skipped
    )
    if options.replicas:
        assert distributed.routing is not None
        assert [r.requests for r in distributed.routing.replicas] == [
            r.requests
            for r in local.routing.replicas  # type: ignore[union-attr]
        ]


def test_per_user_keys_and_salts_give_the_local_report_on_ray(local_ray, tmp_path):
    # Every user has a prompt_cache_key, two tenants a cache_salt: each partitioned model
    # divides its streams by what it reads, none by what it ignores.
    lines, _ = generate_log(seed=17, sessions=6, fmt="openai")
    keyed = []
    for line in lines:
        record = json.loads(line)
        user = record["session_id"]
        record["request"]["prompt_cache_key"] = f"user-{user}"
        if user.endswith(("1", "3")):
            record["request"]["cache_salt"] = f"tenant-{user[-1]}"
        keyed.append(json.dumps(record))
    log = tmp_path / "keyed.jsonl"
    log.write_text("\n".join(keyed) + "\n")
    options = AuditOptions(caches=("openai", "unlimited", "vllm", "sglang"), what_if=False)
    _assert_same(run_audit([str(log)], options), run_distributed([str(log)], options))


def test_a_request_a_model_rejects_is_kept_from_the_later_models_as_locally(local_ray, tmp_path):
    # Five cache_control breakpoints: the anthropic model rejects the request, so vllm never
    # sees it in a local run, and must not on the cluster either.
    lines, _ = generate_log(seed=16, sessions=3, fmt="anthropic")
    record = json.loads(lines[2])
    body = record.get("request", record)
    marked = {"type": "ephemeral"}
    for message in body["messages"][:5]:
        content = message["content"]
        if isinstance(content, str):
            message["content"] = [{"type": "text", "text": content, "cache_control": marked}]
        else:
            content[-1]["cache_control"] = marked
    lines[2] = json.dumps(record)
    log = tmp_path / "rejected.jsonl"
    log.write_text("\n".join(lines) + "\n")
    options = AuditOptions(caches=("anthropic", "vllm"), capacity_tokens=5_000, what_if=False)
    local = run_audit([str(log)], options)
    assert any("rejects the request" in s.reason for s in local.skipped)
    _assert_same(local, run_distributed([str(log)], options))


def test_a_log_that_breaks_inside_a_task_is_the_local_one_line_error(local_ray, logs, tmp_path):
    # The first line reads; the gzip stream ends early further on, in a trace task.
    data = gzip.compress(Path(logs[0]).read_bytes())
    broken = tmp_path / "broken.jsonl.gz"
    broken.write_bytes(data[: len(data) // 2])
    args = [str(broken), "--cache", "vllm", "--no-what-if"]
    local = CliRunner().invoke(audit, args)
    distributed = CliRunner().invoke(audit, [*args, "--executor", "ray"])
    assert local.exit_code == distributed.exit_code == 2
    assert "not a valid gzip stream" in local.output
    assert distributed.output == local.output


def test_the_command_reads_file_urls_and_keeps_the_trace(local_ray, logs, tmp_path):
    url = Path(logs[0]).as_uri()
    args = [url, "--cache", "vllm", "--cache", "unlimited", "--format", "json"]
    local_out, ray_out, trace = tmp_path / "local.json", tmp_path / "ray.json", tmp_path / "trace"
    runner = CliRunner()
    done = runner.invoke(audit, [*args, "-o", str(local_out)])
    assert done.exit_code == 0, done.output
    done = runner.invoke(
        audit, [*args, "-o", str(ray_out), "--executor", "ray", "--trace-out", str(trace)]
    )
    assert done.exit_code == 0, done.output
    assert ray_out.read_text() == local_out.read_text()
    table = pq.read_table(trace)
    assert tuple(table.column_names) == TRACE_COLUMNS
    report = json.loads(ray_out.read_text())
    assert table.num_rows == len(report["requests"]) // 2
    rows = table.sort_by([("line", "ascending")]).to_pylist()
    assert [r["line"] for r in rows] == [r["line"] for r in report["requests"][::2]]
    assert all(len(r["tokens"]) == 8 * r["prompt_tokens"] for r in rows)


def test_a_parquet_log_gives_the_same_report_on_ray(local_ray, logs, tmp_path):
    import pyarrow as pa

    lines = Path(logs[0]).read_text().splitlines()
    records = [json.loads(line) for line in lines if line != MALFORMED.rstrip("\n")]
    path = tmp_path / "openai.parquet"
    pq.write_table(pa.Table.from_pylist(records), path)
    options = AuditOptions(caches=("openai", "vllm"))
    relative = os.path.relpath(path)  # the cluster's tasks open it by its absolute path
    local = run_audit([relative], options)
    assert len(local.records) == 2 * len(records)
    _assert_same(local, run_distributed([relative], options))
