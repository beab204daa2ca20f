"""What every request and response of the studio passes through: tokens, bodies, headers;
so its defences (docs/studio.md, "Safety") are the same on every route.
"""

from __future__ import annotations

import hmac
import json
import time

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from howtobench.annotate.protocol import InvalidInput

__all__ = ["Guard", "bearer", "parse_body", "read_body", "same_secret"]

BODY_LIMIT = 64 * 1024  # bytes; a note at its limit is at most 8 KB of UTF-8
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
}


class Guard:
    """Outermost middleware: the security headers on every response (errors included), and
    the server's own time in a `Server-Timing` header, which the benchmark reads."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                headers.update(HEADERS)
                if not scope["path"].startswith("/static/"):
                    headers["Cache-Control"] = "no-store"
                headers["Server-Timing"] = f"app;dur={(time.perf_counter() - start) * 1000:.2f}"
            await send(message)

        await self.app(scope, receive, sending)


def bearer(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def same_secret(given: str, secret: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8"), secret.encode("utf-8"))


def _no_constant(name: str) -> object:
    raise InvalidInput(f"the body is not JSON: {name} is no JSON value")


def parse_body(raw: bytes) -> object:
    """A request body as JSON, or `InvalidInput` saying why it cannot be. JSON is UTF-8
    (RFC 8259; `json.loads` would also guess UTF-16 and UTF-32), and a body nested too deeply
    for the parser (a `RecursionError`) would otherwise answer 500."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InvalidInput(
            f"the body is not UTF-8 (byte 0x{raw[err.start]:02x} at offset {err.start}); "
            "send JSON encoded as UTF-8"
        ) from None
    try:
        body = json.loads(text, parse_constant=_no_constant)
        # an escaped lone surrogate ("\\ud800") could be neither stored nor sent back
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except RecursionError:
        raise InvalidInput("the body is nested too deeply to be a rating or a pick") from None
    except UnicodeEncodeError:
        raise InvalidInput(
            "the body holds a lone surrogate (\\ud800-\\udfff), which UTF-8 cannot carry"
        ) from None
    except InvalidInput:
        raise
    except ValueError as err:  # JSONDecodeError, or an integer of over 4,300 digits
        if "integer string conversion" in str(err):
            raise InvalidInput(
                "the body is not JSON we read: a number of over 4300 digits"
            ) from None
        raise InvalidInput(f"the body is not JSON: {err}") from None
    return body


async def read_body(request: Request) -> object:
    """The request's JSON (`parse_body`), read up to `BODY_LIMIT` bytes: a longer body is
    refused on its declared length before a byte is read, or as soon as it passes the
    limit (a chunked body declares none)."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > BODY_LIMIT:
        raise InvalidInput(f"the body is longer than {BODY_LIMIT} bytes")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > BODY_LIMIT:
            raise InvalidInput(f"the body is longer than {BODY_LIMIT} bytes")
    return parse_body(bytes(body))
