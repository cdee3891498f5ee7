"""``audit --jobs``: workers render, the main process audits, and the report is unchanged."""

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.auditing.options import AuditError
from prefixlint.auditing.pipeline import Auditor
from prefixlint.auditing.rendering import RenderPool, compact, expand, route
from prefixlint.auditing.report_json import render_json
from prefixlint.cli.audit import audit
from prefixlint.request import ChatRequest

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"
FIXTURE_LOGS = sorted(p for p in LOGS.iterdir() if p.suffix in (".json", ".jsonl"))


def _report(files: list[str], jobs: int) -> str:
    options = AuditOptions(caches=("vllm", "openai"), jobs=jobs)
    return render_json(run_audit(files, options))


def test_every_fixture_log_gives_the_same_report_with_two_workers():
    assert len(FIXTURE_LOGS) >= 10
    for log in FIXTURE_LOGS:
        serial, parallel = _report([str(log)], 1), _report([str(log)], 2)
        assert serial == parallel, log.name


def test_several_logs_in_one_audit_give_the_same_report_with_three_workers():
    files = [str(LOGS / "tau_openai_breakers.jsonl"), str(LOGS / "malformed.jsonl")]
    files.append(str(LOGS / "tau_anthropic_breakers.jsonl"))
    report = _report(files, 3)
    assert report == _report(files, 1)
    data = json.loads(report)
    assert data["requests"] and data["skipped"] and data["what_if"]


def test_a_session_always_goes_to_the_same_worker():
    first = ChatRequest(line=1, format="openai", messages=({"role": "user", "content": "a"},))
    later = ChatRequest(line=9, format="openai", messages=({"role": "user", "content": "a"},))
    assert route(first, None, 4) == route(later, None, 4)
    routes = {route(first, f"session-{n}", 4) for n in range(40)}
    assert routes == {0, 1, 2, 3}


def test_the_compact_form_gives_back_the_rendering():
    auditor = Auditor(AuditOptions(), [])
    request = ChatRequest(line=1, format="openai", messages=({"role": "user", "content": "hé"},))
    rendered = auditor.render(request)
    assert expand(compact(rendered)) == rendered
    assert expand(compact(rendered)).packed == rendered.packed


def test_workers_do_not_import_from_the_current_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "types.py").write_text("import os\nos._exit(3)\n")  # would kill a worker
    log = tmp_path / "log.jsonl"
    log.write_bytes((LOGS / "tau_openai_clean.jsonl").read_bytes())
    assert _report([log.name], 2) == _report([log.name], 1)
    assert os.getcwd() == str(tmp_path)


def test_a_worker_that_fails_fails_the_audit_with_its_traceback(tmp_path):
    request = ChatRequest(line=1, format="openai", messages=({"role": "user", "content": "x"},))
    pool = RenderPool(AuditOptions(), [str(tmp_path / "gone.jsonl")], 2)
    with pool, pytest.raises(AuditError, match=r"an audit worker failed:\nTraceback"):
        pool.take(request)


def test_the_command_with_jobs_0_writes_the_same_json_report(tmp_path):
    reports = []
    for jobs in ("1", "0"):
        out = tmp_path / f"report-{jobs}.json"
        args = [str(LOGS / "tau_openai_breakers.jsonl"), "--cache", "vllm", "--cache", "openai"]
        args += ["--format", "json", "-o", str(out), "-j", jobs]
        done = CliRunner().invoke(audit, args)
        assert done.exit_code == 0, done.output
        reports.append(out.read_text(encoding="utf-8"))
    assert reports[0] == reports[1]
