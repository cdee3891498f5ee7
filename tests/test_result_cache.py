"""Results kept in the cache folder: hits, what invalidates them, the folder, --no-cache."""

import json

import pytest
from click.testing import CliRunner

import prefixlint
from prefixlint import registry
from prefixlint.cli import main
from prefixlint.linting import engine
from prefixlint.linting.config import Settings
from prefixlint.linting.result_cache import (
    DEFAULT_FOLDER,
    ENVIRONMENT_VARIABLE,
    ResultCache,
    cache_folder,
)
from prefixlint.types import Applicability, Edit, Fix, Span

PROMPT = "import datetime\nSYSTEM_PROMPT = f'Today is {datetime.datetime.now()}.'\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(ENVIRONMENT_VARIABLE)
    (tmp_path / "app.py").write_text(PROMPT)
    return tmp_path


@pytest.fixture
def checks(monkeypatch):
    """The paths checked for real (not answered from the cache), in order."""
    seen: list[str] = []
    real = engine._check_into

    def counting(result, source, settings, mode):
        seen.append(result.path)
        real(result, source, settings, mode)

    monkeypatch.setattr(engine, "_check_into", counting)
    return seen


def run(*args):
    return CliRunner().invoke(main, ["check", *args, "--format", "json", "--exit-zero"])


def codes(result):
    return [item["code"] for item in json.loads(result.output)]


def test_second_run_is_answered_from_the_cache(project, checks):
    first, second = run("app.py"), run("app.py")
    assert codes(first) == codes(second) == ["PFX101"]
    assert first.output == second.output
    assert checks == ["app.py"]


def test_the_folder_is_tagged_and_ignored_by_git(project):
    run("app.py")
    folder = project / DEFAULT_FOLDER
    assert (
        (folder / "CACHEDIR.TAG")
        .read_text()
        .startswith("Signature: 8a477f597d28d172789f06886806bc55")
    )
    assert (folder / ".gitignore").read_text() == "*\n"
    assert len(list((folder / prefixlint.__version__).glob("*.json"))) == 1


def test_changed_text_is_checked_again(project, checks):
    run("app.py")
    (project / "app.py").write_text(PROMPT + "# changed\n")
    assert codes(run("app.py")) == ["PFX101"]
    assert checks == ["app.py", "app.py"]


def test_changed_settings_are_checked_again(project, checks):
    assert codes(run("app.py")) == ["PFX101"]
    assert codes(run("app.py", "--ignore", "PFX101")) == []
    assert codes(run("app.py")) == ["PFX101"]
    assert checks == ["app.py", "app.py"]


def test_a_new_version_does_not_read_old_results(project, checks, monkeypatch):
    run("app.py")
    monkeypatch.setattr(prefixlint, "__version__", "99.0.0")
    run("app.py")
    assert checks == ["app.py", "app.py"]
    assert (project / DEFAULT_FOLDER / "99.0.0").is_dir()


def test_no_cache_neither_reads_nor_writes(project, checks):
    run("app.py", "--no-cache")
    run("app.py", "--no-cache")
    assert checks == ["app.py", "app.py"]
    assert not (project / DEFAULT_FOLDER).exists()


def test_fixing_never_uses_the_cache(project, checks):
    run("app.py")
    result = CliRunner().invoke(main, ["check", "app.py", "--diff", "--unsafe-fixes"])
    assert "+++ app.py" in result.output
    assert checks == ["app.py", "app.py"]


def test_cache_dir_from_the_flag_the_setting_and_the_environment(project, monkeypatch):
    run("app.py", "--cache-dir", "flagged")
    assert (project / "flagged" / "CACHEDIR.TAG").exists()
    (project / "pyproject.toml").write_text('[tool.prefixlint]\ncache-dir = "configured"\n')
    run("app.py")
    assert (project / "configured" / "CACHEDIR.TAG").exists()
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, str(project / "from-env"))
    run("app.py")
    assert (project / "from-env" / "CACHEDIR.TAG").exists()
    assert not (project / DEFAULT_FOLDER).exists()


def test_an_unreadable_entry_is_a_miss(project, checks):
    run("app.py")
    for entry in (project / DEFAULT_FOLDER / prefixlint.__version__).glob("*.json"):
        entry.write_text('[{"code": 1}]')
    assert codes(run("app.py")) == ["PFX101"]
    assert checks == ["app.py", "app.py"]


def test_diagnostics_come_back_equal_with_their_fixes(tmp_path):
    settings = Settings()
    cache = ResultCache.open(cache_folder(settings, str(tmp_path / "c")), settings)
    fix = Fix((Edit(3, 5, "x"),), Applicability.UNSAFE, "Do it")
    found = engine.check_text(PROMPT, "app.py", settings)
    found.append(
        registry.diagnostic(
            "PFX101", "m", Span("app.py", 1, 1, 1, 2), fix=fix, sink="s", unstable_tokens=4
        )
    )
    cache.put("app.py", PROMPT, found)
    back = cache.get("app.py", PROMPT)
    assert back == found
    assert [d.extra for d in back] == [d.extra for d in found]
    assert cache.get("other.py", PROMPT) is None


def test_results_that_json_would_change_are_not_kept(tmp_path):
    settings = Settings()
    cache = ResultCache.open(tmp_path / "c", settings)
    found = [registry.diagnostic("PFX101", "m", Span("a.py", 1, 1, 1, 2), pair=(1, 2))]
    cache.put("a.py", "x", found)
    assert cache.get("a.py", "x") is None


def test_the_cache_folder_is_never_checked(project):
    run("app.py")
    shown = CliRunner().invoke(main, ["check", ".", "--show-files", "--no-respect-gitignore"])
    assert DEFAULT_FOLDER not in shown.output
    assert "app.py" in shown.output


def test_worker_processes_keep_and_read_results(project):
    (project / "other.py").write_text(PROMPT.replace("SYSTEM_PROMPT", "SYSTEM_MESSAGE"))
    first = run("app.py", "other.py", "-j", "2")
    entries = sorted((project / DEFAULT_FOLDER / prefixlint.__version__).glob("*.json"))
    assert len(entries) == 2
    stamps = [entry.stat().st_mtime_ns for entry in entries]
    second = run("app.py", "other.py", "-j", "2")
    assert first.output == second.output
    assert codes(second) == ["PFX101", "PFX101"]
    assert [entry.stat().st_mtime_ns for entry in entries] == stamps


def test_without_a_project_results_are_kept_where_prefixlint_runs(tmp_path, monkeypatch):
    checked, here = tmp_path / "third_party", tmp_path / "here"
    checked.mkdir()
    here.mkdir()
    (checked / "app.py").write_text(PROMPT)
    monkeypatch.chdir(here)
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    assert codes(run(str(checked))) == ["PFX101"]
    assert not (checked / DEFAULT_FOLDER).exists()
    assert (here / DEFAULT_FOLDER / prefixlint.__version__).is_dir()
    # A project keeps them in its root.
    (checked / "pyproject.toml").write_text("[tool.prefixlint]\n")
    run(str(checked))
    assert (checked / DEFAULT_FOLDER).is_dir()
