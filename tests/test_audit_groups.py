"""audit --group-by: results per route, session, model or logged metadata, capped."""

import json
from pathlib import Path

from click.testing import CliRunner

from prefixlint.auditing import AuditOptions, run_audit
from prefixlint.cli import main

BREAKERS = (
    Path(__file__).resolve().parent.parent / "fixtures" / "logs" / "tau_openai_breakers.jsonl"
)


def test_groups_by_session_sum_to_the_totals_and_name_the_costliest_cause():
    report = run_audit([str(BREAKERS)], AuditOptions(what_if=False, group_by="session"))
    groups = report.by_group("vllm")
    assert len(groups) == 9
    assert sum(g.totals.requests for g in groups) == report.totals("vllm").requests
    assert sum(g.cost_tokens for g in groups) == sum(r.cost_tokens for r in report.records)
    worst = groups[0]
    assert worst.name == "tau-airline-1" and worst.top_cause == "PFX101"
    assert [g.uncached_tokens for g in groups] == sorted(
        (g.uncached_tokens for g in groups), reverse=True
    )


def test_many_groups_are_capped_with_the_rest_summed():
    report = run_audit([str(BREAKERS)], AuditOptions(what_if=False, group_by="session"))
    capped = report.by_group("vllm", limit=4)
    assert [g.name for g in capped][-1] == "(6 other groups)"
    assert sum(g.totals.requests for g in capped) == 63
    assert sum(g.cost_tokens for g in capped) == sum(g.cost_tokens for g in report.by_group("vllm"))


def test_group_by_a_request_field_in_json():
    result = CliRunner().invoke(
        main, ["audit", str(BREAKERS), "--group-by", "route", "--no-what-if", "--format", "json"]
    )
    groups = json.loads(result.stdout)["groups"]["vllm"]
    assert [(g["group"], g["requests"]) for g in groups] == [("/v1/chat/completions", 63)]
    plain = CliRunner().invoke(main, ["audit", str(BREAKERS), "--no-what-if", "--format", "json"])
    assert json.loads(plain.stdout)["groups"] == {}
