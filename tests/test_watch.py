"""check --watch: one check now, one more after each change to the checked files."""

import os

from click.testing import CliRunner

from prefixlint.cli import main
from prefixlint.linting import watch as watching


def test_watch_runs_again_after_each_change(tmp_path):
    prompt = tmp_path / "system.txt"
    prompt.write_text("You help.\n")
    files = [str(prompt)]
    runs, polls = [], []

    def sleep(_seconds):
        polls.append(len(polls))
        if len(polls) == 2:  # an edit
            prompt.write_text("You help. Be brief.\n")
        elif len(polls) == 4:  # a new file
            extra = tmp_path / "user.txt"
            extra.write_text("Hi\n")
            files.append(str(extra))
        elif len(polls) == 5:  # touched with the same size and a new time
            os.utime(prompt, ns=(1, 1))

    watching.watch(
        lambda: list(files),
        lambda: runs.append(len(polls)),
        keep_going=lambda: len(polls) < 6,
        sleep=sleep,
    )
    assert runs == [0, 2, 4, 5]


def test_watch_command_checks_then_stops_on_ctrl_c(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "system.j2").write_text("Today: {{ current_date }}\nBe brief.\n")

    def one_run(list_files, run, **_):
        assert list_files() == ["system.j2"]
        run()
        raise KeyboardInterrupt

    monkeypatch.setattr(watching, "watch", one_run)
    result = CliRunner().invoke(main, ["check", "--watch", "--format", "concise"])
    assert result.exit_code == 0
    assert "system.j2:1:" in result.stdout and "PFX101" in result.stdout
    assert "Watching for changes" in result.stdout
    stdin = CliRunner().invoke(main, ["check", "-", "--watch"])
    assert stdin.exit_code == 2
