"""The template rules, table by table: findings (code, line, column) and fixes."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prefixlint.context import RuleContext, SourceError
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import check_text
from prefixlint.linting.fixer import apply_edits
from prefixlint.sources import source_module
from prefixlint.types import Applicability

TRAILING_ON = {"PFX402": {"trailing-whitespace": True}}  # as by default

CODES = frozenset(
    {"PFX101", "PFX102", "PFX103", "PFX104", "PFX301", "PFX401", "PFX402", "PFX403", "PFX404"}
)


def check(path, text, codes=CODES, options=None):
    ctx = RuleContext(path, frozenset(codes), options={**TRAILING_ON, **(options or {})})
    return source_module(path, text).check(text, ctx)


def findings(path, text, codes=CODES, options=None):
    return sorted((d.code, d.span.line, d.span.column) for d in check(path, text, codes, options))


def fix(path, text, codes=CODES, unsafe=False):
    """``text`` after applying fixes until nothing changes (at most ten passes)."""
    allowed = {Applicability.SAFE} | ({Applicability.UNSAFE} if unsafe else set())
    for _ in range(10):
        fixes = [d.fix for d in check(path, text, codes) if d.fix]
        new, applied = apply_edits(text, [f for f in fixes if f.applicability in allowed])
        if not applied or new == text:
            return text
        text = new
    raise AssertionError("fixes did not settle")


VOLATILE = ("PFX101", "PFX102", "PFX103", "PFX104")


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # PFX101: names, calls, filters, pasted current dates
        ("s.j2", "Date: {{ current_date }}\nRules.\n", [("PFX101", 1, 7)]),
        ("s.j2", "At {{ now() }}.\nRules.\n", [("PFX101", 1, 4)]),
        ("s.j2", "At {{ created | date }}.\nRules.\n", [("PFX101", 1, 4)]),
        ("s.j2", "{{ strftime_now('%Y') }}\nRules.\n", [("PFX101", 1, 1)]),
        ("s.txt", "Today's date is 2026-11-29.\nRules.\n", [("PFX101", 1, 17)]),
        ("s.txt", "Current time: 14:03:22\nRules.\n", [("PFX101", 1, 15)]),
        ("s.txt", "Timestamp: 1764412262\nRules.\n", [("PFX101", 1, 12)]),
        ("s.txt", "Today is Sunday, November 29, 2026.\nRules.\n", [("PFX101", 1, 10)]),
        ("s.txt", "Founded in 2019, version 2.4.1, call 555-0100.\nRules.\n", []),
        ("s.txt", "Released 2024-05-01. Knowledge cutoff: 2024-06.\nRules.\n", []),
        ("s.txt", "Example log line: 2026-11-29T10:00:00Z started\nRules.\n", []),
        ("s.j2", "Rules.\nDate: {{ current_date }}\n", []),
        ("s.j2", "Rules.\nDate: {{ current_date }}\nId: {{ request_id }}\n", []),
        ("s.j2", "Rules.\n{{ question }}\nDate: {{ today }}\nMore.\n", []),
        ("s.txt", "Rules.\n# INPUT\nDate: {today}\nMore.\n", []),
        ("s.j2", "Max time {{ time_limit }} and {{ timeout }}.\nRules.\n", []),
        # PFX102-PFX104
        ("s.j2", "Trace {{ trace_id }}\nRules.\n", [("PFX102", 1, 7)]),
        ("s.txt", "Id {uuid}\nRules.\n", [("PFX102", 1, 4)]),
        ("s.j2", "Doc {{ document_id }}\nRules.\n", []),
        ("s.j2", "Hi {{ user.name }}\nRules.\n", [("PFX103", 1, 4)]),
        ("s.txt", "Mail {email}\nRules.\n", [("PFX103", 1, 6)]),
        ("s.j2", "Mail {{ support_email }}\nRules.\n", []),
        ("s.j2", "In {{ cwd }}\nRules.\n", [("PFX104", 1, 4)]),
        ("s.mustache", "On {{git_branch}}\nRules.\n", [("PFX104", 1, 4)]),
        ("s.txt", "Host ${hostname}\nRules.\n", [("PFX104", 1, 6)]),
    ],
)
def test_volatile_findings(path, text, expected):
    assert findings(path, text, VOLATILE) == expected


def test_volatile_message_counts_tokens():
    (finding,) = check("s.j2", "Intro.\nDate: {{ today }}\nRule one. Rule two.\n", VOLATILE)
    assert finding.stable_prefix_tokens == 4
    assert finding.unstable_tokens == 6
    assert "6 static tokens after it" in finding.message


def test_extra_volatile_names_option():
    text = "Tenant {{ tenant_slug }}\nRules.\n"
    assert findings("s.j2", text, VOLATILE) == []
    options = {"PFX103": {"extra-volatile-names": ["tenant_slug"]}}
    assert findings("s.j2", text, VOLATILE, options) == [("PFX103", 1, 8)]


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        (
            "s.j2",
            "Intro.\nDate: {{ today }}\nRules.\n",
            "Intro.\nRules.\nDate: {{ today }}\n",
        ),
        (
            "s.j2",
            "Intro.\nDate: {{ today }}\nRules.",
            "Intro.\nRules.\nDate: {{ today }}",
        ),
        (
            "s.j2",
            "{% if d %}\nDate: {{ d.date }}\n{% endif %}\nRules.\n",
            "Rules.\n{% if d %}\nDate: {{ d.date }}\n{% endif %}\n",
        ),
        (
            "s.txt",
            "Id {request_id}\nUser {user_id}\nRules.\n# INPUT\n{input}\n",
            "Rules.\nId {request_id}\nUser {user_id}\n# INPUT\n{input}\n",
        ),
        (
            "s.j2",
            "{% for h in hosts %}\n{{ h.hostname }}\n{% endfor %}\nRules.\n",
            "{% for h in hosts %}\n{{ h.hostname }}\n{% endfor %}\nRules.\n",
        ),
        (
            "s.yaml",
            "system: |\n  Intro.\n  Id {{ session_id }}\n  Rules.\nuser: x\n",
            "system: |\n  Intro.\n  Rules.\n  Id {{ session_id }}\nuser: x\n",
        ),
        (
            "s.json",
            '{"system": "Id {{ session_id }}\\nRules.\\n"}',
            '{"system": "Rules.\\nId {{ session_id }}\\n"}',
        ),
        (
            "s.yaml",
            "system: 'Id {{ session_id }}\n\n  Rules.'\n",
            "system: 'Id {{ session_id }}\n\n  Rules.'\n",
        ),
    ],
)
def test_volatile_unsafe_fix_moves_the_line(path, text, expected):
    assert fix(path, text, VOLATILE, unsafe=True) == expected
    assert fix(path, text, VOLATILE) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Question: {question}\n" + "Static rule. " * 200, [("PFX301", 1, 11)]),
        ("Question: {question}\n" + "Static rule. " * 20, []),
        ("Static rule. " * 200 + "\nQuestion: {question}\n", []),
        ("Tools: {tools}\n" + "Static rule. " * 200, []),
        ("Q {question} then {query}\n" + "Static rule. " * 200, [("PFX301", 1, 3)]),
    ],
)
def test_variable_before_static_block(text, expected):
    assert findings("p.txt", text, {"PFX301"}) == expected


def test_variable_before_static_block_threshold_option():
    text = "Question: {question}\n" + "Static rule. " * 20
    options = {"PFX301": {"template-min-static-tokens": 10}}
    assert findings("p.txt", text, {"PFX301"}, options) == [("PFX301", 1, 11)]


@pytest.mark.parametrize(
    ("text", "expected", "fixed"),
    [
        ("a\r\nb\r\n", [("PFX401", 1, 2)], "a\nb\n"),
        ("a\nb\r\nc\rd\n", [("PFX401", 2, 2)], "a\nb\nc\nd\n"),
        ("a\nb\n", [], "a\nb\n"),
    ],
)
def test_line_endings(text, expected, fixed):
    assert findings("p.txt", text, {"PFX401"}) == expected
    assert fix("p.txt", text, {"PFX401"}) == fixed


def test_line_endings_in_a_json_string_are_rewritten_as_escapes():
    text = '{"system": "a\\r\\nb"}'
    assert findings("p.json", text, {"PFX401"}) == [("PFX401", 1, 14)]
    assert fix("p.json", text, {"PFX401"}) == '{"system": "a\\nb"}'


@pytest.mark.parametrize(
    ("text", "expected", "fixed"),
    [
        ("a \nb\t\n", [("PFX402", 1, 2)], "a\nb\n"),  # one finding, both lines fixed
        ("a \t\r\nb", [("PFX402", 1, 2)], "a\r\nb"),
        ("{{ x }} \n", [("PFX402", 1, 8)], "{{ x }}\n"),
        ("a\nb\n", [], "a\nb\n"),
        (
            "T.\n\n# A\nx\n\n# B\ny\n\n\n# C\nz\n\n# D\n",
            [("PFX402", 10, 1)],
            "T.\n\n# A\nx\n\n# B\ny\n\n\n# C\nz\n\n# D\n",
        ),
        ("T.\n# A\nx\n\n# B\ny\n\n\n# C\nz\n", [], "T.\n# A\nx\n\n# B\ny\n\n\n# C\nz\n"),
    ],
)
def test_whitespace_drift(text, expected, fixed):
    assert findings("p.md", text, {"PFX402"}) == expected
    assert fix("p.md", text, {"PFX402"}) == fixed


SECTIONS = "".join(f"\n## S{n}\nText {n}.\n" for n in range(8))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # two sections of one kind break the convention: one finding, the second folded in
        ("T.\n" + SECTIONS + "## X\nx\n## Y\ny\n", [("PFX402", 26, 1, (28,))]),
        # breaks of two kinds are a finding each
        (
            "T.\n" + SECTIONS + "## X\nx\n\n<A>\n\n<A>\n\n<A>\n\n<A>\n<A>\n",
            [("PFX402", 26, 1, ()), ("PFX402", 36, 1, ())],
        ),
        # quiet counterpart: every section keeps the convention
        ("T.\n" + SECTIONS, []),
    ],
)
def test_separator_drift_folds_one_kind(text, expected):
    ctx = RuleContext("p.md", frozenset({"PFX402"}), options=TRAILING_ON)
    found = source_module("p.md", text).check(text, ctx)
    assert [
        (d.code, d.span.line, d.span.column, tuple(d.extra["folded_lines"])) for d in found
    ] == expected


PARAGRAPHS = "Intro line.\n\nTone\nWarm.\n\nFacts\nOnly facts.\n\nScope\nOrders only.\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a template without headings is cut into paragraphs; a title after an extra blank
        # line breaks the convention
        (PARAGRAPHS + "\n\nRules:\n- Be brief.\n", [("PFX402", 13, 1)]),
        (PARAGRAPHS.replace("\n\nFacts", "\n\n\nFacts"), [("PFX402", 7, 1)]),
        # a loop tag line renders nothing: the blank lines around it are one gap
        (
            "Intro.\n\nTeam:\n{% for a in xs %}\n- {{ a }}\n{% endfor %}\n\n\nRules:\nx\n"
            "\n{{ goal }}\n",
            [("PFX402", 9, 1)],
        ),
        # quiet: every paragraph keeps the convention, the extra gap is before prose or
        # before a label an example repeats, or there are too few paragraphs
        (PARAGRAPHS + "\nRules:\n- Be brief.\n", []),
        (PARAGRAPHS + "\n\nThen answer the question in full sentences.\n", []),
        ("Intro.\n\nAction:\nx\n\nAction:\ny\n\nAction:\nz\n\n\nAction:\nw\n", []),
        ("Intro.\n\nTone\nWarm.\n\n\nRules:\nx\n", []),
    ],
)
def test_paragraph_drift(text, expected):
    assert findings("p.txt", text, {"PFX402"}) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # every line ending in the same whitespace is the file's style
        ("".join(f"Line {n}. \n" for n in range(6)), []),
        ("".join(f"Line {n}.\t\n" for n in range(6)) + "\n", []),
        # one line without it, mixed endings, or a short file: reported
        ("".join(f"Line {n}. \n" for n in range(6)) + "End.\n", [("PFX402", 1, 8)]),
        ("".join(f"Line {n}. \n" for n in range(5)) + "Line 5.  \n", [("PFX402", 1, 8)]),
        ("".join(f"Line {n}. \n" for n in range(3)), [("PFX402", 1, 8)]),
    ],
)
def test_trailing_whitespace_on_every_line_is_a_style(text, expected):
    assert findings("p.txt", text, {"PFX402"}) == expected


@pytest.mark.parametrize(
    ("text", "expected", "fixed"),
    [
        ("\ufeffHello\n", [("PFX403", 1, 1)], "Hello\n"),
        ("a\u00a0b\u200bc\n", [("PFX403", 1, 2), ("PFX403", 1, 4)], "a bc\n"),
        ("Cafe\u0301\n", [("PFX403", 1, 4)], "Café\n"),
        # one character written many times is one finding, fixed everywhere
        ("a\u00a0b\u00a0c\nd\u00a0e\n\nf\u00a0g\n", [("PFX403", 1, 2)], "a b c\nd e\n\nf g\n"),
        ("a\u200bb\n\u00a0c\u200b\n", [("PFX403", 1, 2), ("PFX403", 2, 1)], "ab\n c\n"),
        ("👩\u200d💻 and \u0645\u200c\u06cc\n", [], "👩\u200d💻 and \u0645\u200c\u06cc\n"),
        ("plain ascii\n", [], "plain ascii\n"),
    ],
)
def test_invisible_characters(text, expected, fixed):
    assert findings("p.txt", text, {"PFX403"}) == expected
    assert fix("p.txt", text, {"PFX403"}) == fixed


@pytest.mark.parametrize(
    ("text", "fixed"),
    [
        # two characters removed together between ``{`` and ``#`` would open a comment
        ("{\ufeff\ufeff# Head\n", "{\ufeff\ufeff# Head\n"),
        ("{\u200b\u200b{ x\n", "{\u200b\u200b{ x\n"),
        # apart from a delimiter they are removed as usual
        ("a\ufeff\ufeffb\n", "ab\n"),
    ],
)
def test_invisible_characters_that_keep_delimiters_apart_stay(text, fixed):
    assert fix("p.j2", text, {"PFX403"}) == fixed


def test_invisible_character_folds_its_later_lines_and_names_them():
    ctx = RuleContext("p.txt", frozenset({"PFX403"}))
    text = "a\u00a0b\nc\u00a0d\u00a0e\nf\u00a0g\n"
    (found,) = source_module("p.txt", text).check(text, ctx)
    assert found.extra["folded_lines"] == [2, 3]
    assert "4 times in the file; and on 2 more lines after it (2, 3)" in found.message
    assert found.fix is not None
    assert found.fix.message == "Write a plain space for the no-break spaces (U+00A0)"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("List {{ kind }}s now.\n", [("PFX404", 1, 6)]),
        ("Log in as user{{ suffix }} now.\n", [("PFX404", 1, 15)]),
        ("List {{ kind }} now.\n", []),
        ("Ticket ({{ id }}).\n", []),
        ("End {{ x }}.\n", []),
        ("Then the {{ status }}ed ones.\n", []),
        # the same seam again is folded into the first; another seam is its own finding
        ("A: n={{ c }}\nB: n={{ c }}\nC: n={{ c }}\n", [("PFX404", 1, 6)]),
        ("A: n={{ c }}\nB: k={{ c }}\n", [("PFX404", 1, 6), ("PFX404", 2, 6)]),
        ("A: n={{ c }}\nB: n={{ d }}\n", [("PFX404", 1, 6), ("PFX404", 2, 6)]),
    ],
)
def test_glued_placeholder(text, expected):
    assert findings("p.j2", text, {"PFX404"}) == expected


def test_glued_placeholder_names_the_lines_it_folds():
    (finding,) = check("p.j2", "A: n={{ c }}\nB: n={{ c }}\nC: n={{ c }}\n", {"PFX404"})
    assert finding.extra["folded_lines"] == [2, 3]
    assert finding.message.endswith("; and on 2 more lines after it (2, 3)")


def test_glued_placeholder_message_shows_both_tokenizations():
    (finding,) = check("p.j2", "List {{ kind }}s now.\n", {"PFX404"})
    assert "`values`, not `value|s`" in finding.message


def test_findings_in_a_yaml_block_point_at_the_file():
    text = "name: x\nsystem_prompt: |\n  Hello.\n  Hi {{ user.name }}\n  Rules.   \n"
    assert findings("p.yaml", text) == [("PFX103", 4, 6), ("PFX402", 5, 9)]


PIECES = st.sampled_from(
    [
        "Rules. ",
        "\n",
        "\r\n",
        "\r",
        "  ",
        "\t",
        "\n\n",
        "# Head\n",
        "<TAG>\n",
        "{{ today }}",
        "{{ user.name }}",
        "{request_id}",
        "{{ cwd }}",
        "{% if x %}",
        "{% endif %}",
        "\ufeff",
        "\u00a0",
        "\u200b",
        "e\u0301",
        "{{ kind }}s",
        "Today's date is 2026-11-29",
        "{",
        "}",
        "{{",
        "%}",
        "Question: {{ question }}",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=14), st.sampled_from(["p.txt", "p.j2", "p.md", "p.mustache"]))
def test_fixes_never_raise_and_are_idempotent(pieces, path):
    text = "".join(pieces)
    try:
        check(path, text)
    except SourceError:
        return  # not a template: reported as PFX902, nothing to fix
    once = fix(path, text, unsafe=True)
    assert fix(path, once, unsafe=True) == once


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PIECES, max_size=10))
def test_yaml_fixes_keep_the_file_valid(pieces):
    import yaml

    body = "".join(pieces).replace("\r", "")
    lines = ["  " + line if line.strip() else "" for line in body.split("\n")]
    text = "system: |\n" + "\n".join(lines) + "\nother: 1\n"
    try:
        before = yaml.safe_load(text)
    except yaml.YAMLError:
        return
    after_text = fix("p.yaml", text, unsafe=True)
    after = yaml.safe_load(after_text)
    assert after["other"] == before["other"] == 1
    assert fix("p.yaml", after_text, unsafe=True) == after_text


@pytest.mark.parametrize(
    ("body", "kept_nbsp"),
    [
        # removing the marks leaves "  " before the no-break space: a space there would indent
        # a blank line deeper than the block, which YAML rejects; the space fix is withheld
        ("  {{ today }}\n  \ufeff\ufeff\n  \ufeff\ufeff\xa0\n", True),
        # quiet counterpart: after text, the no-break space becomes a plain space
        ("  {{ today }}\n  a\xa0b\n", False),
    ],
)
def test_yaml_fixes_never_indent_a_blank_line(body, kept_nbsp):
    import yaml

    text = "system: |\n" + body + "other: 1\n"
    after = fix("p.yaml", text, unsafe=True)
    assert yaml.safe_load(after)["other"] == 1
    assert ("\xa0" in after) == kept_nbsp
    assert after.index("{{ today }}") > after.index("system: |\n") + 12  # the date moved


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        # trailing whitespace that editors strip: one warning per file, at its first line
        ("p.txt", "Rules: \nBe brief.\t\n", [("PFX402", 1)]),
        ("p.yaml", "system: |\n  Rules:  \n  Answer briefly.\n", [("PFX402", 2)]),
        ("p.j2", "{%- if x %} \nRules.\n{%- endif %} \n", [("PFX402", 1)]),
        # Markdown hard breaks are written on purpose
        ("p.md", "Rules:  \nBe brief.\n", []),
        # a separator that breaks the file's convention is still reported
        ("p.md", "T.\n\n# A\nx\n\n# B\ny\n# C\nz\n\n# D\nw\n", [("PFX402", 8)]),
    ],
)
def test_whitespace_defaults(path, text, expected):
    found = check_text(text, path, Settings(select=("PFX402",)))
    assert [(d.code, d.span.line) for d in found] == expected
