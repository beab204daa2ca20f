"""The little HTTP servers of the tests, on 127.0.0.1: one way to start one and answer,
and a port where none listens."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class QuietHandler(BaseHTTPRequestHandler):
    """A keep-alive handler that logs nothing (a test reads what it needs itself)."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *_: object) -> None:
        pass

    def send(self, status: int, content_type: str, data: bytes) -> None:
        """One whole answer."""
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """The OpenAI base URL (`http://127.0.0.1:<port>/v1`) of a server of `handler`, while
    it runs."""
    http = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    http.daemon_threads = True
    threading.Thread(target=http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{http.server_address[1]}/v1"
    finally:
        http.shutdown()
        http.server_close()


def closed_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (a judge that went away)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
