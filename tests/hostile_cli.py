"""Run the ``prefixlint`` command line in a fresh interpreter, as the installed script does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import prefixlint

PACKAGE_HOME = str(Path(prefixlint.__file__).resolve().parent.parent)
LAUNCHER = (
    "import sys\nfrom prefixlint.cli import main\n"
    "if __name__ == '__main__':\n    sys.exit(main(prog_name='prefixlint'))\n"
)


def run_cli(
    args: list[str],
    cwd: Path,
    launcher_dir: Path,
    timeout: float = 60,
    pythonpath: str = PACKAGE_HOME,
) -> subprocess.CompletedProcess:
    """``prefixlint ARGS`` from a script in ``launcher_dir`` (its folder, not ``cwd``, is
    ``sys.path[0]``, like a console script's), run in ``cwd`` with ``PYTHONPATH``."""
    launcher_dir.mkdir(parents=True, exist_ok=True)
    script = launcher_dir / "prefixlint_script.py"
    script.write_text(LAUNCHER, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": pythonpath, "NO_COLOR": "1"}
    env.pop("PYTHONSAFEPATH", None)
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
