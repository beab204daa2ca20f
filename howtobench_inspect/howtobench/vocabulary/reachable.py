"""Whether an address takes a connection at all: the one check a run makes of the network
before it starts (`parameters/preflight.py`, `dataset/hub.py`), so that a server nobody
runs is said in one line at once instead of after a client's retries.

Only what no client can get past counts as unreachable; any HTTP answer, or a slow one, is
the client's own to judge (docs/running.md, "Endpoints: checked at the start").
Certificates are not checked: a certificate problem is not an absent server, and the real
client reports it.
"""

from __future__ import annotations

import socket

__all__ = ["CONNECT_SECONDS", "unreachable"]

# How long a connection may take to open: a hosted API opens one in well under a second.
CONNECT_SECONDS = 10.0


def unreachable(url: str, seconds: float = CONNECT_SECONDS) -> str | None:
    """Why `url` takes no connection, in a few words ("connection refused", "the host name
    does not resolve", "no connection within 10 s"), or None when it does (or when `url`
    is not an http(s) address, which is not ours to judge)."""
    import httpx  # inspect's and the SDKs' HTTP client; loaded only when a check is made

    if not url.startswith(("http://", "https://")):
        return None
    try:
        with httpx.Client(timeout=httpx.Timeout(seconds), verify=False, trust_env=True) as client:
            with client.stream("GET", url):
                return None
    except httpx.ConnectTimeout:
        return f"no connection within {seconds:g} s"
    except httpx.ProxyError as error:
        return f"the proxy refused: {_words(error)}"
    except httpx.ConnectError as error:
        return _connect_failure(error)
    except httpx.HTTPError:  # connected: a slow or odd answer is the client's to judge
        return None


def _connect_failure(error: BaseException) -> str:
    """A failed connection in plain words, from the OS error underneath httpx's."""
    cause: BaseException | None = error
    for _ in range(8):  # the chain is short; a cyclic one must not loop
        if isinstance(cause, socket.gaierror):
            return "the host name does not resolve"
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused"
        if cause is None:
            break
        cause = cause.__cause__ or cause.__context__
    return _words(error)


def _words(error: BaseException) -> str:
    return " ".join(str(error).split())[:160] or type(error).__name__
