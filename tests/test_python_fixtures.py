"""Every file in fixtures/python: the findings it declares, and fixes that converge.

A fixture declares each expected finding with a trailing ``# expect: PFX101`` comment on the
finding's line, or, for a line inside a multi-line string, a header ``# expect: 17 PFX101``.
Files named ``ok_*.py`` declare none: they are the cases that must stay quiet.
"""

import re
from pathlib import Path

import libcst
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prefixlint.linting.config import Settings
from prefixlint.linting.engine import FixMode, check_text, fix_text

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures" / "python").glob("*.py"))
PYTHON_RULES = (
    "PFX101", "PFX102", "PFX103", "PFX104", "PFX201", "PFX202", "PFX203", "PFX301", "PFX501",
    "PFX502", "PFX504",
)  # fmt: skip
_HEADER = re.compile(r"^# expect: (\d+) (PFX\d{3})$", re.MULTILINE)
_TRAILING = re.compile(r"#.*\bexpect: (PFX\d{3}(?:, PFX\d{3})*)\s*$")


def expected_findings(text: str) -> set[tuple[int, str]]:
    found = {(int(line), code) for line, code in _HEADER.findall(text)}
    for number, line in enumerate(text.splitlines(), 1):
        match = _TRAILING.search(line)
        if match:
            found |= {(number, code) for code in match.group(1).split(", ")}
    return found


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_fixture_findings(path):
    text = path.read_text(encoding="utf-8")
    found = check_text(text, path.name, Settings())
    assert {(d.span.line, d.code) for d in found} == expected_findings(text)
    if path.name.startswith("ok_"):
        assert found == []


def test_every_python_rule_has_a_fixture():
    declared = {code for path in FIXTURES for _, code in expected_findings(path.read_text())}
    assert declared == set(PYTHON_RULES)


@pytest.mark.parametrize("path", FIXTURES, ids=[p.name for p in FIXTURES])
def test_fixed_fixture_parses_and_drops_the_fixed_findings(path):
    text = path.read_text(encoding="utf-8")
    before = check_text(text, path.name, Settings())
    outcome = fix_text(text, path.name, Settings(), FixMode(fix=True, unsafe=True))
    assert outcome.error is None
    libcst.parse_module(outcome.text)
    after = check_text(outcome.text, path.name, Settings())
    fixed = {(d.code, d.message) for d in before if d.fix is not None}
    assert fixed.isdisjoint({(d.code, d.message) for d in after})
    assert all(d.fix is None for d in after)


@settings(max_examples=40, deadline=None)
@given(
    path=st.sampled_from(FIXTURES),
    codes=st.sets(st.sampled_from(PYTHON_RULES), min_size=1),
    unsafe=st.booleans(),
)
def test_fixing_is_idempotent(path, codes, unsafe):
    text = path.read_text(encoding="utf-8")
    chosen = Settings(select=tuple(sorted(codes)))
    mode = FixMode(fix=True, unsafe=unsafe)
    once = fix_text(text, path.name, chosen, mode)
    assert once.error is None
    libcst.parse_module(once.text)
    assert fix_text(once.text, path.name, chosen, mode).text == once.text
