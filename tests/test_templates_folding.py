"""Volatile values after the first one that breaks the prefix are folded into its finding."""

import json

import pytest

from prefixlint.context import RuleContext
from prefixlint.linting.add_noqa import add_noqa
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import check_text
from prefixlint.output.json import diagnostic_dict
from prefixlint.output.sarif import _result
from prefixlint.sources import source_module
from prefixlint.sources.templates import apply_changes

VOLATILE = frozenset({"PFX101", "PFX102", "PFX103", "PFX104"})
WITH_NOQA = Settings(select=(*sorted(VOLATILE), "PFX901"))
TRAILING_ON = {"PFX402": {"trailing-whitespace": True}}
RULES = "You are a careful assistant. Follow the rules below in every answer you give.\n"


def check(path, text, codes=VOLATILE):
    ctx = RuleContext(path, frozenset(codes), options=TRAILING_ON)
    return source_module(path, text).check(text, ctx)


def summary(path, text, codes=VOLATILE):
    return sorted(
        (d.code, d.span.line, tuple(d.extra["folded_lines"])) for d in check(path, text, codes)
    )


ENV = (
    "<env>\nWorking directory: {{ cwd }}\nIs directory a git repo: {{ isGitRepo }}\n"
    "Today's date: {{ date }}\nPlatform: {{ platform }}\n</env>\n" + RULES * 3
)


@pytest.mark.parametrize(
    ("path", "text", "codes", "expected"),
    [
        # values next to each other, of several rules: one finding at the first
        ("p.md", ENV, VOLATILE, [("PFX104", 2, (3, 4, 5))]),
        # values apart, with static text between: still one finding, at the first
        (
            "p.md",
            "Date: {{ date }}\n" + RULES + "Session: {{ session_id }}\n" + RULES * 3,
            VOLATILE,
            [("PFX101", 1, (3,))],
        ),
        (
            "p.md",
            "Date: {{ date }}\nUser: {{ user_name }}\nSession: {{ session_id }}\n" + RULES * 3,
            VOLATILE,
            [("PFX101", 1, (2, 3))],
        ),
        # single-brace and ${} placeholders fold the same way
        (
            "p.txt",
            "Now: {CURRENTDATE}\n" + RULES + "Name: ${user_name}\n" + RULES * 3,
            VOLATILE,
            [("PFX101", 1, (3,))],
        ),
        # folding is among the enabled rules only: alone, PFX103 reports its own values
        (
            "p.md",
            ENV.replace("{{ isGitRepo }}", "{{ user_name }}"),
            {"PFX103"},
            [("PFX103", 3, ())],
        ),
        ("p.md", ENV, {"PFX101"}, [("PFX101", 4, ())]),
        ("p.md", ENV, {"PFX104"}, [("PFX104", 2, (3, 5))]),
        # quiet: one value, nothing to fold; a value after the stable part is not folded
        ("p.md", "Date: {{ date }}\n" + RULES * 3, VOLATILE, [("PFX101", 1, ())]),
        (
            "p.md",
            "Date: {{ date }}\n" + RULES * 3 + "Question: {{ question }}\nUser: {{ user_name }}\n",
            VOLATILE,
            [("PFX101", 1, ())],
        ),
        ("p.md", RULES * 3, VOLATILE, []),
    ],
)
def test_later_values_fold_into_the_first(path, text, codes, expected):
    assert summary(path, text, codes) == expected


def test_the_message_names_the_folded_values_with_their_lines():
    (found,) = check("p.md", ENV)
    assert "puts a snapshot of the environment" in found.message
    assert (
        "and 3 more after it: `{{ isGitRepo }}` (line 3), `{{ date }}` (line 4),"
        " `{{ platform }}` (line 5)"
    ) in found.message
    assert found.severity.value == "error"


def test_the_move_fix_moves_the_folded_lines_too():
    text = "Date: {{ date }}\n" + RULES + "Session: {{ session_id }}\n" + RULES
    (found,) = check("p.md", text)
    assert found.fix is not None
    assert found.fix.message == "Move the lines to the end of the stable part of the prompt"
    fixed = apply_changes(text, [(e.start, e.end, e.replacement) for e in found.fix.edits])
    assert fixed == RULES * 2 + "Date: {{ date }}\nSession: {{ session_id }}\n"
    assert check("p.md", fixed) == []


def test_a_folded_line_that_cannot_move_stays_and_the_fix_says_so():
    text = (
        "Date: {{ date }}\n"
        + RULES
        + "{% for f in files %}cwd: {{ cwd }}\n{% endfor %}\n"
        + RULES
        + "Question: {{ question }}\n"
    )
    (found,) = check("p.j2", text)
    assert found.extra["folded_lines"] == [3]
    assert found.fix is not None
    assert "(line 3 cannot move and stay)" in found.fix.message
    fixed = apply_changes(text, [(e.start, e.end, e.replacement) for e in found.fix.edits])
    assert fixed.index("{% for f in files %}") < fixed.index("Date: {{ date }}")


def test_noqa_on_the_first_value_suppresses_it_with_what_it_folds():
    text = (
        "Date: {{ date }}  {# prefixlint: noqa: PFX101 #}\n"
        + RULES
        + "Session: {{ session_id }}\n"
        + RULES
        + "User: {{ user_name }}\n"
        + RULES * 2
    )
    assert check_text(text, "p.j2", WITH_NOQA) == []


@pytest.mark.parametrize("path", ["p.j2", "p.md", "p.txt"])
def test_add_noqa_output_stays_quiet(path):
    text = "Date: {{ date }}\n" + RULES + "Session: {{ session_id }}\n" + RULES * 2
    found = check_text(text, path, WITH_NOQA)
    assert [d.code for d in found] == ["PFX101"]
    edit = add_noqa(text, path, found)
    assert edit.added == 1
    assert check_text(edit.text, path, WITH_NOQA) == []


def test_a_code_waived_for_the_file_is_not_folded_and_the_next_value_leads():
    text = (
        "{# prefixlint: noqa-file: PFX101 #}\nDate: {{ date }}\n"
        + RULES
        + "Session: {{ session_id }}\n"
        + RULES
        + "User: {{ user_name }}\n"
        + RULES * 2
    )
    found = check_text(text, "p.j2", WITH_NOQA)
    assert [(d.code, d.span.line, d.extra.get("folded_lines")) for d in found] == [
        ("PFX102", 4, [6])
    ]


def test_a_folded_line_waived_with_noqa_drops_out_of_the_fold():
    text = (
        "Date: {{ date }}\n"
        + RULES
        + "Session: {{ session_id }}  {# prefixlint: noqa: PFX102 #}\n"
        + RULES
        + "User: {{ user_name }}\n"
        + RULES * 2
    )
    found = check_text(text, "p.j2", WITH_NOQA)
    assert [(d.code, d.span.line, d.extra.get("folded_lines")) for d in found] == [
        ("PFX101", 1, [5])
    ]
    assert "session_id" not in found[0].message


def test_a_noqa_for_another_code_on_a_folded_line_is_unused():
    text = (
        "Date: {{ date }}\n" + RULES + "Session: {{ session_id }}  {# prefixlint: noqa: PFX103 #}\n"
    )
    text += RULES * 2
    found = check_text(text, "p.j2", WITH_NOQA)
    assert [(d.code, d.span.line) for d in found] == [("PFX101", 1), ("PFX901", 3)]
    assert found[0].extra["folded_lines"] == [3]


def test_json_and_sarif_carry_the_folded_lines():
    (found,) = check("p.md", ENV)
    assert json.loads(json.dumps(diagnostic_dict(found, None)))["extra"]["folded_lines"] == [
        3,
        4,
        5,
    ]
    result = _result(found, {}, None)
    assert result["properties"]["folded_lines"] == [3, 4, 5]
    related = [r["physicalLocation"]["region"]["startLine"] for r in result["relatedLocations"]]
    assert related == [3, 4, 5]


TRAILING = "Rules: \nBe brief.\t\nBe kind.\nCite sources.  \n"
ON_REQUEST = Settings(select=("PFX402", "PFX901"), options=TRAILING_ON)


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("p.txt", TRAILING, [("PFX402", 1, (2, 4))]),
        ("p.txt", "Rules:\nBe brief.\n", []),
        # a Markdown hard break (two spaces after text) is not trailing whitespace
        ("p.md", TRAILING, [("PFX402", 1, (2,))]),
    ],
)
def test_trailing_whitespace_is_one_finding_per_file(path, text, expected):
    assert summary(path, text, {"PFX402"}) == expected


def test_the_trailing_whitespace_fix_removes_it_on_every_folded_line():
    (found,) = check("p.txt", TRAILING, {"PFX402"})
    assert "and on 2 more lines after it (2, 4)" in found.message
    assert found.fix is not None
    edits = [(e.start, e.end, e.replacement) for e in found.fix.edits]
    assert apply_changes(TRAILING, edits) == "Rules:\nBe brief.\nBe kind.\nCite sources.\n"


def test_a_later_line_that_waives_trailing_whitespace_stands_alone_for_its_directive():
    text = "Rules: \nBe brief. {# prefixlint: noqa: PFX402 #} \nBe kind. \n"
    assert summary("p.j2", text, {"PFX402"}) == [("PFX402", 1, (3,)), ("PFX402", 2, ())]
    assert [d.span.line for d in check_text(text, "p.j2", ON_REQUEST)] == [1]


@pytest.mark.parametrize("path", ["p.j2", "p.jinja"])
def test_add_noqa_output_for_trailing_whitespace_stays_quiet(path):
    settings = ON_REQUEST
    found = check_text(TRAILING, path, settings)
    assert len(found) == 1
    edit = add_noqa(TRAILING, path, found)
    assert edit.added == 1
    assert check_text(edit.text, path, settings) == []
