"""`howtobench annotate serve` and `links`: the studio on a socket, and the links to it;
apart from the app because this is the network's side (no access log: the links hold
the tokens).
"""

from __future__ import annotations

import ipaddress
import socket
import sys
from pathlib import Path
from typing import Any

from howtobench.annotate.app import create_app
from howtobench.annotate.store import Settings, Store
from howtobench.studies.log_files import StudyError

__all__ = ["links", "serve"]


def links(settings: Settings, base: str) -> dict[str, Any]:
    """The admin link and each rater's private link under `base` (scheme, host, port)."""
    root = base.rstrip("/")
    return {
        "admin": f"{root}/admin/{settings.admin_token}",
        "raters": {name: f"{root}/r/{token}" for name, (_, token) in settings.raters.items()},
    }


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _listen(host: str, port: int) -> socket.socket:
    """A listening TCP socket, bound here so that a busy port is one clean line. Made with
    the TCP protocol number (not `socket.create_server`'s 0), since asyncio turns Nagle's
    algorithm off only on connections of such a socket: with it on, every answer, whose
    head and body go out in two writes, waited 40 ms for the client's delayed ACK."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )[0]
    listener = socket.socket(family, kind, proto)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(address)
        listener.listen(2048)
    except OSError:
        listener.close()
        raise
    return listener


def serve(path: Path, host: str, port: int) -> None:
    """Serve the campaign until Ctrl-C. Anywhere but this machine's loopback address it
    warns: the links are the only lock, and plain HTTP shows them to the network."""
    import uvicorn  # here: the other commands need no server

    store = Store(path)
    app = create_app(store)
    if not _loopback(host):
        print(
            f"warning: serving on {host}, so anyone who can reach port {port} can try links; "
            "the traffic is plain HTTP: put the studio behind HTTPS (a reverse proxy) "
            "beyond a trusted network",
            file=sys.stderr,
        )
    try:
        listener = _listen(host, port)
    except OSError as err:
        raise StudyError(
            f"--host {host} --port {port}: cannot listen there: {err.strerror or err}"
        ) from err
    port = listener.getsockname()[1]  # the one the system chose, for --port 0
    base = f"http://{host}:{port}" if ":" not in host else f"http://[{host}]:{port}"
    print(f"serving {path} at {base} (Ctrl-C stops)")
    print(f"admin page: {links(store.settings(), base)['admin']}", flush=True)
    # log_config=None: uvicorn's own logging setup (dictConfig) closes every handler in
    # the process, other libraries' too; without it, its warnings and the tracebacks of
    # failed requests reach stderr through Python's last-resort handler
    config = uvicorn.Config(
        app, access_log=False, server_header=False, log_level="warning", log_config=None
    )
    try:
        uvicorn.Server(config).run(sockets=[listener])
    except KeyboardInterrupt:  # uvicorn stops on Ctrl-C, then raises it again for us
        print("stopped")
    finally:
        listener.close()
        store.close()
