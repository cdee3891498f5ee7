"""Watch a llama-server's slots so that requests in flight reach it in the order sent.

Read from ``ggml-org/llama.cpp`` at commit 0c1e5709 (``tools/server/``). The server renders
and tokenizes a request in its HTTP thread before the task joins its queue
(``server-context.cpp``, ``handle_completions_impl``, ``post_tasks``), so of two requests
sent close together either may reach the queue first. What a client can see of a launch:

* ``GET /slots`` (on by default: ``endpoint_slots = true``, ``common/common.h``; ``--no-slots``
  turns it off and the answer is 501, ``server-context.cpp``) lists each slot's
  ``is_processing`` and ``id_task``: the task it runs, or else the last one it ran
  (``server_slot::to_json``). Its task goes to the front of the queue and is served even
  while a decode runs (``process_single_task``: ``SERVER_TASK_TYPE_SLOT_GET``). Task ids only
  grow (``server_queue::get_new_id``), and ids of other kinds of tasks never show on a slot.
* ``GET /metrics`` is off by default (``--metrics``) and counts busy slots without naming
  their tasks, so it cannot tell which request launched.
* A streamed answer starts with the task's first result (``handle_completions_impl``,
  ``rd.next``): at the earliest a ``return_progress`` chunk from the first decode pass after
  the launch, not the launch itself.

With one request unconfirmed at a time, the first task id that no slot showed before is that
request's, whether it still runs or is already over. This assumes no other client sends to
the server. vLLM and SGLang serve no ``/slots``: :meth:`LaunchWatch.start` gives None there.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

POLL_S = 0.005
"""The pause between two looks at ``/slots`` while a request is not yet seen on a slot."""


@dataclass(frozen=True)
class SlotState:
    """One slot in a ``/slots`` answer: its task (running, or the last it ran) if any."""

    task: int | None
    processing: bool


def read_slots(data: Any) -> tuple[SlotState, ...] | None:
    """The slots of a ``/slots`` answer, or None when it is not a list of slot objects."""
    if not isinstance(data, list) or not data:
        return None
    slots = []
    for item in data:
        if not isinstance(item, dict):
            return None
        task, processing = item.get("id_task"), item.get("is_processing")
        if not isinstance(processing, bool):
            return None
        if task is not None and (not isinstance(task, int) or isinstance(task, bool)):
            return None
        slots.append(SlotState(task, processing))
    return tuple(slots)


@dataclass(frozen=True)
class Launch:
    """A request seen on a slot: ``seen_s`` is when the answer that showed it came, on
    :func:`time.monotonic`'s clock; ``running`` are the requests (log indices) processing in
    that answer, itself included if it still ran."""

    seen_s: float
    running: frozenset[int]


class LaunchWatch:
    """Attributes the tasks that appear on a server's slots to the requests sent, one at a
    time; ``look`` returns the slots now, or None when the server did not say."""

    def __init__(self, look: Callable[[], tuple[SlotState, ...] | None]) -> None:
        self._look = look
        self._known: set[int] = set()
        self._request_of: dict[int, int] = {}

    @classmethod
    def start(cls, look: Callable[[], tuple[SlotState, ...] | None]) -> LaunchWatch | None:
        """A watch whose first look saw slots, or None when the server shows none."""
        watch = cls(look)
        slots = look()
        if slots is None:
            return None
        watch._known.update(s.task for s in slots if s.task is not None)
        return watch

    def wait(self, request: int, reply: Future[Any], poll_s: float = POLL_S) -> Launch | None:
        """Look until a new task shows on a slot and give it to ``request``; None when the
        request's ``reply`` came and the slots still show nothing new (the server answered
        without launching it, or stopped showing its slots)."""
        while True:
            answered = reply.done()
            slots = self._look()
            seen_s = time.monotonic()
            new = {s.task for s in slots or () if s.task is not None} - self._known
            if slots is not None and new:
                self._known |= new
                self._request_of.update((task, request) for task in new)
                running = frozenset(
                    self._request_of[s.task]
                    for s in slots
                    if s.processing and s.task in self._request_of
                )
                return Launch(seen_s, running)
            if answered:
                return None
            time.sleep(poll_s)
