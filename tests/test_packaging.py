"""The wheel holds the whole package and the rule files, and works installed on its own."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(out), str(REPO_ROOT)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    (built,) = out.glob("prefixlint-*.whl")
    return built


def test_wheel_holds_every_module_and_rule_file(wheel):
    import prefixlint

    names = set(zipfile.ZipFile(wheel).namelist())
    assert wheel.name.startswith(f"prefixlint-{prefixlint.__version__}-")
    package = REPO_ROOT / "prefixlint"
    modules = {p.relative_to(REPO_ROOT).as_posix() for p in package.rglob("*.py")}
    assert modules <= names
    rules = {f"prefixlint/_rules/{p.name}" for p in (REPO_ROOT / "rules").glob("PFX*.toml")}
    assert rules and rules <= names
    assert not {n for n in names if n.startswith(("tests/", "fixtures/", "bench/"))}


def test_installed_wheel_documents_its_rules(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
         str(wheel)],
        check=True,
        capture_output=True,
    )  # fmt: skip
    code = (
        "import prefixlint.registry as r, prefixlint;"
        "print(r.rules_dir().name, len(r.rule_docs()), prefixlint.__version__)"
    )
    shown = subprocess.run(
        [sys.executable, "-I", "-c", f"import sys; sys.path.insert(0, {str(target)!r}); {code}"],
        check=True,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    import prefixlint
    from prefixlint import registry

    assert shown.stdout.split() == [
        "_rules",
        str(len(registry.rule_docs())),
        prefixlint.__version__,
    ]
