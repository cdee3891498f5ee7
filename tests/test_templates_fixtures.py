"""Every template fixture gives exactly the expected findings; clean ones give none."""

from pathlib import Path

import pytest

from prefixlint.context import RuleContext
from prefixlint.sources import source_module

FIXTURES = Path(__file__).parent.parent / "fixtures" / "templates"
CODES = frozenset(
    {"PFX101", "PFX102", "PFX103", "PFX104", "PFX301", "PFX401", "PFX402", "PFX403", "PFX404"}
)

EXPECTED = {
    "clean_browser_use_system_prompt_flash.md": [],
    "clean_assistant_hard_breaks.md": [],
    "clean_fabric_summarize.md": [],
    "clean_gpt_engineer_philosophy.txt": [],
    "clean_not_a_prompt_config.yaml": [],
    "clean_smolagents_toolcalling_agent.yaml": [],
    "clean_system_prompt_volatile_last.j2": [],
    "pfx101_current_date_line.txt": [("PFX101", 2)],
    "pfx101_now_filter.md": [("PFX101", 3)],
    # the branch on line 4 breaks the prefix; the branch again, the working directory, the
    # hosts and the date after it are folded into that finding
    "pfx104_openhands_additional_info.j2": [("PFX104", 3)],
    "pfx104_openhands_readonly_additional_info.j2": [("PFX104", 3)],
    "pfx102_request_id.json": [("PFX102", 6)],
    "pfx102_session_id.mustache": [("PFX102", 2)],
    "pfx103_locale.toml": [("PFX103", 5)],
    "pfx103_user_profile.prompt": [("PFX103", 2)],  # three values, one finding
    "pfx104_coding_agent_env.md": [("PFX104", 5)],  # cwd, git, platform, date: one
    "pfx104_git_status.yaml": [("PFX104", 6)],
    "pfx301_question_before_policy.txt": [("PFX301", 1)],
    "pfx301_swe_agent_default.yaml": [("PFX301", 43)],
    "pfx401_crlf_lines.txt": [("PFX401", 1)],
    # trailing whitespace on nine lines: one finding at the first, the rest folded into it
    "pfx402_fabric_judge_output.md": [("PFX402", 5)],
    "pfx403_invisible_characters.txt": [
        ("PFX403", 1),
        ("PFX403", 1),
        ("PFX403", 2),
        ("PFX403", 2),
    ],
    "pfx404_glued_placeholder.j2": [("PFX404", 2), ("PFX404", 3)],
}


def check_fixture(name: str, options=None) -> list[tuple[str, int]]:
    path = FIXTURES / name
    text = path.read_bytes().decode("utf-8")  # keeps CRLF and the BOM as they are
    ctx = RuleContext(str(path), CODES, options=options or {})
    found = source_module(str(path), text).check(text, ctx)
    return sorted((d.code, d.span.line) for d in found)


def test_every_fixture_has_expectations():
    assert sorted(p.name for p in FIXTURES.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_findings(name):
    assert check_fixture(name) == sorted(EXPECTED[name])


def test_trailing_whitespace_can_be_turned_off():
    off = {"PFX402": {"trailing-whitespace": False}}
    assert check_fixture("pfx402_fabric_judge_output.md", options=off) == []


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.startswith("pfx")))
def test_bad_fixture_names_say_their_codes(name):
    named = {code.upper() for code in name.split("_") if code.startswith("pfx")}
    assert {code for code, _ in EXPECTED[name]} == named
