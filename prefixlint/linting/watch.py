"""``check --watch``: check again whenever a checked file changes, until interrupted."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

Snapshot = dict[str, tuple[int, int]]


def snapshot(files: list[str]) -> Snapshot:
    """Each file's modification time and size (a file that vanished is left out)."""
    found = {}
    for path in files:
        try:
            status = os.stat(path)
        except OSError:
            continue
        found[path] = (status.st_mtime_ns, status.st_size)
    return found


def watch(
    list_files: Callable[[], list[str]],
    run: Callable[[], None],
    *,
    interval: float = 0.5,
    keep_going: Callable[[], bool] = lambda: True,
    sleep: Callable[[float], None] = time.sleep,
) -> None:
    """Call ``run`` now and after every change to the files ``list_files`` names (a file
    added, removed, edited), polling every ``interval`` seconds while ``keep_going()``."""
    seen = snapshot(list_files())
    run()
    while keep_going():
        sleep(interval)
        current = snapshot(list_files())
        if current != seen:
            seen = current
            run()
