"""The judge simulator as a child process: one way for tests and benchmarks to start it.

In its own process it does not share the interpreter (and its lock) with the inspect run
it answers, as a real judge server would not. `served` starts it on a port the system
picks, waits for the line it prints once it listens, and stops it on leaving.
"""

from __future__ import annotations

import json
import queue
import re
import subprocess
import sys
import tempfile
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO, Any

__all__ = ["Served", "SimulatorFailed", "served"]

# the line `command.main` prints once it listens: `judge simulator on <base URL>[ as ...]`
_READY = re.compile(r"^judge simulator on (http://\S+)/v1\b")
_STOP_SECONDS = 10.0
_STDERR_TAIL = 3000  # characters of the child's stderr an error quotes


class SimulatorFailed(RuntimeError):
    """The simulator process exited, or did not get ready in time."""


@dataclass(frozen=True)
class Served:
    """A running simulator process: its URLs and its counts (GET /stats)."""

    root_url: str  # Anthropic's base URL; its SDK adds `/v1/messages`
    announced: str  # the line it printed once it listened (naming the server it plays)
    process: subprocess.Popen[str]
    errors: IO[bytes]  # the child's stderr, kept in a file so it can never block

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (`SIM_BASE_URL`, `OPENAI_BASE_URL`)."""
        return f"{self.root_url}/v1"

    def stats(self) -> dict[str, Any]:
        """What it was asked and answered so far (see `JudgeSimulator.stats`)."""
        try:
            with urllib.request.urlopen(f"{self.root_url}/stats", timeout=5) as answer:
                return dict(json.load(answer))
        except OSError:
            if self.process.poll() is not None:
                raise self.failed("exited") from None
            raise

    def calls(self) -> int:
        """Chat requests answered so far, of every kind."""
        return sum(self.stats()["calls"].values())

    def failed(self, what: str) -> SimulatorFailed:
        """The error saying the child `what`, with its exit status and stderr's tail."""
        self.errors.seek(0)
        stderr = self.errors.read().decode(errors="replace")[-_STDERR_TAIL:].strip()
        status = self.process.poll()
        code = "" if status is None else f" (exit status {status})"
        return SimulatorFailed(
            f"the judge simulator {what}{code}; its stderr: {stderr or '(empty)'}"
        )


@contextmanager
def served(startup_seconds: float = 30.0, **options: str | float | bool) -> Iterator[Served]:
    """A simulator process with these command-line options (`latency=0.5` is
    `--latency 0.5`, `no_batch_api=True` is `--no-batch-api`), stopped on leaving; if it
    exited before, leaving says so."""
    command = [sys.executable, "-m", "howtobench.simulator", "--port", "0"]
    for name, value in options.items():
        flag = f"--{name.replace('_', '-')}"
        if value is True:
            command.append(flag)
        elif value is not False:
            command += [flag, str(value)]
    with tempfile.TemporaryFile() as errors:
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=errors, text=True)
        try:
            simulator = _ready(process, startup_seconds, errors)
            yield simulator
            if process.poll() is not None:
                raise simulator.failed("exited while it was in use")
        finally:
            _stop(process)


def _ready(process: subprocess.Popen[str], seconds: float, errors: IO[bytes]) -> Served:
    """The simulator, once the child prints that it listens (within `seconds`)."""
    stdout = process.stdout
    assert stdout is not None
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stdout.readline()), daemon=True).start()
    unready = Served("", "", process, errors)
    try:
        line = lines.get(timeout=seconds).strip()
    except queue.Empty:
        raise unready.failed(f"was not ready within {seconds:g} s") from None
    if not line:  # its stdout closed: it is exiting
        process.wait(_STOP_SECONDS)
        raise unready.failed("exited before it was ready")
    match = _READY.match(line)
    if match is None:
        raise unready.failed(f"did not start (it printed {line!r})")
    return Served(match.group(1), line, process, errors)


def _stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    if process.stdout is not None:
        process.stdout.close()
