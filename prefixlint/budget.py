"""A wall-clock budget for checking one file, enforced with ``SIGALRM`` where there is one.

The alarm raises :class:`OverBudget` in whatever Python code is running (a long C call ends
first). It derives from ``BaseException`` so that no rule's ``except Exception`` swallows it.
Without ``setitimer`` (Windows), or off the main thread, the budget is not enforced.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


class OverBudget(BaseException):
    """The file took longer than its budget to check."""


def _raise_over_budget(signum, frame) -> None:
    raise OverBudget


@contextlib.contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Raise :class:`OverBudget` inside the block once ``seconds`` have passed (0: never)."""
    enforceable = (
        hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    )
    if seconds <= 0 or not enforceable:
        yield
        return
    previous = signal.signal(signal.SIGALRM, _raise_over_budget)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
