"""Run ``prefixlint`` in a fresh process and read its peak memory, for the hostile-input
tests' memory bounds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parent.parent
# VmHWM is the process's own high-water mark, reset by exec (ru_maxrss keeps the parent's).
SCRIPT = """
import re, sys
from prefixlint.cli import main
try:
    main(sys.argv[1:])
finally:
    status = open("/proc/self/status").read()
    sys.stderr.write("\\npeak " + re.search(r"VmHWM:\\s*(\\d+)", status).group(1) + "\\n")
"""


def measured_run(cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess, int]:
    """``prefixlint ARGS`` in a fresh process (4 minutes at most), and its peak in MiB."""
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, *args],
        cwd=cwd,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(cwd)},
        capture_output=True,
        text=True,
        timeout=240,
    )
    return result, int(result.stderr.rsplit("peak ", 1)[1]) // 1024
