"""A wall-clock budget for checking one file, enforced with ``SIGALRM`` where there is one.

The alarm raises :class:`OverBudget` in whatever Python code is running (a long C call ends
first). It derives from ``BaseException`` so that no rule's ``except Exception`` swallows it;
an alarm that lands where Python ignores exceptions (a garbage-collector callback, a
``__del__``) is repeated every :data:`RETRY_SECONDS` until one gets through. Without
``setitimer`` (Windows), or off the main thread, the budget is not enforced.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

RETRY_SECONDS = 0.25


class OverBudget(BaseException):
    """The file took longer than its budget to check."""


@contextlib.contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Raise :class:`OverBudget` inside the block once ``seconds`` have passed (0: never)."""
    enforceable = (
        hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    )
    if seconds <= 0 or not enforceable:
        yield
        return
    armed = [True]

    def expire(signum: int, frame: FrameType | None) -> None:
        if armed[0]:
            raise OverBudget

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds, RETRY_SECONDS)
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
