"""The pre-commit hooks install from this checkout and fail, fix, then pass a bad template.

Like ``pre-commit try-repo``, the test commits a copy of the working tree and points a
project's ``.pre-commit-config.yaml`` at it (one hook environment serves all three runs).
pre-commit builds that environment with pip, so this needs the package index that pip is
configured with (about a minute).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
NOT_COPIED = shutil.ignore_patterns(
    ".git", ".venv", "__pycache__", ".pytest_cache", ".ruff_cache", "build", "dist", "*.egg-info"
)

pytestmark = pytest.mark.slow


def _git(*args, cwd, env):
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _commit_all(folder, env):
    _git("init", "-q", cwd=folder, env=env)
    _git("add", "-A", cwd=folder, env=env)
    _git("commit", "-qm", "snapshot", cwd=folder, env=env)
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=folder, env=env, check=True, capture_output=True
    )
    return head.stdout.decode().strip()


def test_hooks_check_then_fix(tmp_path):
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "NO_COLOR": "1",
    }
    hook_repo = tmp_path / "hook-repo"
    shutil.copytree(REPO_ROOT, hook_repo, ignore=NOT_COPIED)
    rev = _commit_all(hook_repo, env)

    project = tmp_path / "project"
    project.mkdir()
    (project / ".pre-commit-config.yaml").write_text(
        f"repos:\n-   repo: {hook_repo}\n    rev: {rev}\n"
        "    hooks:\n    -   id: prefixlint\n    -   id: prefixlint-fix\n"
    )
    template = project / "system.txt"
    template.write_bytes(b"You are a helpful assistant.\r\nAnswer briefly.\r\n")
    _commit_all(project, env)

    def run_hook(hook):
        command = [sys.executable, "-m", "pre_commit", "run", hook, "--all-files"]
        return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True)

    checked = run_hook("prefixlint")
    assert checked.returncode == 1, checked.stdout + checked.stderr
    assert "PFX401" in checked.stdout

    fixed = run_hook("prefixlint-fix")
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr  # pre-commit: files were modified
    assert template.read_bytes() == b"You are a helpful assistant.\nAnswer briefly.\n"

    again = run_hook("prefixlint")
    assert again.returncode == 0, again.stdout + again.stderr
