"""One asker per question: whoever else asks it waits, then uses the answer kept.

Two runs of one writer on one reply store used to ask every question each (the store
kept whichever answer came last), so a sampling judge gave their logs different scores
for the same writings. A question is therefore asked holding a lock on its key
(`howtobench.judge.replies.ask` reads the store once it holds it, and asks the judge
only if nothing is kept, as after a failed, unusable, answer): in a process an anyio lock
(concurrent epochs, writings and tasks of one eval), and across processes a file lock,
taken only while another process uses the same store.

Which processes use a store is told by the operating system's file locks (`flock`) on
three files of its `locks/` folder, so a process that dies has let go of them all:

- `users`: a process that holds questions of the store holds this file, exclusively when
  it found no other user (it is *alone*: each question then costs a set entry, no file),
  shared otherwise (each question takes the file lock `locks/<key>.lock`). A process
  lets go of it when it holds no question of the store, so a later run may be alone.
- `door`: held for the instant a process finds its standing, or changes it, so that no
  two processes both find themselves alone.
- `knock`: a process that finds the store held by one that is alone holds it shared
  while it waits. The lone process looks every `LOCK_POLL_SECONDS` (from a thread, one a
  process, so it answers even while every question of its is with the judge): it then takes
  the file lock of every question it holds, and holds `users` shared; the newcomer gets
  in, and from then on both lock each question in files.

A live holder is waited for at most `HOWTOBENCH_LOCK_WAIT` seconds (`LOCK_WAIT_SECONDS`,
15 minutes, when unset), polled so that no thread blocks and the event loop keeps
serving the other questions; every `LOCK_REPORT_SECONDS` the wait is said, naming the
holder (a holder signs the lock file it holds with its host, pid and time), so that a
holder that is suspended (SIGSTOP, a held Slurm job, a paused container) is seen. No probe of the folder is made per
question (the file lock library used before opened a file in the folder at every new
lock file): the folder is made when a process starts using the store, and a store whose
folder cannot be made is read and written unlocked, with the store's one warning.

`tests/test_store_sharing.py` runs two processes on one store at once, a holder killed
with SIGKILL, and a holder that waits for ever; `tests/test_trust.py` two `inspect eval`
processes negotiating on one cache. POSIX only (`fcntl`), as the rest of the store.
"""

from __future__ import annotations

import fcntl
import logging
import os
import socket
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import Enum

import anyio
from anyio.lowlevel import current_token

from howtobench.judge.defaults import LOCK_POLL_SECONDS, LOCK_WAIT_SECONDS
from howtobench.judge.settings import wait_setting
from howtobench.judge.store import ReplyStore

LOCK_WAIT_VARIABLE = "HOWTOBENCH_LOCK_WAIT"
LOCK_REPORT_SECONDS = 30.0  # how often a waiting question says whom it waits for

logger = logging.getLogger(__name__)


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
    against every other task and process, waiting at most `lock_wait()` seconds for
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
                if store is None:
                    yield
                else:
                    async with _across_processes(store, key):
                        yield
            finally:
                _HELD.reset(reset)
    finally:
        shared.users -= 1
        if not shared.users:
            del _SHARED[slot]


class _Mode(Enum):
    ARRIVING = "arriving"  # holds nothing of `users` yet
    KNOCKING = "knocking"  # waits for a lone process to share the store
    ALONE = "alone"  # holds `users` exclusively: questions are held in this process
    SHARED = "shared"  # holds `users` shared: questions are held in files


def _try(handle: int, how: int) -> bool:
    """Take a file lock without waiting: whether it was taken."""
    try:
        fcntl.flock(handle, how | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _opened(path: os.PathLike[str]) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)


_HOST = socket.gethostname()
_SIGNATURE_WIDTH = 200  # a signature is padded to this, so one write replaces the last


def _sign(handle: int) -> None:
    """Write who holds a lock file into it (host, pid, since when), for a waiter to name:
    the lock is the operating system's; the text is only what a waiter says. One
    write of a fixed width, no truncation: a question's lock costs a system call less."""
    since = time.strftime("%H:%M:%S UTC", time.gmtime())
    text = f"{_HOST} pid {os.getpid()} since {since}"[:_SIGNATURE_WIDTH]
    os.pwrite(handle, text.ljust(_SIGNATURE_WIDTH).encode(), 0)


def _signed(path: os.PathLike[str]) -> str:
    """Who signed a lock file (`_sign`): `<host> pid <pid> since <time>`."""
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            text = file.read(_SIGNATURE_WIDTH).strip()
    except OSError:
        text = ""
    return text or "a process that did not sign the lock"


class _Standing:
    """This process's standing on one store while it holds or awaits any of its
    questions: its mode, the files it holds and the questions it holds (in this process
    when alone, in files when shared). Used from any thread under `_MUTEX`."""

    def __init__(self, store: ReplyStore) -> None:
        store.locks.mkdir(parents=True, exist_ok=True)
        self.store = store
        self.files: dict[str, int] = {}  # the questions held in files, with their handles
        self.private: set[str] = set()  # the questions held in this process (alone)
        self.questions = 0  # held or awaited here (the standing ends at 0)
        self.mode = _Mode.ARRIVING
        self.handles: dict[str, int] = {}
        try:
            for name in ("users", "door", "knock"):
                self.handles[name] = _opened(store.locks / name)
        except OSError:
            self.end()
            raise

    def take(self, key: str) -> bool:
        """Hold the question `key`, or say (False) that it must be waited for."""
        if self.mode in (_Mode.ARRIVING, _Mode.KNOCKING):
            self._arrive()
        if self.mode in (_Mode.ARRIVING, _Mode.KNOCKING):
            return False
        if key in self.private or key in self.files:
            return False  # held by a task of another event loop of this process
        if self.mode is _Mode.ALONE:
            self.private.add(key)
            return True
        handle = _opened(self.store.lock_file(key))
        if not _try(handle, fcntl.LOCK_EX):
            os.close(handle)
            return False
        _sign(handle)
        self.files[key] = handle
        return True

    def give_back(self, key: str) -> None:
        self.private.discard(key)
        handle = self.files.pop(key, None)
        if handle is not None:
            os.close(handle)  # and with it its lock

    def _arrive(self) -> None:
        """Find this process's standing: alone, shared, or knocking (waiting for a lone
        process to share); each try is the `door`'s, so no two find themselves alone."""
        users, knock = self.handles["users"], self.handles["knock"]
        if self.mode is _Mode.KNOCKING:
            if _try(users, fcntl.LOCK_SH):  # the lone process shares now (or has left)
                self.mode = _Mode.SHARED
                fcntl.flock(knock, fcntl.LOCK_UN)
            return
        if not _try(self.handles["door"], fcntl.LOCK_EX):
            return  # another process is finding its standing: next look
        try:
            if _try(users, fcntl.LOCK_EX):
                self.mode = _Mode.ALONE
                _sign(users)
                _watch_knocks()
            elif _try(users, fcntl.LOCK_SH):
                self.mode = _Mode.SHARED
            else:
                fcntl.flock(knock, fcntl.LOCK_SH)
                self.mode = _Mode.KNOCKING
        finally:
            fcntl.flock(self.handles["door"], fcntl.LOCK_UN)

    def answer_knock(self) -> None:
        """While alone: share the store if another process knocks."""
        if self.mode is _Mode.ALONE and not _try(self.handles["knock"], fcntl.LOCK_EX):
            self._share()
        elif self.mode is _Mode.ALONE:
            fcntl.flock(self.handles["knock"], fcntl.LOCK_UN)

    def _share(self) -> None:
        """From alone to shared: the questions held here are taken in files first (no
        other process holds any: they hold `users` while they do), then `users` is held
        shared, all behind the `door`, so that no newcomer finds itself alone meanwhile."""
        if not _try(self.handles["door"], fcntl.LOCK_EX):
            return  # a newcomer is at the door: next look
        try:
            for key in list(self.private):  # each moved at once: a retry moves the rest
                handle = _opened(self.store.lock_file(key))
                fcntl.flock(handle, fcntl.LOCK_EX)
                _sign(handle)
                self.files[key] = handle
                self.private.discard(key)
            fcntl.flock(self.handles["users"], fcntl.LOCK_SH)
            self.mode = _Mode.SHARED
        finally:
            fcntl.flock(self.handles["door"], fcntl.LOCK_UN)

    def end(self) -> None:
        """Let go of every file (the operating system drops their locks on close)."""
        self.mode = _Mode.ARRIVING
        for handle in [*self.handles.values(), *self.files.values()]:
            os.close(handle)
        self.handles.clear()
        self.files.clear()


# Every standing of this process, by store folder; `_MUTEX` guards them and their state
# (the lone process's knock thread, and event loops in other threads, use them too).
_STANDINGS: dict[str, _Standing] = {}
_MUTEX = threading.Lock()


# set once the knock watcher runs (one a process, from its first lone standing)
_WATCHING = threading.Event()


def _watch_knocks() -> None:
    """Start, once a process, the thread that answers knocks on every lone standing,
    every `LOCK_POLL_SECONDS`: so a lone process answers while all its questions are with
    the judge, and no thread is started per standing."""
    if _WATCHING.is_set():
        return
    _WATCHING.set()

    def watch() -> None:
        while True:
            time.sleep(LOCK_POLL_SECONDS)
            with _MUTEX:
                for standing in _STANDINGS.values():
                    try:
                        standing.answer_knock()
                    except OSError:  # a lock file cannot be made: alone still, next look
                        continue

    threading.Thread(target=watch, name="howtobench-knocks", daemon=True).start()


def _forget_in_child() -> None:
    """A forked child shares its parent's open files, and with them their locks: it
    forgets the standings (closing its copies leaves the parent's locks held), and has
    no knock watcher (a child has its parent's calling thread only)."""
    global _MUTEX
    _MUTEX = threading.Lock()
    _WATCHING.clear()
    for standing in _STANDINGS.values():
        for handle in [*standing.handles.values(), *standing.files.values()]:
            os.close(handle)
    _STANDINGS.clear()


os.register_at_fork(after_in_child=_forget_in_child)


@asynccontextmanager
async def _across_processes(store: ReplyStore, key: str) -> AsyncIterator[None]:
    """Hold `key` against other processes (a file lock only while the store is shared),
    polling up to the bound; unlocked, with the store's warning, when the store's lock
    folder or a lock file cannot be made."""
    folder = str(store.root)
    try:
        with _MUTEX:
            standing = _STANDINGS.get(folder) or _Standing(store)
            _STANDINGS[folder] = standing
            standing.questions += 1
    except OSError as error:
        store.cannot_write(error)
        yield
        return
    taken = False
    try:
        bound = lock_wait()
        start = anyio.current_time()
        report = start + LOCK_REPORT_SECONDS
        while True:
            try:
                with _MUTEX:
                    taken = standing.take(key)
            except OSError as error:  # the question's lock file cannot be made
                store.cannot_write(error)
                break
            if taken:
                break
            now = anyio.current_time()
            if now >= start + bound:
                raise LockWaitExpired(_expired(standing, key, bound))
            if now >= report:  # a holder that is suspended (SIGSTOP, a held job) says nothing
                report = now + LOCK_REPORT_SECONDS
                logger.warning(
                    f"question {key[:12]} of reply store {store.root}: waiting "
                    f"{now - start:.0f} s for {_holder(standing, key)} (at most {bound:g} s, "
                    f"{LOCK_WAIT_VARIABLE})"
                )
            await anyio.sleep(LOCK_POLL_SECONDS)
        yield
    finally:
        with _MUTEX:
            if taken:
                standing.give_back(key)
            standing.questions -= 1
            if not standing.questions:
                standing.end()
                del _STANDINGS[folder]


def _holder(standing: _Standing, key: str) -> str:
    """Who is waited for: the process holding the store alone, or the question's holder."""
    if standing.mode is _Mode.KNOCKING:
        return f"{_signed(standing.store.locks / 'users')}, which holds the store alone"
    return _signed(standing.store.lock_file(key))


def _expired(standing: _Standing, key: str, bound: float) -> str:
    holder = _holder(standing, key)
    if standing.mode is _Mode.KNOCKING:
        return (
            f"another process ({holder}) has been asking this question, or others of reply "
            f"store {standing.store.root} that it holds alone, for over {bound:g} s "
            f"without sharing the store ({LOCK_WAIT_VARIABLE}); rerun to ask again"
        )
    return (
        f"another process ({holder}) has been asking this question for over {bound:g} s "
        f"(lock {standing.store.lock_file(key)}, {LOCK_WAIT_VARIABLE}); rerun to ask again"
    )


def lock_wait() -> float:
    """Seconds a question waits for another process holding it: `HOWTOBENCH_LOCK_WAIT`,
    else `LOCK_WAIT_SECONDS` (15 minutes: longer than any judge call a run would wait for,
    short enough that a holder that is suspended does not stop a run for good). An
    operational setting, as `HOWTOBENCH_BATCH_WAIT`: it changes no answer."""
    return wait_setting(
        LOCK_WAIT_VARIABLE, LOCK_WAIT_SECONDS, "a question may wait for another process asking it"
    )
