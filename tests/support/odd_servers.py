"""Servers that refuse in shapes the judge simulator does not play, on 127.0.0.1.

A proxy's HTML error page, a plain-text 500, a redirect loop (a base URL that
redirects to itself with a trailing slash and back) and a redirect chain without end: each answers every request, chat or
model listing, the same way, and counts what it was asked.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from urllib.parse import urlsplit

from support.local_http import QuietHandler, serving

TEXT_500 = "upstream exploded: CUDA out of memory"
HTML_502 = (
    "<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>"
    "<center><h1>502 Bad Gateway</h1></center><hr><center>nginx/1.27</center></body></html>"
)
HTML_400 = "<html><body><h1>Request rejected</h1><p>prompt &amp; body too odd</p></body></html>"
# mode -> (status, content type, body)
ANSWERS = {
    "text_500": (500, "text/plain", TEXT_500),
    "html_502": (502, "text/html", HTML_502),
    "html_400": (400, "text/html", HTML_400),
}
REDIRECT_LOOP = "redirect_loop"
REDIRECT_CHAIN = "redirect_chain"  # every path redirects to itself + "/x": no loop, no end


@dataclass
class OddServer:
    """A server answering every request in one `mode` (`ANSWERS`, or `REDIRECT_LOOP`)."""

    mode: str
    requests: list[str] = field(default_factory=list)  # "METHOD path", in order
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                server.answer(self)

            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.answer(self)

        return Handler

    def answer(self, handler: QuietHandler) -> None:
        with self.lock:
            self.requests.append(f"{handler.command} {handler.path}")
        if self.mode == REDIRECT_LOOP:
            path = urlsplit(handler.path).path
            handler.send_response(307)
            handler.send_header("Location", path[:-1] if path.endswith("/") else f"{path}/")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        if self.mode == REDIRECT_CHAIN:
            handler.send_response(307)
            handler.send_header("Location", f"{urlsplit(handler.path).path}/x")
            handler.send_header("Content-Length", "0")
            handler.end_headers()
            return
        status, content_type, body = ANSWERS[self.mode]
        handler.send(status, content_type, body.encode())


@contextmanager
def odd_server(mode: str) -> Iterator[tuple[OddServer, str]]:
    """(the server, its OpenAI base URL) while it runs."""
    odd = OddServer(mode)
    with serving(odd.handler()) as url:
        yield odd, url
