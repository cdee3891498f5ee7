import pytest
from engine_fakes import install

from prefixlint.linting.config import Settings
from prefixlint.linting.engine import FixMode, check_text, fix_text
from prefixlint.linting.noqa import find_directives


@pytest.fixture(autouse=True)
def fake_rules(monkeypatch):
    install(monkeypatch)


def codes(text, path="p.j2"):
    return [(d.code, d.span.line) for d in check_text(text, path)]


@pytest.mark.parametrize(
    ("text", "expected"),
    (
        pytest.param("TODAY\n", [("PFX991", 1)], id="unsuppressed"),
        pytest.param("TODAY {# prefixlint: noqa: PFX991 #}\n", [], id="jinja comment"),
        pytest.param("TODAY # prefixlint: noqa: PFX991\n", [], id="hash comment"),
        pytest.param("TODAY prefixlint: noqa\n", [], id="blanket"),
        pytest.param("TODAY PREFIXLINT: NOQA\n", [], id="case-insensitive keyword"),
        pytest.param("TODAY @@ prefixlint: noqa: PFX991, PFX992\n", [], id="two codes"),
        pytest.param("TODAY @@ prefixlint: noqa: PFX991\n", [("PFX992", 1)], id="other code kept"),
        pytest.param(
            "prefixlint: noqa: PFX991\nTODAY\n",
            [("PFX901", 1), ("PFX991", 2)],
            id="directive covers its own line only",
        ),
        pytest.param("x\n{# prefixlint: noqa-file: PFX991 #}\nTODAY\nTODAY\n", [], id="file"),
        pytest.param("x\n# prefixlint: noqa-file\nTODAY\n@@\n", [], id="blanket file"),
        pytest.param("x prefixlint: noqa: PFX992\n", [("PFX901", 1)], id="unused code reported"),
        pytest.param("x prefixlint: noqa\n", [("PFX901", 1)], id="unused blanket reported"),
        pytest.param("x prefixlint: noqa: PFX992, PFX901\n", [], id="listing PFX901 silences it"),
        pytest.param("x prefixlint: noqa-file: PFX992\n", [("PFX901", 1)], id="unused file"),
    ),
)
def test_suppression(text, expected):
    assert codes(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    (
        ("x prefixlint: noqa: PFX992\n", "Unused noqa directive (unused: PFX992)"),
        ("x prefixlint: noqa: XYZ123\n", "Unused noqa directive (unknown: XYZ123)"),
        ("x prefixlint: noqa\n", "Unused blanket noqa directive"),
        ("x prefixlint: noqa-file: PFX992\n", "Unused noqa-file directive (unused: PFX992)"),
    ),
)
def test_unused_messages(text, message):
    (found,) = check_text(text, "p.j2")
    assert found.message == message


def test_non_enabled_code_is_named():
    settings = Settings(ignore=("PFX992",))
    (found,) = check_text("@@ prefixlint: noqa: PFX992\n", "p.j2", settings)
    assert found.message == "Unused noqa directive (non-enabled: PFX992)"


def test_unused_noqa_not_reported_when_disabled():
    assert check_text("x prefixlint: noqa\n", "p.j2", Settings(ignore=("PFX901",))) == []


@pytest.mark.parametrize(
    ("path", "text", "fixed", "unsafe"),
    (
        pytest.param(
            "p.j2",
            "Be brief.  {# prefixlint: noqa: PFX992 #}\n",
            "Be brief.\n",
            False,
            id="jinja comment removed",
        ),
        pytest.param(
            "p.j2",
            "{# prefixlint: noqa-file: PFX992 #}\nrest\n",
            "\nrest\n",
            False,
            id="jinja comment line keeps its newline",
        ),
        pytest.param(
            "p.py",
            "x = 1  # prefixlint: noqa: PFX992\n",
            "x = 1\n",
            False,
            id="python comment removed",
        ),
        pytest.param(
            "p.py",
            "# prefixlint: noqa-file: PFX992\nx = 1\n",
            "x = 1\n",
            False,
            id="python comment line removed",
        ),
        pytest.param(
            "p.yaml",
            "a: 1  # note  # prefixlint: noqa\n",
            "a: 1  # note\n",
            False,
            id="yaml directive after a comment",
        ),
        pytest.param(
            "p.j2",
            "TODAY {# prefixlint: noqa: PFX991, PFX992 #}\n",
            "TODAY {# prefixlint: noqa: PFX991 #}\n",
            False,
            id="unused code dropped from the list",
        ),
        pytest.param(
            "p.txt",
            "Be brief. prefixlint: noqa\n",
            "Be brief.\n",
            True,
            id="plain text directive needs unsafe",
        ),
        pytest.param(
            "p.j2",
            "Be brief. {#- prefixlint: noqa -#}\n",
            "Be brief.\n",
            True,
            id="whitespace-control comment needs unsafe",
        ),
    ),
)
def test_unused_noqa_fix(path, text, fixed, unsafe):
    settings = Settings(select=("PFX901", "PFX991"))
    safe_only = fix_text(text, path, settings, FixMode(fix=True))
    assert (safe_only.text == fixed) is not unsafe
    with_unsafe = fix_text(text, path, settings, FixMode(fix=True, unsafe=True))
    assert with_unsafe.text == fixed


def test_directive_positions():
    (directive,) = find_directives("abc {# prefixlint: noqa: PFX101,PFX102 #}\n", "p.j2")
    assert (directive.line, directive.column) == (1, 8)
    assert directive.codes == ("PFX101", "PFX102")
    assert not directive.file_level


@pytest.mark.parametrize(
    ("path", "text", "found"),
    (
        pytest.param("p.py", "x = 1  # prefixlint: noqa\n", 1, id="python comment"),
        pytest.param("p.py", 's = "prefixlint: noqa"\n', 0, id="python string"),
        pytest.param("p.py", 's = """\nprefixlint: noqa\n"""\n', 0, id="python docstring"),
        pytest.param("p.py", "x = (  # prefixlint: noqa\n", 1, id="python that does not tokenize"),
        pytest.param("p.yaml", "a: b  # prefixlint: noqa\n", 1, id="yaml comment"),
        pytest.param("p.yaml", "a: b prefixlint: noqa\n", 0, id="yaml value"),
        pytest.param("p.toml", 'a = "x {# prefixlint: noqa #}"\n', 1, id="jinja comment in toml"),
        pytest.param("p.md", "Write `prefixlint: noqa` to suppress.\n", 0, id="quoted in markdown"),
        pytest.param("p.txt", "Be brief. prefixlint: noqa\n", 1, id="plain text"),
    ),
)
def test_where_directives_count(path, text, found):
    assert len(find_directives(text, path)) == found
