"""A judge reply's size, bounded: in characters when it is read (`too_long`), in bytes as it
arrives (`bound_body`, an httpx response hook that `judge.redirects.bound_client` puts on
the client inspect's OpenAI providers hand their SDK). A server that ignores `max_tokens`
can answer without end; the figures are in docs/judges.md ("Judge replies, bounded").
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import cache
from typing import Any

from howtobench.judge.defaults import LONGEST_REPLY

__all__ = ["ReplyTooLarge", "body_limit", "bound_body", "too_long"]

# Bytes of a reply's body for each character it may hold, by media type: JSON writes a
# Chinese character in 6 bytes and may carry the text twice; an event stream wraps each token.
BYTES_PER_CHARACTER = {"application/json": 16, "text/event-stream": 256}


# The API paths that answer with one reply: OpenAI's chat completions and responses (and
# the servers that copy them), and legacy completions.
REPLY_PATHS = ("/chat/completions", "/responses", "/completions")


class ReplyTooLarge(Exception):
    """A reply's body ran past `body_limit`: reading it stopped there."""


def too_long(text: str) -> str | None:
    """Why a reply is refused when it is longer than `LONGEST_REPLY` characters, or None."""
    if len(text) <= LONGEST_REPLY:
        return None
    return (
        f"the judge's reply has {len(text):,} characters, more than the {LONGEST_REPLY:,} a "
        "judge reply may have: its server did not stop at max_tokens, so the reply was "
        "refused and not sent back"
    )


def body_limit(media_type: str) -> int:
    """The bytes a reply's body of `media_type` may take (`BYTES_PER_CHARACTER`, JSON's
    for any other type)."""
    per_character = BYTES_PER_CHARACTER.get(media_type, BYTES_PER_CHARACTER["application/json"])
    return per_character * LONGEST_REPLY


async def bound_body(response: Any) -> None:
    """Read the body of a reply (`REPLY_PATHS`) no further than `body_limit` bytes; other
    responses (a batch's results file holds many replies) and synchronous streams are left
    as they are."""
    if not response.request.url.path.endswith(REPLY_PATHS):
        return
    stream = response.stream
    # the client's own AsyncByteStream type (httpx's, or httpx2's for the openai SDK),
    # which httpx checks a response's stream against
    base = next((c for c in type(stream).__mro__ if c.__name__ == "AsyncByteStream"), None)
    if base is None:
        return
    media_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
    response.stream = _bounded(base)(stream, body_limit(media_type), str(response.request.url))


@cache
def _bounded(base: type) -> type:
    """A stream of the client's `base` type that passes on another stream's bytes up to
    a limit, and raises `ReplyTooLarge` past it."""

    class Bounded(base):  # type: ignore[misc]
        def __init__(self, inner: Any, limit: int, url: str) -> None:
            self.inner, self.limit, self.url = inner, limit, url

        async def __aiter__(self) -> AsyncIterator[bytes]:
            received = 0
            async for chunk in self.inner:
                received += len(chunk)
                if received > self.limit:
                    raise ReplyTooLarge(
                        f"the judge's reply from {self.url} ran past {self.limit:,} bytes "
                        f"(room for {LONGEST_REPLY:,} characters): its server did not stop "
                        "at max_tokens, so the client stopped reading it"
                    )
                yield chunk

        async def aclose(self) -> None:
            await self.inner.aclose()

    return Bounded
