"""The batches the simulator keeps, and how each one runs, for both providers' batch APIs.

A batch may take hours, never end, or the endpoint may have no batch API at all; to test
a judge in batch mode offline, the simulator speaks OpenAI's (`openai_batches`) and
Anthropic's (`anthropic_batches`) batch APIs over this shared store, which imports
neither. Every request inside a batch is answered by the simulator's own answering code,
as the same request sent directly, in a thread of its own once the batch is created. A
batch ends when its requests are answered and the simulator's `batch_delay` seconds have
passed (an infinite one never ends it); without its `batch_api` every batch path answers
404. A fault drawn for a batched request becomes that request's error in the results (a
dropped connection or a bad body a 500): inside a batch the provider, not the
connection, reports it.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from howtobench.simulator.wire import ANTHROPIC_PATH, OPENAI_PATH, Outcome

__all__ = ["Batch", "Batches", "Simulator"]


class Simulator(Protocol):
    """What the batch store and the HTTP side (`routes`) ask of `server.JudgeSimulator`:
    named here so that neither imports the state they serve."""

    batch_delay: float
    batch_api: bool

    @property
    def root_url(self) -> str: ...
    def serving(self) -> AbstractContextManager[None]: ...
    def stats(self) -> dict[str, Any]: ...
    def respond(
        self,
        path: str,
        body: dict[str, Any],
        *,
        batch: str | None = None,
        recorded_path: str | None = None,
    ) -> Outcome: ...


_WORKERS = 16  # requests of one batch answered at once


@dataclass
class Batch:
    """One batch: its requests, their answers so far, and when it ended."""

    id: str
    api: str  # "openai" or "anthropic"
    requests: list[tuple[str, dict[str, Any]]]  # (custom_id, body)
    created: float
    input_file: str = ""  # OpenAI: the uploaded file it came from
    results: dict[str, Outcome] = field(default_factory=dict)
    ended: float | None = None
    cancelled: float | None = None
    output_file: str | None = None  # OpenAI: the answers
    error_file: str | None = None  # OpenAI: the requests that failed
    on_end: Callable[[Batches, Batch], None] | None = None  # under the lock (OpenAI: files)


_Shown = Callable[["Batches", Batch], dict[str, Any]]  # a batch as its API shows it


class Batches:
    """Files and batches of both APIs, and the batches' work (`start`)."""

    def __init__(self, simulator: Simulator) -> None:
        # its settings are read at each use: a test may change them while the server runs
        self.simulator = simulator
        self.created: Counter[str] = Counter()  # batches created per API
        self.files: dict[str, tuple[str, bytes]] = {}  # OpenAI's: id -> (filename, content)
        self.lock = threading.Lock()
        self._batches: dict[str, Batch] = {}
        self._ids = itertools.count(1)

    def ids(self, *, unfinished: bool = False) -> list[str]:
        """The batches created so far, in order; with `unfinished`, those not ended."""
        with self.lock:
            return [b.id for b in self._batches.values() if not unfinished or b.ended is None]

    def new_id(self, prefix: str) -> str:
        return f"{prefix}{next(self._ids)}"

    def shared(self, api: str, method: str, rest: list[str], shown: _Shown) -> Outcome | None:
        """The routes both APIs have, each answering in its API's shape (`shown`): list
        the batches, show one, cancel one (which shows it cancelled)."""
        if method == "GET" and not rest:
            with self.lock:
                batches = [b for b in self._batches.values() if b.api == api][::-1]
            ids = [batch.id for batch in batches]  # newest first, one page of either API's list
            return Outcome.of(
                200,
                {
                    "object": "list",
                    "data": [shown(self, batch) for batch in batches],
                    "has_more": False,
                    "first_id": ids[0] if ids else None,
                    "last_id": ids[-1] if ids else None,
                },
            )
        batch = self.batch(rest, api)
        if batch is None:
            return None
        if method == "POST" and rest[1:] == ["cancel"]:
            with self.lock:  # it ends now, with the answers it has (the rest are canceled)
                if batch.ended is None and batch.cancelled is None:
                    batch.cancelled = time.time()
            self._end(batch)
        elif not (method == "GET" and not rest[1:]):
            return None
        return Outcome.of(200, shown(self, batch))

    def batch(self, rest: list[str], api: str) -> Batch | None:
        """The batch of `api` that the path after the batches' route names, if any."""
        batch = self._batches.get(rest[0]) if rest else None
        return batch if batch is not None and batch.api == api else None

    def results(self, batch: Batch) -> dict[str, Outcome]:
        """The answers a batch has so far."""
        with self.lock:
            return dict(batch.results)

    def start(
        self,
        api: str,
        batch_id: str,
        requests: list[tuple[str, dict[str, Any]]],
        input_file: str = "",
        on_end: Callable[[Batches, Batch], None] | None = None,
    ) -> Batch:
        batch = Batch(batch_id, api, requests, time.time(), input_file, on_end=on_end)
        delay = self.simulator.batch_delay
        with self.lock:
            self._batches[batch_id] = batch
            self.created[api] += 1
        if math.isfinite(delay):  # a batch that never ends is never worked on
            threading.Thread(target=self._work, args=(batch, delay), daemon=True).start()
        return batch

    def _work(self, batch: Batch, delay: float) -> None:
        path = ANTHROPIC_PATH if batch.api == "anthropic" else OPENAI_PATH
        slots = threading.BoundedSemaphore(_WORKERS)

        def answer(custom_id: str, body: dict[str, Any]) -> None:
            with slots:
                outcome = self.simulator.respond(path, {**body, "stream": False}, batch=batch.id)
            with self.lock:
                if batch.cancelled is None:
                    batch.results[custom_id] = outcome

        # daemon threads, not a pool: a request that hangs must not hold up the exit
        workers = [
            threading.Thread(target=answer, args=request, daemon=True) for request in batch.requests
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        time.sleep(max(0.0, batch.created + delay - time.time()))
        self._end(batch)

    def _end(self, batch: Batch) -> None:
        with self.lock:
            if batch.ended is not None:
                return
            if batch.on_end is not None:
                batch.on_end(self, batch)
            batch.ended = time.time()
