"""``audit --executor``: Ray stays optional, and its options are checked, without Ray."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.auditing.report_json import render_json
from prefixlint.cli.audit import audit
from prefixlint.sources.logs import LogReadError, read_log
from prefixlint.sources.logs.parquet import without_nulls

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "fixtures" / "logs" / "tau_openai_clean.jsonl"


def test_without_ray_the_executor_is_a_one_line_error_saying_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray raises ImportError
    result = CliRunner().invoke(audit, [str(LOG), "--executor", "ray"])
    assert result.exit_code == 2
    assert result.output == (
        "prefixlint audit: --executor ray needs Ray: pip install 'prefixlint[ray]' (or make ray)\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--trace-out", "trace"], "--ray-address and --trace-out need --executor ray"),
        (["--ray-address", "auto"], "--ray-address and --trace-out need --executor ray"),
    ],
)
def test_ray_options_without_the_ray_executor_are_errors(args, message):
    result = CliRunner().invoke(audit, [str(LOG), *args])
    assert result.exit_code == 2
    assert result.output == f"prefixlint audit: {message}\n"


def test_standard_input_is_refused_before_ray_is_needed(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    result = CliRunner().invoke(audit, ["-", "--executor", "ray"], input="")
    assert result.exit_code == 2
    assert "reads log files, not standard input" in result.output


def test_an_unreadable_log_is_a_one_line_error_before_ray_is_needed(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "ray", None)
    gone = tmp_path / "gone.jsonl"
    result = CliRunner().invoke(audit, [str(gone), "--executor", "ray"])
    assert result.exit_code == 2
    assert result.output == (
        f"prefixlint audit: {gone}: cannot read log: No such file or directory\n"
    )


def test_check_and_a_local_audit_never_import_ray(tmp_path):
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from prefixlint.cli import main\n"
        f"CliRunner().invoke(main, ['audit', {str(LOG)!r}, '--format', 'json'])\n"
        f"CliRunner().invoke(main, ['check', {str(ROOT / 'fixtures' / 'templates')!r}])\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('ray', 'pyarrow')\n"
        "    or m == 'prefixlint.auditing.distributed'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True
    )
    assert done.stdout.strip() == "[]"


def test_a_log_named_by_a_file_url_reads_as_its_path():
    options = AuditOptions(caches=("vllm",), what_if=False)
    by_path = json.loads(render_json(run_audit([str(LOG)], options)))
    by_url = json.loads(render_json(run_audit([LOG.as_uri()], options)))
    assert by_url["requests"] == [dict(r, file=LOG.as_uri()) for r in by_path["requests"]]


def test_a_missing_url_is_a_log_read_error(tmp_path):
    with pytest.raises(LogReadError, match="cannot read log"):
        read_log((tmp_path / "gone.jsonl").as_uri())


@pytest.mark.parametrize(
    ("row", "record"),
    [
        ({"a": None, "b": 1}, {"b": 1}),
        ({"m": [{"role": "user", "tool_calls": None}]}, {"m": [{"role": "user"}]}),
        ({"m": [None, 2]}, {"m": [None, 2]}),  # a list keeps its nulls
    ],
)
def test_a_parquet_row_leaves_out_its_null_fields(row, record):
    assert without_nulls(row) == record


def test_a_parquet_log_is_read_row_by_row_with_bad_rows_counted(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    rows = [json.loads(line) for line in LOG.read_text().splitlines()[:3]]
    rows.insert(1, dict.fromkeys(rows[0]))  # every field null: nothing to read
    path = tmp_path / "log.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    items = list(read_log(str(path)))
    assert [type(item).__name__ for item in items] == ["ChatRequest", "SkippedLine"] + [
        "ChatRequest"
    ] * 2
    assert items[1].line == 2 and items[1].reason == "unknown format (keys: none)"
    assert [item.line for item in items] == [1, 2, 3, 4]
    assert items[0].messages == tuple(without_nulls(m) for m in rows[0]["request"]["messages"])
    not_parquet = tmp_path / "bad.parquet"
    not_parquet.write_text("{}\n")
    with pytest.raises(LogReadError, match="cannot read Parquet log"):
        read_log(str(not_parquet))
