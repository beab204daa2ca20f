"""The reply store: judge replies that passed their check, kept on disk between runs.

inspect's generate cache keeps every reply, usable or not, and hands a bad one back on
every later run, so a judge's bad day would be remembered for good. Judge calls bypass it,
and this store keeps only checked replies, keyed on the question as first asked, so a rerun
asks again exactly the questions that failed. One small JSON file per question, written
atomically, so processes can share it (`locks/`: `howtobench.judge.question_locks`); a
store that cannot be written costs only the keeping. The whole contract: docs/large-runs.md
("Reply store"); a write's cost: `bench/store_bench.py`.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, Model, cache_path
from pydantic_core import to_jsonable_python

from howtobench.judge.runs import this_run
from howtobench.vocabulary.credentials import digest, without_credentials

__all__ = ["ReplyStore", "logger", "opened"]

logger = logging.getLogger(__name__)

# Settings that change how a call is made, not what the judge answers; `max_tokens` too,
# since a kept reply passed its check, so the judge finished it within its limit.
_OPERATIONAL = {
    "max_tokens",
    "max_connections",
    "adaptive_connections",
    "max_retries",
    "timeout",
    "attempt_timeout",
    "stream_idle_timeout",
    "cache",
    "cache_prompt",
    "batch",
    "fail_on_refusal",
}

# The version of what a key holds; 2 added the model's arguments (docs/large-runs.md).
KEY_VERSION = 2

# A serial for this process's temporary files: with the process id, a name no other
# writer uses at the same time, cheaper than `tempfile` (`bench/store_bench.py`).
_SERIAL = itertools.count()
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


def opened(path: str | Path, flags: int) -> int:
    """`os.open` of a file in the store, making its folder the first time (its first
    reply, its first lock)."""
    try:
        return os.open(path, flags, 0o666)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        return os.open(path, flags, 0o666)


class ReplyStore:
    """Checked judge replies by question key, in the folder `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.locks = root / "locks"  # `howtobench.judge.question_locks`'s files
        self._replies = os.path.join(root, "replies")  # a string: no Path per question

    @classmethod
    def beside_inspect_cache(cls) -> ReplyStore:
        """The store in inspect's cache folder (read when scoring starts, so that
        `INSPECT_CACHE_DIR` set for a run is honoured)."""
        return cls(cache_path().parent / "howtobench")

    @staticmethod
    def key(
        model: Model,
        messages: Sequence[ChatMessage],
        config: GenerateConfig,
        scope: Mapping[str, str],
    ) -> str:
        """The question's key: the SHA-256 of its `identity`."""
        text = ReplyStore.identity(model, messages, config, scope)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    @staticmethod
    def identity(
        model: Model,
        messages: Sequence[ChatMessage],
        config: GenerateConfig,
        scope: Mapping[str, str],
    ) -> str:
        """Everything that changes the judge's answer, as text: the model, its arguments
        (a credential by its digest only), its endpoint, the generation settings (the
        role's and the scorer's), the messages, the scope and `KEY_VERSION`."""
        # what `model.config.merge(config)` holds, without its deep copies: the call's
        # settings over the role's, key by key (the text, so the key, is the same)
        settings = {
            **model.config.model_dump(exclude_none=True),
            **config.model_dump(exclude_none=True),
        }
        arguments = to_jsonable_python(model.model_args, fallback=lambda v: type(v).__qualname__)
        identity: dict[str, Any] = {
            "version": KEY_VERSION,
            "model": str(model),
            "model_args": without_credentials(arguments, digest),
            "base_url": model.api.base_url,
            "config": {k: v for k, v in settings.items() if k not in _OPERATIONAL},
            "messages": [[message.role, message.text] for message in messages],
            "scope": dict(sorted(scope.items())),
        }
        return json.dumps(identity, ensure_ascii=False, sort_keys=True, default=str)

    def _path(self, key: str) -> str:
        return os.path.join(self._replies, key[:2], f"{key}.json")

    def lock_file(self, key: str) -> Path:
        """The file whose lock holds the question `key` against other processes."""
        return self.locks / f"{key}.lock"

    def get(self, key: str) -> str | None:
        """The checked reply kept for `key`, or None (also for an unreadable file)."""
        try:
            with open(self._path(key), "rb") as kept:
                entry = json.loads(kept.read())
        except (OSError, ValueError):
            return None
        reply = entry.get("reply") if isinstance(entry, dict) else None
        return reply if isinstance(reply, str) else None

    def put(self, key: str, reply: str) -> bool:
        """Keep a checked reply; written to a temporary file and renamed, so a reader
        never sees half a file and concurrent writers cannot interleave. Returns whether
        it was kept: a store that cannot be written warns once and keeps nothing."""
        path = self._path(key)
        temporary = f"{path}.{os.getpid()}.{next(_SERIAL)}.tmp"
        written = json.dumps({"reply": reply}).encode("ascii")  # ASCII escapes: any text
        try:
            handle = opened(temporary, _NEW_FILE)
            try:
                view = memoryview(written)
                while view:
                    view = view[os.write(handle, view) :]
            finally:
                os.close(handle)
            os.replace(temporary, path)
        except OSError as error:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            self.cannot_write(error)
            return False
        return True

    def cannot_write(self, error: OSError) -> None:
        """Warn once per run and cause that the store cannot be written; the run goes on."""
        cause = error.strerror or type(error).__name__
        this_run().warn_once(
            logger,
            ("reply store", str(self.root), cause),
            f"reply store {self.root} cannot be written ({cause}): checked judge replies are "
            "used for this run's scores but not kept, so a later run asks them again",
        )
