"""The simulator's HTTP side: where each request goes, and how its answer goes back.

`JudgeSimulator` (`server.py`) keeps the state and answers a chat request; this module
listens on 127.0.0.1 and routes to it: a POST to a batch path (`batches`) or a chat
request, a GET to `/stats` or a batch path, anything else 404. An answer goes back as its
status and body or, for a dropped connection, as a closed one; a client that gave up
waiting (its timeout) gets nothing and is no error.
"""

from __future__ import annotations

import json
import threading
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from howtobench.simulator.batches import Batches
from howtobench.simulator.wire import Outcome

if TYPE_CHECKING:
    from howtobench.simulator.server import JudgeSimulator

__all__ = ["listen"]


class _Server(ThreadingHTTPServer):
    # the default backlog of 5 refuses connections under a judge's burst of requests
    request_queue_size = 1024
    daemon_threads = True


def listen(simulator: JudgeSimulator, batches: Batches, port: int) -> ThreadingHTTPServer:
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
                outcome = batches.route("POST", path, self.headers.get("Content-Type", ""), data)
                if outcome is None:
                    outcome = simulator.respond(path, json.loads(data), recorded_path=self.path)
                _deliver(self, outcome)

        def do_GET(self) -> None:  # noqa: N802
            path = urlsplit(self.path).path
            if path.rstrip("/") == "/stats":
                outcome: Outcome | None = Outcome.of(200, simulator.stats())
            else:
                outcome = batches.route("GET", path, "", b"")
            _deliver(self, outcome or Outcome.of(404, {"error": {"message": "only /stats"}}))

    server = _Server(("127.0.0.1", port), Handler)
    # a short poll: stop() returns at once (the default poll waits half a second)
    threading.Thread(target=partial(server.serve_forever, poll_interval=0.05), daemon=True).start()
    return server


def _deliver(handler: BaseHTTPRequestHandler, outcome: Outcome) -> None:
    if outcome.dropped:
        handler.close_connection = True
        handler.connection.close()
        return
    try:
        handler.send_response(outcome.status)
        handler.send_header("Content-Type", outcome.content_type)
        handler.send_header("Content-Length", str(len(outcome.data)))
        handler.end_headers()
        handler.wfile.write(outcome.data)
    except (BrokenPipeError, ConnectionResetError):
        pass  # the client gave up (its timeout); nothing to answer
