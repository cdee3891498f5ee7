"""A minimal OpenAI-compatible engine over the torch backend, for end-to-end tests.

``POST /v1/chat/completions`` renders the request with prefixlint's chat template, prefills
it on the model with the paged block pool (real reuse: the reported
``usage.prompt_tokens_details.cached_tokens`` is the number of tokens whose keys and values
came from the pool) and answers one token. ``GET /metrics`` exports vLLM's prefix-cache
counters, ``GET /v1/models`` the model's name, ``POST /reset_prefix_cache`` empties the
cache. Standard library HTTP server, loopback only.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prefixlint.chat import get_renderer
from prefixlint.replay import ReplayError
from prefixlint.replay.metrics import HITS, QUERIES
from prefixlint.replay.server import request_from_body, sent_query
from prefixlint.replay.torch_backend import TorchReplayer


class TinyEngine:
    """Turns chat-completions bodies into prefills on one replayer, one at a time."""

    def __init__(self, replayer: TorchReplayer, model_name: str, template: str, tokenizer: str):
        self.replayer = replayer
        self.model_name = model_name
        self.renderer = get_renderer(template, tokenizer)
        self.queries = 0
        self.hits = 0
        self._lock = threading.Lock()

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        query = sent_query(self.renderer, request_from_body(body))
        tokens = query.tokens or ()
        with self._lock:
            measure, _logits = self.replayer.run(query, reuse=True)
            self.queries += len(tokens)
            self.hits += measure.reused_tokens
        return {
            "object": "chat.completion",
            "model": self.model_name,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": self.renderer.tokenizer.decode([measure.first_token]),
                    },
                    "finish_reason": "length",
                }
            ],
            "usage": {
                "prompt_tokens": len(tokens),
                "completion_tokens": 1,
                "total_tokens": len(tokens) + 1,
                "prompt_tokens_details": {"cached_tokens": measure.reused_tokens},
            },
        }

    def reset(self) -> None:
        with self._lock:
            self.replayer.table.reset()

    def metrics_text(self) -> str:
        lines = []
        for name, value in ((QUERIES, self.queries), (HITS, self.hits)):
            lines.append(f"# TYPE {name}_total counter")
            lines.append(f'{name}_total{{model_name="{self.model_name}"}} {float(value)}')
        return "\n".join(lines) + "\n"


def _handler(engine: TinyEngine) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            """Stay quiet: tests read responses, not access logs."""

        def _send(self, status: int, payload: str, content_type: str) -> None:
            data = payload.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            self._send(status, json.dumps(payload), "application/json")

        def do_GET(self) -> None:
            if self.path == "/metrics":
                self._send(200, engine.metrics_text(), "text/plain; version=0.0.4")
            elif self.path == "/v1/models":
                self._json(200, {"object": "list", "data": [{"id": engine.model_name}]})
            else:
                self._json(404, {"error": {"message": f"no route {self.path}"}})

        def do_POST(self) -> None:
            if self.path == "/reset_prefix_cache":
                engine.reset()
                self._send(200, "", "text/plain")
                return
            if self.path != "/v1/chat/completions":
                self._json(404, {"error": {"message": f"no route {self.path}"}})
                return
            length = int(self.headers.get("Content-Length", 0))
            try:
                body = json.loads(self.rfile.read(length))
            except ValueError:
                self._json(400, {"error": {"message": "body is not JSON"}})
                return
            try:
                self._json(200, engine.complete(body))
            except ReplayError as exc:
                self._json(400, {"error": {"message": str(exc)}})

    return Handler


def serve(engine: TinyEngine, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """Start serving in a daemon thread; ``server.server_address`` has the bound port."""
    server = ThreadingHTTPServer((host, port), _handler(engine))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server
