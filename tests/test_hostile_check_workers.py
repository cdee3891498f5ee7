"""``check -j N`` never imports code from the checked tree; a dying worker costs one file."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

import pytest
from hostile_cli import PACKAGE_HOME, run_cli

import prefixlint
from prefixlint.linting import workers
from prefixlint.linting.workers import chunk_size, map_isolated, worker_sys_path

STDLIB_NAMES = [
    "types",
    "enum",
    "re",
    "signal",
    "struct",
    "pickle",
    "threading",
    "weakref",
    "copyreg",
    "functools",
    "collections",
    "operator",
    "keyword",
    "reprlib",
    "heapq",
    "itertools",
    "selectors",
    "queue",
    "traceback",
    "linecache",
    "tokenize",
    "warnings",
    "difflib",
    "json",
    "typing",
    "contextlib",
    "dataclasses",
    "inspect",
    "ast",
    "textwrap",
    "fnmatch",
    "string",
]


def _hostile_tree(root: Path, markers: Path) -> Path:
    tree = root / "tree"
    tree.mkdir()
    for name in STDLIB_NAMES:
        marker = markers / f"imported-{name}"
        (tree / f"{name}.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    for index in range(4):
        (tree / f"prompt{index}.txt").write_text(f"Hello {{{{ name{index} }}}}\n")
    return tree


@pytest.mark.parametrize("jobs", ["1", "2", "4"])
def test_check_with_jobs_imports_nothing_from_the_checked_folder(tmp_path, jobs):
    markers = tmp_path / "markers"
    markers.mkdir()
    tree = _hostile_tree(tmp_path, markers)
    done = run_cli(["check", "-j", jobs, "."], cwd=tree, launcher_dir=tmp_path / "bin")
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in markers.iterdir()) == []


def test_worker_path_drops_the_current_folder_and_the_avoided_ones(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.setattr(sys, "path", ["", str(tmp_path), str(other), *sys.path])
    path = worker_sys_path([str(other)])
    assert "" not in path
    assert str(tmp_path) not in path
    assert str(other) not in path
    assert any(Path(entry, "prefixlint").is_dir() for entry in path)


def test_worker_path_keeps_an_avoided_folder_of_installed_packages(tmp_path, monkeypatch):
    # checking site-packages itself: its packages are the workers' dependencies
    monkeypatch.chdir(tmp_path)
    stdlib = sysconfig.get_path("stdlib")
    installed = tmp_path / "site-packages"
    installed.mkdir()
    monkeypatch.setattr(sys, "path", ["", str(installed), stdlib, str(installed)])
    path = worker_sys_path([str(installed)])
    assert path.index(stdlib) < path.index(str(installed))
    assert path.count(str(installed)) == 1


def test_worker_path_keeps_this_prefixlint_ahead_of_installed_packages(tmp_path, monkeypatch):
    home = str(Path(prefixlint.__file__).resolve().parent.parent)
    monkeypatch.chdir(home)
    stdlib = sysconfig.get_path("stdlib")
    installed = str(tmp_path / "site-packages")
    monkeypatch.setattr(sys, "path", ["", home, stdlib, installed])
    assert worker_sys_path([]) == [stdlib, home, installed]


def test_a_dying_worker_costs_only_its_own_item():
    items = ["1 + 1", "__import__('os')._exit(9)", "2 * 3", "4", "5"]
    assert map_isolated(eval, items, 2, lambda item: "crashed") == [2, "crashed", 6, 4, 5]


def test_a_dying_worker_in_a_chunk_costs_only_its_own_item():
    # Forty items go in chunks of two; the crash takes its chunk and the others in flight.
    items = [str(n) for n in range(40)]
    items[13] = "__import__('os')._exit(9)"
    expected = [n if n != 13 else "crashed" for n in range(40)]
    assert chunk_size(len(items), 2) == 2
    assert map_isolated(eval, items, 2, lambda item: "crashed") == expected


def test_the_default_is_one_worker_per_500_files_and_at_most_one_per_core(monkeypatch):
    monkeypatch.setattr(workers, "usable_cores", lambda: 4)
    assert [workers.default_workers(n) for n in (0, 5, 999, 1000, 1500, 100_000)] == [
        1, 1, 1, 2, 3, 4,
    ]  # fmt: skip
    monkeypatch.setattr(workers, "usable_cores", lambda: 1)
    assert workers.default_workers(100_000) == 1


def test_chunks_are_a_few_per_worker_and_bounded():
    assert chunk_size(3, 2) == 1
    assert chunk_size(160, 2) == 10
    assert chunk_size(100_000, 2) == 32


def test_exceptions_of_the_function_propagate():
    with pytest.raises(ZeroDivisionError):
        map_isolated(eval, ["1", "1 / 0"], 2, lambda item: "crashed")


def test_environment_is_restored_after_the_run():
    before_path, before_flag = sys.path[:], os.environ.get("PYTHONSAFEPATH")
    map_isolated(eval, ["1", "2"], 2, lambda item: None)
    assert sys.path == before_path
    assert os.environ.get("PYTHONSAFEPATH") == before_flag


def test_workers_work_in_the_callers_folder_without_importing_from_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "types.py").write_text("import os\nos._exit(3)\n")  # would kill the worker
    items = [
        "__import__('os').getcwd()",
        "__import__('sys').flags.safe_path or __import__('os').environ['PYTHONSAFEPATH']",
    ]
    working_in, safe = map_isolated(eval, items, 1, lambda item: "crashed")
    assert working_in == str(tmp_path)
    assert safe
    assert os.getcwd() == str(tmp_path)


def test_workers_import_the_same_prefixlint_as_the_command(tmp_path):
    """``PYTHONPATH=.`` in a checkout: the workers must not fall back to an installed copy."""
    outputs = []
    for jobs in ("1", "2"):
        args = ["check", "-j", jobs, "--format", "json", "fixtures/chat_templates"]
        done = run_cli(args, Path(PACKAGE_HOME), tmp_path / "bin", 120, pythonpath=".")
        assert "Traceback" not in done.stderr
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    assert '"PFX503"' in outputs[0]
