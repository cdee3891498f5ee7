import json

import pytest
from click.testing import CliRunner
from engine_fakes import install

from prefixlint import sources, textio
from prefixlint.cli import main


@pytest.fixture(autouse=True)
def fake_rules(monkeypatch):
    install(monkeypatch)
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "clean.txt").write_text("all good\n")
    (tmp_path / "dirty.txt").write_text("spaces  \nTODAY\n")
    return tmp_path


def run(*args, stdin=None):
    return CliRunner().invoke(main, list(args), input=stdin)


@pytest.mark.parametrize(
    ("args", "code"),
    (
        pytest.param(["check", "clean.txt"], 0, id="clean"),
        pytest.param(["check", "."], 1, id="findings"),
        pytest.param(["check", ".", "--exit-zero"], 0, id="exit-zero"),
        pytest.param(["check", "missing.txt"], 2, id="missing path"),
        pytest.param(["check", ".", "--select", "NOPE"], 2, id="unknown selector"),
        pytest.param(["check", ".", "--format", "xml"], 2, id="bad format"),
        pytest.param(["check", "--bogus"], 2, id="unknown option"),
        pytest.param(["check", ".", "--tokenizer", "nope"], 2, id="bad tokenizer"),
        pytest.param(["check", ".", "--ignore", "PFX990,PFX991"], 0, id="ignored"),
        pytest.param(["check", ".", "--select", "PFX990", "--fix"], 0, id="all fixed"),
        pytest.param(["check", ".", "--fix"], 1, id="unsafe left"),
        pytest.param(["fix", ".", "--unsafe-fixes"], 0, id="fix command"),
        pytest.param(["check", ".", "--diff"], 1, id="diff with changes"),
        pytest.param(["check", "clean.txt", "--diff"], 0, id="diff without changes"),
    ),
)
def test_exit_codes(project, args, code):
    result = run(*args)
    assert result.exit_code == code, result.output


def test_errors_are_one_line_without_traceback(project):
    result = run("check", ".", "--tokenizer", "nope")
    assert result.stderr.startswith("Error: unknown tokenizer 'nope'")
    assert "Traceback" not in result.output
    result = run("check", "missing.txt", "clean.txt")
    assert result.stderr == "error: missing.txt: no such file or directory\n"
    # A run that could not check every path never claims that all checks passed.
    assert result.stdout == "No findings, but 1 path could not be checked.\n"


def test_bad_config_exits_2(project):
    (project / "pyproject.toml").write_text("[tool.prefixlint]\nselekt = []\n")
    result = run("check", ".")
    assert result.exit_code == 2
    assert f"{project / 'pyproject.toml'}: unknown key 'selekt'" in result.stderr


def test_config_is_used_and_cli_overrides_it(project):
    (project / "pyproject.toml").write_text('[tool.prefixlint]\nselect = ["PFX991"]\n')
    assert run("check", ".", "--format", "concise").stdout.splitlines()[0] == (
        "dirty.txt:2:1: PFX991 found 'TODAY'"
    )
    result = run("check", ".", "--format", "concise", "--select", "PFX990")
    assert result.stdout.splitlines()[0] == "dirty.txt:1:7: PFX990 [*] found '  '"


def test_cli_select_runs_a_code_the_config_ignores(project):
    (project / "pyproject.toml").write_text('[tool.prefixlint]\nignore = ["PFX990"]\n')
    assert "PFX990" not in run("check", ".", "--format", "concise").stdout
    result = run("check", ".", "--format", "concise", "--select", "PFX990")
    assert result.stdout.splitlines()[0] == "dirty.txt:1:7: PFX990 [*] found '  '"
    assert "PFX991" not in result.stdout
    extended = run("check", ".", "--format", "concise", "--extend-select", "PFX990")
    assert {line.split()[1] for line in extended.stdout.splitlines()[:2]} == {"PFX990", "PFX991"}


def test_explicit_config_file(project, tmp_path_factory):
    other = tmp_path_factory.mktemp("cfg") / "pyproject.toml"
    other.write_text('[tool.prefixlint]\nignore = ["PFX99"]\n')
    assert run("check", ".", "--config", str(other)).exit_code == 0


def test_concise_output(project):
    result = run("check", ".", "--format", "concise")
    assert result.stdout == (
        "dirty.txt:1:7: PFX990 [*] found '  '\n"
        "dirty.txt:2:1: PFX991 found 'TODAY'\n"
        "Found 2 findings.\n"
        "[*] 1 fixable with the `--fix` option.\n"
        "1 hidden fix can be enabled with the `--unsafe-fixes` option.\n"
    )


def test_full_output(project):
    result = run("check", "dirty.txt")
    assert result.stdout.splitlines()[:6] == [
        "dirty.txt",
        "PFX990 [*] found '  ' (fake-rule-0)",
        " --> dirty.txt:1:7",
        "  |",
        "1 | spaces  ",
        "  |       ^^",
    ]
    assert "  = fix (unsafe, applied with --unsafe-fixes): fix PFX991" in result.stdout
    assert "\x1b[" not in result.stdout


def test_fix_writes_and_reports(project):
    result = run("check", ".", "--fix", "--format", "concise")
    assert (project / "dirty.txt").read_text() == "spaces\nTODAY\n"
    assert result.stdout.splitlines()[-2:] == [
        "Found 2 findings (1 fixed, 1 remaining).",
        "1 hidden fix can be enabled with the `--unsafe-fixes` option.",
    ]


def test_diff(project):
    result = run("check", ".", "--diff", "--unsafe-fixes")
    assert result.stdout == (
        "--- dirty.txt\n+++ dirty.txt\n@@ -1,2 +1,2 @@\n-spaces  \n-TODAY\n+spaces\n+\n"
    )
    assert (project / "dirty.txt").read_text() == "spaces  \nTODAY\n"


def test_stdin(project):
    result = run("check", "-", "--stdin-filename", "x.txt", "--format", "concise", stdin="a \n")
    assert result.exit_code == 1
    assert result.stdout.startswith("x.txt:1:2: PFX990")
    result = run("check", "-", "--fix", stdin="a \n")
    assert result.stdout == "a\n"
    assert result.exit_code == 0
    result = run("check", "-", stdin=b"\x00")
    assert "PFX902" in result.stdout


def test_stdin_filename_alone_reads_stdin(project):
    result = run("check", "--stdin-filename", "x.txt", "--format", "concise", stdin="a \n")
    assert result.exit_code == 1
    assert result.stdout.startswith("x.txt:1:2: PFX990")
    assert "dirty.txt" not in result.stdout


def test_output_format_is_an_alias_of_format(project):
    assert (
        run("check", ".", "--output-format", "json").stdout
        == run("check", ".", "--format", "json").stdout
    )


def test_quiet_prints_the_findings_only(project):
    (project / "image.png").write_bytes(b"\x89PNG")
    result = run("check", ".", "--format", "concise", "-q")
    assert result.exit_code == 1
    assert result.stdout == (
        "dirty.txt:1:7: PFX990 [*] found '  '\ndirty.txt:2:1: PFX991 found 'TODAY'\n"
    )
    assert result.stderr == ""
    clean = run("check", "clean.txt", "--quiet")
    assert (clean.exit_code, clean.stdout, clean.stderr) == (0, "", "")


def test_show_files_lists_what_would_be_checked(project):
    (project / "pyproject.toml").write_text('[tool.prefixlint]\nexclude = ["c*", "*.toml"]\n')
    result = run("check", ".", "--show-files")
    assert (result.exit_code, result.stdout) == (0, "dirty.txt\n")
    assert (project / "dirty.txt").read_text() == "spaces  \nTODAY\n"
    assert run("check", "missing.txt", "--show-files").exit_code == 2


def test_unfixable_codes_are_reported_but_not_fixed(project):
    result = run("check", ".", "--fix", "--unfixable", "PFX99", "--format", "concise")
    assert (project / "dirty.txt").read_text() == "spaces  \nTODAY\n"
    assert "[*]" not in result.stdout
    (project / "pyproject.toml").write_text('[tool.prefixlint]\nunfixable = ["PFX990"]\n')
    concise = run("check", ".", "--format", "concise").stdout
    assert "PFX990 found" in concise and "fixable with the `--fix` option" not in concise
    (project / "pyproject.toml").write_text('[tool.prefixlint]\nfixable = ["PFX990"]\n')
    run("check", ".", "--fix", "--unsafe-fixes")
    assert (project / "dirty.txt").read_text() == "spaces\nTODAY\n"
    (project / "pyproject.toml").write_text('[tool.prefixlint]\nunfixable = ["PFX99"]\n')
    run("check", ".", "--fix", "--unsafe-fixes", "--fixable", "PFX991")
    assert (project / "dirty.txt").read_text() == "spaces\n\n"


def test_statistics(project):
    (project / "more.txt").write_text("x \ny \n")
    result = run("check", ".", "--statistics")
    assert result.stdout == "3\tPFX990\t[*] fake-rule-0\n1\tPFX991\t    fake-rule-1\n"
    rows = json.loads(run("check", ".", "--statistics", "--format", "json").stdout)
    assert rows[0] == {"code": "PFX990", "name": "fake-rule-0", "count": 3, "fixable": True}


def test_output_file(project):
    result = run("check", ".", "--format", "json", "--output-file", "out.json")
    assert result.stdout == ""
    assert [d["code"] for d in json.loads((project / "out.json").read_text())] == [
        "PFX990",
        "PFX991",
    ]


def test_jobs_gives_the_same_results_as_serial(project):
    # Worker processes do not see the fake rules, so use engine-level findings only.
    for index in range(4):
        (project / f"n{index}.txt").write_text(f"x prefixlint: noqa: PFX10{index}\n")
    (project / "bin.txt").write_bytes(b"\x00")
    serial = run("check", ".", "--select", "PFX901,PFX902", "--format", "json")
    assert len(json.loads(serial.stdout)) == 5
    for jobs in ("3", "0"):  # 0: one per core
        parallel = run("check", ".", "--select", "PFX901,PFX902", "--format", "json", "-j", jobs)
        assert parallel.exit_code == serial.exit_code == 1
        assert json.loads(parallel.stdout) == json.loads(serial.stdout)


def test_stdin_over_the_size_limit(project, monkeypatch):
    monkeypatch.setattr(textio, "MAX_FILE_BYTES", 8)
    result = run("check", "-", "--format", "concise", stdin="0123456789")
    assert result.exit_code == 1
    assert "stdin.txt:1:1: PFX902 input is over the" in result.stdout


def test_files_without_a_checker_are_named_once(project, monkeypatch):
    def no_checker(path, text):
        raise ValueError(path)

    monkeypatch.setattr(sources, "source_module", no_checker)
    result = run("check", ".")
    assert result.exit_code == 0
    assert result.stderr == (
        "warning: not checked, no checker for these kinds of file: clean.txt, dirty.txt\n"
    )


def test_nothing_to_check_is_said(project):
    (project / "empty").mkdir()
    result = run("check", "empty")
    assert result.exit_code == 0
    assert result.stderr == "warning: no files to check under the given paths\n"
