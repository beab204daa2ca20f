"""nginx in front of judge replicas, for the tests: the configuration docs/replicas.md
shows, run as a foreground process of the test on 127.0.0.1.

The upstream and server blocks are read from the page's ```nginx block, so the
configuration a user copies is the one the tests run; only the replicas' addresses and
the listening port are put in. Around them goes what a system service would have set up
(a pid file, logs and temporary folders inside the test's own folder), and an access log
that records which replicas each request went to, so a test can count the requests
nginx passed on to a second replica.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "replicas.md"
_BLOCK = re.compile(r"```nginx\n(.*?)```", re.S)
_REPLICA = re.compile(r"^(\s*server\s+)\S+:\d+(\s.*)$", re.M)
_LISTEN = re.compile(r"^(\s*listen\s+)\S+;", re.M)
_READY_SECONDS = 20.0

# what nginx needs beyond the page's blocks to run unprivileged in a folder of its own
_FRAME = """\
daemon off;
worker_processes 1;
{user}pid {folder}/nginx.pid;
error_log {folder}/error.log warn;
events {{ worker_connections 512; }}
http {{
    log_format replicas '$status|$upstream_addr|$upstream_status';
    access_log {folder}/access.log replicas;
    client_body_temp_path {folder}/body;
    proxy_temp_path {folder}/proxy;
    fastcgi_temp_path {folder}/fastcgi;
    uwsgi_temp_path {folder}/uwsgi;
    scgi_temp_path {folder}/scgi;
{blocks}
}}
"""


def nginx_or_skip() -> str:
    """The nginx program, or a skip saying how to install it."""
    program = shutil.which("nginx") or next(
        (p for p in ("/usr/sbin/nginx", "/usr/local/sbin/nginx") if os.access(p, os.X_OK)), None
    )
    if program is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx)")
    return program


def documented_config() -> str:
    """The page's upstream and server blocks, as a user copies them."""
    [blocks] = _BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    return blocks


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Balancer:
    """A running nginx: its base URL (what `<SERVICE>_BASE_URL` names) and its folder."""

    root_url: str
    folder: Path

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def passes(self) -> list[list[str]]:
        """For each request so far, the replicas nginx sent it to, in order (two or more
        when a replica failed and nginx passed the request on to the next)."""
        log = self.folder / "access.log"
        lines = log.read_text().splitlines() if log.exists() else []
        return [[a.strip() for a in line.split("|")[1].split(",")] for line in lines]


@contextmanager
def balancing(replicas: Sequence[str], folder: Path) -> Iterator[Balancer]:
    """nginx on a free port of 127.0.0.1 in front of `replicas` (`http://host:port` root
    URLs), ready when entered (it answers `/stats` from a replica), stopped on leaving."""
    program = nginx_or_skip()
    folder.mkdir(parents=True, exist_ok=True)
    addresses = [url.removeprefix("http://").rstrip("/") for url in replicas]
    blocks = documented_config()
    servers = iter(addresses)
    upstream, rest = blocks.split("}", 1)
    assert len(_REPLICA.findall(upstream)) == len(addresses), "one server line per replica"
    upstream = _REPLICA.sub(lambda m: f"{m.group(1)}{next(servers)}{m.group(2)}", upstream)
    port = free_port()
    rest = _LISTEN.sub(lambda m: f"{m.group(1)}127.0.0.1:{port};", rest)
    user = "user root;\n" if os.geteuid() == 0 else ""  # the workers write into `folder`
    config = folder / "nginx.conf"
    config.write_text(_FRAME.format(user=user, folder=folder, blocks=f"{upstream}}}{rest}"))
    process = subprocess.Popen(
        [program, "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(config)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    balancer = Balancer(f"http://127.0.0.1:{port}", folder)
    try:
        _wait_ready(balancer, process)
        yield balancer
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_ready(balancer: Balancer, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + _READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            stderr = process.stderr.read() if process.stderr else ""
            log = balancer.folder / "error.log"
            raise RuntimeError(
                f"nginx exited ({process.returncode}): {stderr.strip()} "
                f"{log.read_text() if log.exists() else ''}".strip()
            )
        try:
            with urllib.request.urlopen(f"{balancer.root_url}/stats", timeout=2):
                return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.1)
    raise RuntimeError(f"nginx did not answer on {balancer.root_url} within {_READY_SECONDS} s")
