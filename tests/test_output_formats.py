import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from engine_fakes import install

from prefixlint import registry
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import FileResult, FixMode, check_file
from prefixlint.output import FORMATS, Report, render
from prefixlint.output.style import wants_color
from prefixlint.types import Span

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())


@pytest.fixture
def report(tmp_path, monkeypatch):
    install(monkeypatch)
    monkeypatch.chdir(tmp_path)
    Path("dir with space").mkdir()
    Path("dir with space/a,b.txt").write_text("héllo  \nTODAY\n")
    Path("clean.txt").write_text("fine\n")
    results = [check_file(p, Settings()) for p in ("dir with space/a,b.txt", "clean.txt")]
    return Report(results, FixMode())


def test_json(report):
    first, second = json.loads(render(report, "json"))
    assert first == {
        "code": "PFX990",
        "name": "fake-rule-0",
        "message": "found '  '",
        "severity": "error",
        "path": "dir with space/a,b.txt",
        "line": 1,
        "column": 6,
        "end_line": 1,
        "end_column": 8,
        "fix": {
            "applicability": "safe",
            "message": "fix PFX990",
            "edits": [
                {
                    "start": 5,
                    "end": 7,
                    "content": "",
                    "line": 1,
                    "column": 6,
                    "end_line": 1,
                    "end_column": 8,
                }
            ],
        },
        "stable_prefix_tokens": None,
        "unstable_tokens": None,
        "extra": {},
    }
    assert second["fix"]["applicability"] == "unsafe"


def test_sarif_is_valid_and_complete(report):
    log = json.loads(render(report, "sarif"))
    jsonschema.validate(log, SCHEMA)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {"PFX901", "PFX902", "PFX990"} <= {rule["id"] for rule in rules}
    result = run["results"][0]
    assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == "PFX990"
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == "dir%20with%20space/a%2Cb.txt"
    assert location["region"] == {"startLine": 1, "startColumn": 6, "endLine": 1, "endColumn": 8}
    replacement = result["fixes"][0]["artifactChanges"][0]["replacements"][0]
    assert replacement["deletedRegion"]["startColumn"] == 6
    assert replacement["insertedContent"] == {"text": ""}


def test_sarif_rejects_what_the_schema_forbids():
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"version": "2.1.0", "runs": [{"tool": {}}]}, SCHEMA)


def test_github(report):
    lines = render(report, "github").splitlines()
    assert lines == [
        "::error file=dir with space/a%2Cb.txt,line=1,col=6,endLine=1,endColumn=8,"
        "title=PFX990::PFX990 found '  ' (fake-rule-0)",
        "::error file=dir with space/a%2Cb.txt,line=2,col=1,endLine=2,endColumn=6,"
        "title=PFX991::PFX991 found 'TODAY' (fake-rule-1)",
    ]


def test_junit(report):
    root = ET.fromstring(render(report, "junit"))
    assert (root.get("tests"), root.get("failures")) == ("3", "2")
    suites = {suite.get("name"): suite for suite in root}
    failing = suites["dir with space/a,b.txt"]
    assert [case.get("name") for case in failing] == ["prefixlint.PFX990", "prefixlint.PFX991"]
    assert failing[0].find("failure").get("message") == "found '  '"
    assert suites["clean.txt"][0].find("failure") is None


@pytest.mark.parametrize("format_name", FORMATS)
def test_every_format_renders_an_empty_report(format_name):
    assert isinstance(render(Report([], FixMode()), format_name), str)


def test_colour_only_when_asked(report):
    assert "\x1b[" not in render(report, "full", color=False)
    assert "\x1b[" in render(report, "full", color=True)


def test_full_caret_under_non_ascii_line(report):
    assert "1 | héllo  \n  |      ^^\n" in render(report, "full")


def test_full_shows_the_stable_prefix():
    span = Span("p.txt", 1, 1, 1, 2)
    found = registry.diagnostic("PFX902", "m", span, stable_prefix_tokens=412, unstable_tokens=1203)
    result = FileResult("p.txt", diagnostics=[found], text="x\n")
    text = render(Report([result]), "full")
    assert "= stable prefix: 412 tokens, then 1,203 tokens that the cache cannot reuse" in text


@pytest.mark.parametrize(
    ("isatty", "no_color", "expected"),
    ((True, None, True), (True, "1", False), (False, None, False)),
)
def test_wants_color(monkeypatch, isatty, no_color, expected):
    if no_color is None:
        monkeypatch.delenv("NO_COLOR", raising=False)
    else:
        monkeypatch.setenv("NO_COLOR", no_color)
    stream = type("Stream", (), {"isatty": lambda self: isatty})()
    assert wants_color(stream) is expected
