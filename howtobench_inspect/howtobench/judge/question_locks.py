"""One asker per question: whoever else asks it waits, then uses the answer kept, so
runs sharing a reply store give the same scores for the same writings.

A question is asked holding a lock on its key (`howtobench.judge.replies.ask` reads the
store once it holds it): in a process an anyio lock, across processes `flock` on the
store's `locks/<key>.lock`, which a holder that dies, even by SIGKILL, lets go of. Why one
plain lock per question: docs/benchmarks.md; the wait, its bound and its reports:
docs/large-runs.md ("Reply store"); tested with real processes in `tests/test_store_sharing.py`.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.lowlevel import current_token

from howtobench.judge.defaults import LOCK_POLL_SECONDS, LOCK_WAIT_SECONDS
from howtobench.judge.settings import wait_setting
from howtobench.judge.store import ReplyStore, opened

__all__ = ["LOCK_WAIT_VARIABLE", "LockWaitExpired", "held", "lock_wait"]

LOCK_WAIT_VARIABLE = "HOWTOBENCH_LOCK_WAIT"
LOCK_REPORT_SECONDS = 30.0  # how often a waiting question says whom it waits for
_HOST = socket.gethostname()
_SIGNATURE_WIDTH = 200  # a signature is padded to this, so one write replaces the last
_OPEN = os.O_RDWR | os.O_CREAT | os.O_CLOEXEC

logger = logging.getLogger(__name__)


class LockWaitExpired(Exception):
    """Another process held a question's lock for too long."""


@dataclass
class _Shared:  # a question's in-process lock, and how many tasks hold or await it
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    users: int = 0


# (event loop, store folder, key): a lock belongs to one event loop
_SHARED: dict[tuple[object, str, str], _Shared] = {}
# the current task's questions: holding one again (the negotiator's memo, then `ask`) is free
_HELD: ContextVar[frozenset[tuple[str, str]]] = ContextVar("howtobench_held", default=frozenset())


@asynccontextmanager
async def held(store: ReplyStore | None, key: str) -> AsyncIterator[None]:
    """Hold the question `key` of `store` (None: this process only) against every other
    task and process; another process is waited for `lock_wait()` s (`LockWaitExpired`)."""
    question = (str(store.root) if store else "", key)
    holding = _HELD.get()
    if question in holding:
        yield
        return
    slot = (current_token(), *question)
    shared = _SHARED.setdefault(slot, _Shared())
    shared.users += 1
    try:
        async with shared.lock:
            reset = _HELD.set(holding | {question})
            try:
                async with _file_locked(store, store.lock_file(key)) if store else nullcontext():
                    yield
            finally:
                _HELD.reset(reset)
    finally:
        shared.users -= 1
        if not shared.users:
            del _SHARED[slot]


@asynccontextmanager
async def _file_locked(store: ReplyStore, path: Path) -> AsyncIterator[None]:
    """Hold the lock file `path` against other processes, polled up to the bound, and
    sign it; unlocked, with the store's warning, when it cannot be made or locked."""
    bound, start = lock_wait(), anyio.current_time()
    report, handle = start + LOCK_REPORT_SECONDS, -1
    try:
        try:
            handle = opened(path, _OPEN)
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    now = anyio.current_time()
                if now >= start + bound:
                    raise LockWaitExpired(
                        f"another process ({_signed(handle)}) has been asking this question "
                        f"for over {bound:g} s (lock {path}, {LOCK_WAIT_VARIABLE}); rerun to "
                        "ask again"
                    )
                if now >= report:  # a suspended holder (SIGSTOP, a held job) says nothing
                    report = now + LOCK_REPORT_SECONDS
                    logger.warning(
                        f"question {path.stem[:12]} of reply store {store.root}: waiting "
                        f"{now - start:.0f} s for {_signed(handle)} (at most {bound:g} s, "
                        f"{LOCK_WAIT_VARIABLE})"
                    )
                await anyio.sleep(LOCK_POLL_SECONDS)
            since = time.strftime("%H:%M:%S UTC", time.gmtime())
            signature = f"{_HOST} pid {os.getpid()} since {since}"[:_SIGNATURE_WIDTH]
            os.pwrite(handle, signature.ljust(_SIGNATURE_WIDTH).encode(), 0)
        except OSError as error:  # made, locked or signed: read-only, full, no locks
            store.cannot_write(error)
        yield
    finally:
        if handle >= 0:
            fcntl.flock(handle, fcntl.LOCK_UN)  # not kept by a child forked meanwhile
            os.close(handle)


def _signed(handle: int) -> str:
    """Who signed a lock file: `<host> pid <pid> since <time>`."""
    text = os.pread(handle, _SIGNATURE_WIDTH, 0).decode(errors="replace").strip()
    return text or "a process that did not sign the lock"


def lock_wait() -> float:
    """Seconds a question waits for another process holding it: `HOWTOBENCH_LOCK_WAIT`, else
    `LOCK_WAIT_SECONDS` (longer than a judge call, short of stopping a run for good)."""
    return wait_setting(
        LOCK_WAIT_VARIABLE, LOCK_WAIT_SECONDS, "a question may wait for another process asking it"
    )
