"""audit --source: each logged miss points at the template or Python line that caused it."""

import json
from pathlib import Path

import jinja2
import pytest
from click.testing import CliRunner

from prefixlint.auditing.source_link import (
    Anchor,
    SourceIndex,
    SourceRef,
    python_anchors,
    refined_cause,
    template_anchors,
)
from prefixlint.cli import main
from prefixlint.types import Diagnostic, Span

APP = Path(__file__).resolve().parent.parent / "fixtures" / "app"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Hello {{ name }}, today is {{ now }}.\n", [("Hello ", 1), (", today is ", 1)]),
        ("Static.\nRegion: ${region}\n", [("Static.\nRegion: ", 2)]),
        ("Ticket {ticket_id} for {user.name}", [("Ticket ", 1), (" for ", 1)]),
        ("{% if x %}a{% endif %}", [("a", 1)]),
        ("Ask %(question)s now", [("Ask ", 1)]),
        ("No placeholder at all.\n", []),
    ],
)
def test_template_anchors_are_the_text_before_each_placeholder(text, expected):
    assert [(a.text, a.line) for a in template_anchors("t.j2", text)] == expected


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('s = f"Host: {socket.gethostname()}."\n', [("Host: ", 1)]),
        ('s = (\n    f"""Hello.\nToday: {\n        today()}"""\n)\n', [("Hello.\nToday: ", 4)]),
        ('s = "Served by " + host\n', [("Served by ", 1)]),
        ('s = "Now: {now}".format(now=t)\n', [("Now: ", 1)]),
        ('s = "a" + "b"\n', []),
        ("def broken(:\n", []),
    ],
)
def test_python_anchors_are_string_pieces_before_a_value(source, expected):
    assert [(a.text, a.line) for a in python_anchors("app.py", source)] == expected


def _finding(code, path, line):
    return Diagnostic(code=code, name="x", message="m", span=Span(path, line, 1, line, 2))


def test_locate_takes_the_static_text_nearest_the_change():
    index = SourceIndex(
        [
            Anchor("You are a support assistant.\nCurrent time: ", "p.j2", 2),
            Anchor("You are a support assistant.\n", "other.j2", 1),
        ],
        [_finding("PFX101", "p.j2", 2)],
    )
    before = "<|im_start|>system\nYou are a support assistant.\nCurrent time: 2026-11-30T09:0"
    assert index.locate(before, "PFX101") == (SourceRef("p.j2", 2, "PFX101", True),)
    assert index.locate("nothing of the sort", "PFX101") == ()


def test_a_line_without_a_finding_keeps_the_miss_cause():
    index = SourceIndex([Anchor("Replica: an example host ", "app.py", 7)], [])
    refs = index.locate("... Replica: an example host web-", "PFX501")
    assert refs == (SourceRef("app.py", 7, "PFX501", False),)


@pytest.mark.parametrize(
    ("cause", "linked", "expected"),
    [
        ("PFX501", "PFX104", "PFX104"),  # generic cause, the code knows what changed
        ("content-changed", "PFX101", "PFX101"),
        ("PFX102", "PFX104", "PFX104"),  # same family: the shape was a guess
        ("PFX101", "PFX101", "PFX101"),
        ("PFX201", "PFX104", "PFX201"),  # another family: the audit's own finding stands
        ("PFX501", "PFX901", "PFX501"),  # not a content rule
    ],
)
def test_refined_cause(cause, linked, expected):
    assert refined_cause(cause, [SourceRef("a.py", 1, linked, True)]) == expected
    assert refined_cause(cause, [SourceRef("a.py", 1, linked, False)]) == cause


def _app_log(path):
    """Requests as the fixture app sends them: three sessions, two replicas."""
    template = jinja2.Template((APP / "prompts" / "support.j2").read_text())
    questions = ["Why was I charged twice?", "Can you check invoice 4471?", "How do I get it?"]
    lines = []
    for session, host, start in (
        ("a", "api-7f9c2", 0),
        ("b", "api-7f9c2", 200),
        ("c", "api-3b1d8", 200),
    ):
        history = []
        for turn, question in enumerate(questions):
            now = f"2026-11-30T09:{start // 60:02d}:{start % 60:02d}+00:00"
            messages = [
                {"role": "system", "content": template.render(now=now)},
                {
                    "role": "system",
                    "content": f"This conversation is served by {host}. Keep answers short.",
                },
                *history,
                {"role": "user", "content": question},
            ]
            lines.append({"session_id": session, "request": {"model": "m", "messages": messages}})
            history += [{"role": "user", "content": question}]
            history += [{"role": "assistant", "content": f"Answer {turn}."}]
            start += 37
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_every_rule_caused_miss_names_its_source_line(tmp_path, monkeypatch):
    monkeypatch.chdir(APP.parent.parent)
    log = _app_log(tmp_path / "requests.jsonl")
    args = ["audit", str(log), "--source", "fixtures/app", "--no-what-if", "--format", "json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    misses = [r for r in report["requests"] if r["cause"] and r["cause"].startswith("PFX")]
    assert len(misses) == 8
    template_line = {"path": "fixtures/app/prompts/support.j2", "line": 4, "code": "PFX101"}
    host_line = {"path": "fixtures/app/support_bot.py", "line": 23, "code": "PFX104"}
    for miss in misses:
        expected = template_line if miss["cause"] == "PFX101" else host_line
        assert miss["source"] == [expected], miss
    assert {r["cause"] for r in misses} == {"PFX101", "PFX104"}
    # Examples are kept under the refined cause, as the totals count it.
    assert set(report["examples"]["vllm"]) == set(report["models"]["vllm"]["by_cause"]) - {
        "first-seen"
    }
    ranked = [(s["path"], s["line"], s["requests"]) for s in report["sources"]["vllm"]]
    assert ranked == [(template_line["path"], 4, 7), (host_line["path"], 23, 1)]
    without = CliRunner().invoke(main, args[:2] + args[4:])
    assert all(r["source"] == [] for r in json.loads(without.stdout)["requests"])


def test_terminal_report_groups_misses_by_source_line(tmp_path, monkeypatch):
    monkeypatch.chdir(APP.parent.parent)
    log = _app_log(tmp_path / "requests.jsonl")
    result = CliRunner().invoke(main, ["audit", str(log), "--source", "fixtures/app"])
    assert "Misses by source line (vllm)" in result.stdout
    assert "fixtures/app/prompts/support.j2:4" in result.stdout


def test_check_with_log_ranks_findings_by_measured_cost(tmp_path, monkeypatch):
    monkeypatch.chdir(APP.parent.parent)
    log = _app_log(tmp_path / "requests.jsonl")
    concise = CliRunner().invoke(main, ["check", "fixtures/app", "--with-log", str(log), "-q"])
    ranking = concise.stdout.split("measured (vllm):\n")[1].splitlines()
    assert [line.split()[-2:] for line in ranking] == [
        ["fixtures/app/prompts/support.j2:4", "PFX101"],
        ["fixtures/app/support_bot.py:23", "PFX104"],
    ]
    result = CliRunner().invoke(
        main, ["check", "fixtures/app", "--with-log", str(log), "--format", "json"]
    )
    costs = {
        (f["path"], f["line"]): f["extra"].get("log_requests") for f in json.loads(result.stdout)
    }
    assert costs == {
        ("fixtures/app/prompts/support.j2", 4): 7,
        ("fixtures/app/support_bot.py", 15): None,  # the template line is where the date enters
        ("fixtures/app/support_bot.py", 23): 1,
    }
    bad = CliRunner().invoke(main, ["check", "fixtures/app", "--with-log", str(tmp_path)])
    assert bad.exit_code == 2


def test_a_file_the_check_cannot_parse_gives_no_anchors(tmp_path):
    # Past the check's chain limit (1,000), though Python itself would parse it.
    chained = tmp_path / "chained.py"
    chained.write_text("x = " + " + ".join(["1"] * 1500) + "\nprompt = f'Served by host {h}'\n")
    index = SourceIndex.build([str(chained)])
    assert index.locate("... Served by host api-", "PFX104") == ()
    chained.write_text("prompt = f'Served by host {h}'\n")
    assert SourceIndex.build([str(chained)]).locate("... Served by host api-", "PFX104")
