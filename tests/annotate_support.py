"""What the rating studio's tests share: demo logs, campaigns, a live server.

The logs come from running our real tasks offline: the demo data replayed for its two
made-up writers, scored by `rouge_l` only (no judge), once per test session. A live
server is uvicorn on a free port of 127.0.0.1, in a thread of the test process (so a test
can look into the campaign file while a browser works) or in a process of its own (so a
test can kill it).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from inspect_ai import eval
from inspect_ai.log import read_eval_log

from howtobench import completion, open_writing
from howtobench.annotate.app import create_app
from howtobench.annotate.campaign import Options, plan
from howtobench.annotate.schema import create
from howtobench.annotate.server import links
from howtobench.annotate.sources import read_instructions
from howtobench.annotate.store import Store
from support.signals import default_sigint

WRITERS = ("demo-writer-a", "demo-writer-b")
_LOGS: dict[str, Path] = {}


def demo_logs_folder(root: Path) -> Path:
    """Logs of the demo's open and completion items for both writers, made once."""
    if "demo" not in _LOGS:
        folder = root / "annotate-logs"
        tasks = [make(dataset="demo", scorers="rouge_l") for make in (open_writing, completion)]
        models = [f"replay/{writer}" for writer in WRITERS]
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("INSPECT_CACHE_DIR", str(root / "annotate-cache"))
            logs = eval(tasks, model=models, log_dir=str(folder), display="none")
        assert all(log.status == "success" for log in logs)
        _LOGS["demo"] = folder
    return _LOGS["demo"]


@pytest.fixture(scope="session", name="demo_logs")
def demo_logs_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return demo_logs_folder(tmp_path_factory.getbasetemp())


def log_of(folder: Path, task: str, writer: str) -> Path:
    """The one log of `task` by `writer` in the folder."""
    for path in sorted(folder.glob("*.eval")):
        log = read_eval_log(str(path), header_only=True)
        if log.eval.task == f"howtobench/{task}" and log.eval.model == f"replay/{writer}":
            return path
    raise AssertionError(f"no {task} log of {writer} in {folder}")


def new_campaign(db: Path, logs: list[Path], **options: Any) -> Store:
    """A campaign of the logs' writings (default: all instructions, raters ana and ben)."""
    chosen = Options(**{"raters": ("ana", "ben"), **options})
    create(db, plan(read_instructions(logs), chosen))
    return Store(db)


def texts(logs: list[Path]) -> dict[str, tuple[str, str]]:
    """Writing text -> (sample id, writer), from the logs (the demo's texts are unique)."""
    found = {}
    for item in read_instructions(logs):
        for model, text in item.writings.items():
            found[text] = (item.infer_id, model)
    return found


def tokens(store: Store) -> dict[str, str]:
    """Rater name -> token, and "admin" -> the admin token."""
    settings = store.settings()
    found = {name: token for name, (_, token) in settings.raters.items()}
    return {**found, "admin": settings.admin_token}


@contextmanager
def server_thread(store: Store) -> Iterator[str]:
    """uvicorn serving the campaign in a thread; yields the base URL."""
    config = uvicorn.Config(
        create_app(store),
        host="127.0.0.1",
        port=0,
        log_level="warning",
        access_log=False,
        log_config=None,  # as `serve` does: leave the process's (pytest's) logging alone
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@contextmanager
def server_process(db: Path, *options: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """`howtobench annotate serve DB --port 0` in a process of its own; yields the process
    and the base URL it printed."""
    command = [sys.executable, "-m", "howtobench.cli", "annotate", "serve", str(db)]
    process = subprocess.Popen(
        [*command, "--port", "0", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,  # the Ctrl-C test stops it with SIGINT
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        found = re.search(r"at (http://\S+) ", line)
        assert found, (line, process.stderr.read() if process.stderr else "")
        yield process, found.group(1)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()


def call(
    base: str, method: str, path: str, token: str, body: Any = None
) -> tuple[int, dict[str, Any]]:
    """One API request over HTTP: (status, JSON answer)."""
    data = None if body is None else json.dumps(body).encode("utf-8")
    request = urllib.request.Request(
        base + path,
        data=data,
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def rater_link(store: Store, base: str, name: str) -> str:
    return str(links(store.settings(), base)["raters"][name])
