"""A loopback server shaped like llama-server's queue, for the launch watch's tests.

Each chat request spends ``render_s(n)`` seconds "rendering" (``n`` is the number in its
first message, ``request N``) before it takes the next task id and joins a first-in,
first-out queue; it is launched on the first free of ``slots`` slots, held ``hold_s``
seconds and released. ``GET /slots`` answers as llama-server's does (``id_task``: the task
running, else the last one run; each look takes a task id too), or as ``slots_mode`` says:
``"missing"`` 404, ``"off"`` 501 (``--no-slots``), ``"garbage"`` a body that is no slot
list. ``state["launched"]`` lists the requests in launch order, ``state["busy"]`` the other
requests each found running at its launch.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from hostile_server import served

CHAT = {"usage": {"prompt_tokens": 4, "prompt_tokens_details": {"cached_tokens": 0}}}


@contextlib.contextmanager
def slot_server(
    render_s: Callable[[int], float],
    *,
    slots: int = 2,
    hold_s: float = 0.05,
    slots_mode: str = "slots",
) -> Iterator[tuple[str, dict]]:
    """``(base url, state)`` of the server running on 127.0.0.1 until the block ends."""
    lock = threading.Condition()
    running: list[tuple[int, int] | None] = [None] * slots  # (task id, request)
    last: list[int | None] = [None] * slots
    queue: list[int] = []
    state: dict = {"launched": [], "busy": [], "next_id": 0}

    def new_id() -> int:
        state["next_id"] += 1
        return state["next_id"]

    def serve(request: int) -> None:
        time.sleep(render_s(request))
        with lock:
            task = new_id()
            queue.append(task)
            lock.wait_for(lambda: queue[0] == task and None in running, timeout=10)
            queue.pop(0)
            slot = running.index(None)
            state["busy"].append({r for _, r in filter(None, running)})
            running[slot], last[slot] = (task, request), task
            state["launched"].append(request)
        time.sleep(hold_s)
        with lock:
            running[slot] = None
            lock.notify_all()

    def slot_list() -> list[dict]:
        with lock:
            new_id()
            return [
                {"id": i, "is_processing": running[i] is not None, "id_task": last[i]}
                for i in range(slots)
            ]

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def answer(self, status: int, body: object) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path != "/slots" or slots_mode == "missing":
                self.answer(404, {"error": "not found"})
            elif slots_mode == "off":
                self.answer(501, {"error": {"code": 501, "type": "not_supported_error"}})
            elif slots_mode == "garbage":
                self.answer(200, {"slots": "busy"})
            else:
                self.answer(200, slot_list())

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            serve(int(body["messages"][0]["content"].split()[-1]))
            self.answer(200, CHAT)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with served(server) as url:
        yield url, state
