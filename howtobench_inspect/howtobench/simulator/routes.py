"""The simulator's HTTP side: where each request goes, and how its answer goes back.

It listens on 127.0.0.1 and routes a request to the batch store, a chat answer or
`/stats`, anything else 404. A dropped connection is answered by closing it, a body
without end is sent in chunks until the client hangs up; a client that gave up waiting
gets nothing and is no error.
"""

from __future__ import annotations

import itertools
import json
import threading
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from howtobench.simulator import anthropic_batches, openai_batches
from howtobench.simulator.batches import Batches, Simulator
from howtobench.simulator.wire import Outcome

__all__ = ["listen"]


class _Server(ThreadingHTTPServer):
    # the default backlog of 5 refuses connections under a judge's burst of requests
    request_queue_size = 1024
    daemon_threads = True


def listen(simulator: Simulator, batches: Batches, port: int) -> ThreadingHTTPServer:
    """A server on 127.0.0.1:`port` (0: a free one) answering for `simulator` and its
    `batches`, serving from a thread of its own until it is shut down."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: object) -> None:
            pass

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            with simulator.serving():
                path = urlsplit(self.path).path
                data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outcome = _batch(batches, "POST", path, self.headers.get("Content-Type", ""), data)
                if outcome is None:
                    outcome = simulator.respond(path, json.loads(data), recorded_path=self.path)
                _deliver(self, outcome)

        def do_GET(self) -> None:  # noqa: N802
            path = urlsplit(self.path).path
            if path.rstrip("/") == "/stats":
                outcome: Outcome | None = Outcome.of(200, simulator.stats())
            else:
                outcome = _batch(batches, "GET", path, "", b"")
            _deliver(self, outcome or Outcome.of(404, {"error": {"message": "only /stats"}}))

    server = _Server(("127.0.0.1", port), Handler)
    # a short poll: stop() returns at once (the default poll waits half a second)
    threading.Thread(target=partial(server.serve_forever, poll_interval=0.05), daemon=True).start()
    return server


def _batch(batches: Batches, method: str, path: str, kind: str, data: bytes) -> Outcome | None:
    """The answer on a batch path, or None when `path` is not one (a chat request)."""
    parts = path.rstrip("/").split("/")[1:]  # "v1", ...
    if parts[:3] == ["v1", "messages", "batches"]:
        route, error = anthropic_batches.route, anthropic_batches.error
    elif parts[:2] in (["v1", "files"], ["v1", "batches"]):
        route, error = openai_batches.route, openai_batches.error
    else:
        return None
    if not batches.simulator.batch_api:
        return error(404, f"{path}: this server has no batch API")
    try:
        outcome = route(batches, method, parts, kind, data)
    except (ValueError, KeyError, TypeError) as problem:
        return error(400, f"bad batch request: {problem}")
    return outcome or error(404, f"{method} {path}: no such batch route")


def _deliver(handler: BaseHTTPRequestHandler, outcome: Outcome) -> None:
    if outcome.dropped:
        handler.close_connection = True
        handler.connection.close()
        return
    try:
        handler.send_response(outcome.status)
        handler.send_header("Content-Type", outcome.content_type)
        if outcome.repeat:  # until the client hangs up: a write then fails
            handler.send_header("Transfer-Encoding", "chunked")
            handler.end_headers()
            handler.close_connection = True
            for chunk in itertools.chain([outcome.data], itertools.repeat(outcome.repeat)):
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        else:
            handler.send_header("Content-Length", str(len(outcome.data)))
            handler.end_headers()
            handler.wfile.write(outcome.data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up (its timeout, or a body it would not read on)
