"""A loopback HTTP server that answers badly on purpose, for the server replay's tests.

Each scenario is a function ``(path, connection, state) -> None`` that writes raw bytes
(anything: no body, a partial body, a bad gzip stream, a byte at a time). Every loop in a
scenario is bounded, and handler threads are daemons, so the server stops by itself.
"""

from __future__ import annotations

import contextlib
import json
import socket
import socketserver
import struct
import threading
import time
from collections.abc import Callable, Iterator

Scenario = Callable[[str, socket.socket, dict], None]
CHAT_OK = {
    "choices": [{"message": {"role": "assistant", "content": "x"}}],
    "usage": {"prompt_tokens": 20, "prompt_tokens_details": {"cached_tokens": 0}},
}


def response(status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> bytes:
    head = [f"HTTP/1.1 {status} X", f"Content-Length: {len(body)}", "Connection: close"]
    head += [f"{name}: {value}" for name, value in (headers or {}).items()]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def send(connection: socket.socket, status: int, body=b"", headers=None) -> None:
    if not isinstance(body, bytes):
        body = json.dumps(body).encode()
    with contextlib.suppress(OSError):
        connection.sendall(response(status, body, headers))


def _read_request(connection: socket.socket) -> str | None:
    """The request's path, after reading its headers and body (bounded)."""
    data = b""
    while b"\r\n\r\n" not in data and len(data) < 1 << 20:
        chunk = connection.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            break
        body += chunk
    return lines[0].split(" ")[1]


@contextlib.contextmanager
def hostile_server(scenario: Scenario) -> Iterator[tuple[str, dict]]:
    """``(base url, shared state)`` of a server running ``scenario`` on 127.0.0.1."""
    state: dict = {"requests": []}

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.settimeout(10)
            try:
                path = _read_request(self.request)
            except OSError:
                return
            if path is None:
                return
            state["requests"].append(path)
            scenario(path, self.request, state)

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    with served(Server(("127.0.0.1", 0), Handler)) as url:
        yield url, state


@contextlib.contextmanager
def served(server: socketserver.BaseServer) -> Iterator[str]:
    """``server`` (listening on 127.0.0.1) served on a thread while open; yields its base URL."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.daemon = True
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def dribble(connection: socket.socket, data: bytes, pause: float, limit: int) -> None:
    """Send ``data`` a byte at a time, at most ``limit`` bytes, until the client leaves."""
    for byte in data[:limit]:
        try:
            connection.sendall(bytes([byte]))
        except OSError:
            return
        time.sleep(pause)


def reset(connection: socket.socket) -> None:
    """Close with a TCP reset instead of an answer."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()
