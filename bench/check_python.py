"""Benchmark: prefixlint's Python checks on a tree of real files, against pcdlint, in one run.

Usage: python bench/check_python.py [ROOT ...] [--no-pcdlint] [--changed N]

ROOT defaults to the openai, anthropic and transformers packages of the running interpreter.
Prints, for the same files:

* how many files pass the text prefilter and the ast screen (the rest are never
  analysed), and the time per prefiltered file (median, p99, max; in this process, after a
  first check of a small file has imported, and timed, what a run imports once);
* the wall time of ``prefixlint check ROOT... --no-cache`` with ``-j 1`` and ``-j 2``, and of
  ``pcdlint ROOT...``, each a fresh process, and the ratios (prefixlint's modules compiled to
  bytecode first, in a folder of their own, as an installed package's are; pcdlint's are);
* with the result cache: a cold run over a copy of the tree, then ``N`` of its prefiltered
  files changed, and a warm run over the whole copy and one over the changed files alone
  (what a pre-commit hook runs).
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

from prefixlint import registry
from prefixlint.context import RuleContext
from prefixlint.linting.config import Settings
from prefixlint.linting.engine import check_text
from prefixlint.pyflow.prompt_words import may_hold_prompt
from prefixlint.pyflow.screen import may_need_analysis

_HERE = Path(__file__).resolve().parent.parent
_DEFAULT_PACKAGES = ("openai", "anthropic", "transformers")


def _files(roots: list[Path]) -> list[tuple[Path, str]]:
    found = []
    for root in roots:
        for path in [root] if root.is_file() else sorted(root.rglob("*.py")):
            try:
                found.append((path, path.read_text(encoding="utf-8")))
            except (UnicodeDecodeError, OSError):
                continue
    return found


def _screened(path: Path, text: str) -> bool:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return True
    return may_need_analysis(text, tree, RuleContext(str(path), frozenset(registry.rule_docs())))


_BYTECODE = tempfile.TemporaryDirectory(prefix="prefixlint-bench-bytecode-")


def _environment() -> dict[str, str]:
    """This environment, importing this prefixlint, with bytecode kept in a folder of the
    bench's own (``PYTHONDONTWRITEBYTECODE`` would have every run compile every module)."""
    env = {**os.environ, "PYTHONPATH": str(_HERE), "PYTHONPYCACHEPREFIX": _BYTECODE.name}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _compile_bytecode(sample: str) -> None:
    """Bytecode for every prefixlint module, and for what one check of ``sample`` imports."""
    command = [sys.executable, "-m", "compileall", "-q", str(_HERE / "prefixlint")]
    subprocess.run(command, env=_environment(), check=True, stdout=subprocess.DEVNULL)
    _timed(_prefixlint(sample, "--no-cache"))


def _timed(command: list[str]) -> float:
    env = _environment()
    start = time.perf_counter()
    subprocess.run(command, env=env, check=False, stdout=subprocess.DEVNULL)  # findings exit 1
    return time.perf_counter() - start


def _prefixlint(*args: str) -> list[str]:
    return [sys.executable, "-m", "prefixlint", "check", *args, "--exit-zero", "-q"]


# A file that reaches the analysis and has a finding: checking it once imports what every run
# imports once (the rule modules, the analysis).
_WARM_UP = (
    "import datetime\n"
    "from openai import OpenAI\n"
    'SYSTEM = f"Today is {datetime.datetime.now()}. You help."\n'
    'MESSAGES = [{"role": "system", "content": SYSTEM}]\n'
    'OpenAI().chat.completions.create(model="m", messages=MESSAGES)\n'
)


def _warm_up() -> float:
    """Check :data:`_WARM_UP` and take how long that took: a once-per-process cost, which the
    per-file times would otherwise charge to the first file."""
    start = time.perf_counter()
    findings = check_text(_WARM_UP, "warm_up.py", Settings())
    assert findings, "the warm-up file must reach the analysis"
    return time.perf_counter() - start


def _per_file(candidates: list[tuple[Path, str]]) -> list[float]:
    settings = Settings()
    seconds = []
    for path, text in candidates:
        start = time.perf_counter()
        check_text(text, str(path), settings)
        seconds.append(time.perf_counter() - start)
    return seconds


def _cache_runs(roots: list[Path], candidates: list[tuple[Path, str]], changed: int) -> None:
    with tempfile.TemporaryDirectory(prefix="prefixlint-bench-") as folder:
        work = Path(folder)
        copies = []
        for index, root in enumerate(roots):
            copy = work / f"{index}-{root.name}"
            shutil.copytree(root, copy) if root.is_dir() else shutil.copy(root, copy)
            copies.append((root, copy))
        cache = ["--cache-dir", str(work / "cache")]
        trees = [str(copy) for _, copy in copies]
        cold = _timed(_prefixlint(*trees, *cache))
        edited = []
        for path, _text in candidates[:changed]:
            for root, copy in copies:
                if root in path.parents:
                    target = copy / path.relative_to(root)
                    target.write_text(target.read_text(encoding="utf-8") + "# changed\n")
                    edited.append(str(target))
        warm_tree = _timed(_prefixlint(*trees, *cache))
        for path in edited:
            Path(path).write_text(Path(path).read_text(encoding="utf-8") + "# again\n")
        warm_files = _timed(_prefixlint(*edited, *cache))
    print(f"cache: cold run {cold:.2f} s; {len(edited)} files changed (ones the screen lets")
    print(
        f"  through), then the whole tree {warm_tree:.2f} s, those files alone {warm_files:.2f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", type=Path)
    parser.add_argument("--no-pcdlint", action="store_true")
    parser.add_argument("--changed", type=int, default=5)
    args = parser.parse_args()
    site = Path(sysconfig.get_paths()["purelib"])
    roots = args.roots or [site / name for name in _DEFAULT_PACKAGES if (site / name).is_dir()]
    files = _files(roots)
    prefiltered = [(p, t) for p, t in files if may_hold_prompt(t)]
    screened = [(p, t) for p, t in prefiltered if _screened(p, t)]
    print(f"{len(files)} files, {sum(len(t) for _, t in files) / 1e6:.1f} MB under")
    print("  " + ", ".join(map(str, roots)))
    print(f"prefilter passes {len(prefiltered)}; the ast screen then {len(screened)} (analysed)")
    print(f"imports on the first check, once per process: {_warm_up() * 1000:.0f} ms")
    seconds = sorted(_per_file(prefiltered))
    if seconds:
        p99 = seconds[min(len(seconds) - 1, int(len(seconds) * 0.99))]
        print(
            f"per prefiltered file: median {statistics.median(seconds) * 1000:.0f} ms, "
            f"p99 {p99 * 1000:.0f} ms, max {seconds[-1] * 1000:.0f} ms"
        )
    trees = [str(root) for root in roots]
    _compile_bytecode(str(screened[0][0]) if screened else trees[0])
    one = _timed(_prefixlint(*trees, "--no-cache", "-j", "1"))
    two = _timed(_prefixlint(*trees, "--no-cache", "-j", "2"))
    print(f"prefixlint check --no-cache: -j 1 {one:.2f} s, -j 2 {two:.2f} s ({one / two:.2f}x)")
    if not args.no_pcdlint:
        pcdlint = Path(sys.executable).with_name("pcdlint")
        pcd = _timed([str(pcdlint), *trees])
        print(
            f"pcdlint: {pcd:.2f} s; pcdlint / prefixlint: {pcd / one:.2f}x (-j 1), "
            f"{pcd / two:.2f}x (-j 2)"
        )
    _cache_runs(roots, screened or prefiltered, args.changed)


if __name__ == "__main__":
    main()
