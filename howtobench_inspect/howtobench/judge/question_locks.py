"""One asker per question: whoever else asks it waits, then uses the answer kept.

Two runs of one writer on one reply store used to ask every question each (the store
kept whichever answer came last), so a sampling judge gave their logs different scores
for the same writings. A question the store cannot answer is therefore asked under a
lock on its key: in a process an anyio lock (concurrent epochs, writings, and tasks of
one eval), across processes the store's file lock. Whoever gets the lock next reads the
store again (`howtobench.judge.replies.ask`) and asks only if the holder kept nothing,
as after a failed (unusable) answer.

The file lock is the operating system's (`flock`), so a process that dies holding it
has released it; a live holder is waited for at most `LOCK_WAIT_SECONDS`, polled so no
thread blocks and the event loop keeps serving the other questions.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import anyio
from anyio.lowlevel import current_token
from filelock import Timeout

from howtobench.judge.defaults import LOCK_POLL_SECONDS, LOCK_WAIT_SECONDS
from howtobench.judge.store import ReplyStore


class LockWaitExpired(Exception):
    """Another process held a question's lock for too long."""


@dataclass
class _Shared:
    """A question's in-process lock and how many tasks hold or wait for it (so that the
    map forgets a question once no one asks it)."""

    lock: anyio.Lock = field(default_factory=anyio.Lock)
    users: int = 0


# (event loop, store folder, key): a lock belongs to one event loop
_SHARED: dict[tuple[object, str, str], _Shared] = {}
# the questions the current task holds: holding one again (the negotiator holds its
# question around its memo and its `ask`) takes nothing
_HELD: ContextVar[frozenset[tuple[str, str]]] = ContextVar("howtobench_held", default=frozenset())


def holds(store: ReplyStore | None, key: str) -> bool:
    """Whether the current task holds the question `key` of `store` already."""
    return (str(store.root) if store else "", key) in _HELD.get()


@asynccontextmanager
async def held(store: ReplyStore | None, key: str) -> AsyncIterator[None]:
    """Hold the question `key` of `store` (None: no store, so within this process only)
    against every other task and process, waiting at most `LOCK_WAIT_SECONDS` for
    another process (`LockWaitExpired`). A store that cannot hold a lock (read-only,
    full) is used unlocked, with the store's one warning: reading needs no lock."""
    if holds(store, key):
        yield
        return
    question = (str(store.root) if store else "", key)
    holding = _HELD.get()
    slot = (current_token(), *question)
    shared = _SHARED.setdefault(slot, _Shared())
    shared.users += 1
    try:
        async with shared.lock:
            reset = _HELD.set(holding | {question})
            try:
                async with _file_locked(store, key):
                    yield
            finally:
                _HELD.reset(reset)
    finally:
        shared.users -= 1
        if not shared.users:
            del _SHARED[slot]


@asynccontextmanager
async def _file_locked(store: ReplyStore | None, key: str) -> AsyncIterator[None]:
    """The store's file lock on `key`, polled (no thread blocks) up to the bound."""
    lock = store.lock(key) if store else None
    if store is None or lock is None:
        yield
        return
    deadline = anyio.current_time() + LOCK_WAIT_SECONDS
    while True:
        try:
            lock.acquire(blocking=False)
            break
        except Timeout:
            if anyio.current_time() >= deadline:
                raise LockWaitExpired(
                    f"another process has been asking this question for over "
                    f"{LOCK_WAIT_SECONDS:g} s (lock {lock.lock_file}); rerun to ask again"
                ) from None
            await anyio.sleep(LOCK_POLL_SECONDS)
        except OSError as error:  # the lock file cannot be created
            store.cannot_write(error)
            yield
            return
    try:
        yield
    finally:
        lock.release()
