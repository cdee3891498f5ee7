"""Worker processes for ``check -j N`` that never import code from the checked tree.

A ``spawn`` worker starts as ``python -c ...`` and then takes the parent's ``sys.path``: both
put the current folder (and the script's folder) in front of the standard library, so a
``types.py`` or ``signal.py`` in the folder being checked would be imported and run. Workers
here start with ``PYTHONSAFEPATH`` set (nothing prepended to ``sys.path``) and inherit a
``sys.path`` without the current folder, the script's folder and the folders of the checked
files; prefixlint's own folder is kept, after the standard library.

Files go to the workers in chunks (:func:`chunk_size`), so that the function and its settings
are pickled once per chunk rather than once per file. A worker that dies (a native crash, the
out-of-memory killer) breaks only the chunks it had in hand: their files are run again one per
fresh worker, and the one that kills its worker again is reported through ``on_crash``; the
other files are checked as usual.
"""

from __future__ import annotations

import contextlib
import os
import sys
import sysconfig
import tempfile
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import prefixlint

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

Item = TypeVar("Item")
Result = TypeVar("Result")
_IN_FLIGHT_PER_WORKER = 2
_CHUNKS_PER_WORKER = 8  # enough for the workers to stay even on files of uneven cost
_MAX_CHUNK = 32


_ITEMS_PER_WORKER = 500  # a worker's start (about 0.25 s of imports) pays off past this


def usable_cores() -> int:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def default_workers(items: int) -> int:
    """Workers for ``items`` files when none are asked for: one per
    :data:`_ITEMS_PER_WORKER` files, at most one per usable core (so 1 for a pre-commit
    run on a few changed files)."""
    return max(1, min(usable_cores(), items // _ITEMS_PER_WORKER))


def chunk_size(items: int, workers: int) -> int:
    """Items per task: about :data:`_CHUNKS_PER_WORKER` tasks per worker, at most
    :data:`_MAX_CHUNK` items each."""
    return max(1, min(_MAX_CHUNK, items // (workers * _CHUNKS_PER_WORKER)))


def _each(function: Callable[[Item], Result], chunk: list[Item]) -> list[Result]:
    """``function`` of every item of one chunk, in a worker."""
    return [function(item) for item in chunk]


def _resolved(entry: str) -> Path:
    return Path(os.path.realpath(entry or os.curdir))


def _is_standard_library(entry: str) -> bool:
    path = _resolved(entry)
    if path.suffix == ".zip":
        return True
    if path.name in ("site-packages", "dist-packages"):
        return False
    roots = {_resolved(sysconfig.get_path(name)) for name in ("stdlib", "platstdlib")}
    return any(path == root or root in path.parents for root in roots)


def worker_sys_path(avoid: Iterable[str]) -> list[str]:
    """The parent's ``sys.path`` without '', and without the current folder, the script's
    folder and ``avoid`` where they come before the standard library (where they would shadow
    it); after it, such a folder is where installed packages, prefixlint's own dependencies
    among them, are imported from (``check .venv/lib/python3.11/site-packages``). If that drops
    the folder prefixlint is imported from, it comes back right after the standard library:
    before other packages (so that workers import this same prefixlint), never before the
    standard library."""
    unsafe = {_resolved(os.curdir), *(_resolved(folder) for folder in avoid)}
    if sys.path and not getattr(sys.flags, "safe_path", False):  # -P (Python 3.11+)
        unsafe.add(_resolved(sys.path[0]))
    first_standard = next(
        (i for i, entry in enumerate(sys.path) if _is_standard_library(entry)), len(sys.path)
    )
    kept = [
        entry
        for i, entry in enumerate(sys.path)
        if entry and (i > first_standard or _resolved(entry) not in unsafe)
    ]
    home = Path(prefixlint.__file__).resolve().parent.parent
    if all(_resolved(entry) != home for entry in kept):
        after = max((i + 1 for i, e in enumerate(kept) if _is_standard_library(e)), default=0)
        kept.insert(after, str(home))
    return kept


@contextlib.contextmanager
def isolated_start(avoid: Iterable[str]) -> Iterator[str]:
    """While open, spawned interpreters start with a safe ``sys.path`` in an empty folder (see
    the module doc); yields the folder to return to."""
    saved_path, saved_flag, here = sys.path[:], os.environ.get("PYTHONSAFEPATH"), os.getcwd()
    sys.path[:] = worker_sys_path(avoid)
    os.environ["PYTHONSAFEPATH"] = "1"
    with tempfile.TemporaryDirectory(prefix="prefixlint-workers-") as empty:
        os.chdir(empty)  # where a worker starts: '' on its path is this empty folder
        try:
            yield here
        finally:
            os.chdir(here)
            sys.path[:] = saved_path
            if saved_flag is None:
                os.environ.pop("PYTHONSAFEPATH", None)
            else:
                os.environ["PYTHONSAFEPATH"] = saved_flag


def _executor(workers: int, folder: str) -> ProcessPoolExecutor:
    """Spawned workers that move to ``folder`` (the caller's) once started. (The pool's
    modules are imported only here: a run on one core, a pre-commit hook's, never needs them.)"""
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    return ProcessPoolExecutor(
        workers, mp_context=get_context("spawn"), initializer=os.chdir, initargs=(folder,)
    )


def _run_until_broken(
    function: Callable[[Item], Result],
    items: Sequence[Item],
    queue: deque[list[int]],
    workers: int,
    folder: str,
    results: dict[int, Result],
    per_worker: int = _IN_FLIGHT_PER_WORKER,
) -> list[int]:
    """Run the queued chunks of item indexes into ``results``, ``per_worker`` chunks in
    flight per worker; the indexes lost if a worker dies."""
    from concurrent.futures import FIRST_COMPLETED, wait
    from concurrent.futures.process import BrokenProcessPool

    with _executor(workers, folder) as pool:
        in_flight: dict[Future[list[Result]], list[int]] = {}
        while queue or in_flight:
            while queue and len(in_flight) < workers * per_worker:
                chunk = queue.popleft()
                future = pool.submit(_each, function, [items[index] for index in chunk])
                in_flight[future] = chunk
            done, _ = wait(in_flight, return_when=FIRST_COMPLETED)
            lost = []
            for future in done:
                chunk = in_flight.pop(future)
                try:
                    results.update(zip(chunk, future.result(), strict=True))
                except BrokenProcessPool:
                    lost += chunk
            if lost:
                return sorted([*lost, *(i for chunk in in_flight.values() for i in chunk)])
    return []


def map_isolated(
    function: Callable[[Item], Result],
    items: Sequence[Item],
    workers: int,
    on_crash: Callable[[Item], Result],
    avoid: Iterable[str] = (),
) -> list[Result]:
    """``[function(item) for item in items]`` on ``workers`` isolated processes, in order.

    ``avoid`` names further folders that must not be on the workers' ``sys.path``. An item
    whose worker dies twice (once with others, once alone) gets ``on_crash(item)`` instead;
    the other items lost with it are run again one at a time on a fresh worker.
    Exceptions raised by ``function`` propagate.
    """
    results: dict[int, Result] = {}
    crashed: list[int] = []
    with isolated_start(avoid) as folder:
        size = chunk_size(len(items), workers)
        queue = deque(
            list(range(start, min(start + size, len(items))))
            for start in range(0, len(items), size)
        )
        while queue:
            lost = _run_until_broken(function, items, queue, workers, folder, results)
            alone = deque([index] for index in lost)
            while alone:  # one worker, one item at a time: what it loses killed it
                crashed += _run_until_broken(function, items, alone, 1, folder, results, 1)
    for index in crashed:  # back in the caller's folder, for relative paths
        results[index] = on_crash(items[index])
    return [results[index] for index in range(len(items))]
