"""What one run has said and learnt about its judges, kept for that run and no longer.

A warning is said once per run, not per process: a second `eval()` in one process (a
notebook cell, an eval set's next pass) gets the line again in its console and log. What
a run learns about an endpoint (a refused system role, no batch API, a negotiation with
no usable weights) is learnt again by the next one, since the server behind a URL may
have changed since. Kept by the run, not the Model (inspect memoizes models for the
process) nor the scorer (built per task, and absent where calls are made).

The run in progress: while a sample runs, inspect's `run_id`; else the event loop's own
notes (`inspect score`, or the task build before the first sample, which takes them
over); outside any event loop, none: nothing is kept. The notes are held weakly by the
event loop, so they go with it.
"""

from __future__ import annotations

import logging
from collections import deque
from weakref import WeakKeyDictionary

from anyio.lowlevel import current_token

from howtobench._inspect import sample_active

__all__ = ["RunNotes", "this_run"]

# The loop's own notes (`inspect score`, or an eval whose tasks are being built), under
# the loop beside its runs' notes (by inspect's run id).
_LOOP = ""


class RunNotes:
    """One run's notes: the warnings it has said, and what it learnt about its judges."""

    def __init__(self) -> None:
        self.said: set[tuple[str, ...]] = set()
        self.no_system: set[str] = set()  # "<model>@<base URL>"
        # "<model>@<base URL>" -> the context its server named when it refused a prompt
        # with our max_tokens (`judge.request_shape.room_refused`)
        self.contexts: dict[str, int] = {}
        # "<model>@<base URL>" -> None (it has a batch API), or the reason it has none
        self.batch_api: dict[str, str | None] = {}
        # "<model>@<base URL>" -> its last prompts' text (`judge.unread.remember_prompt`)
        self.prompts: dict[str, deque[str]] = {}
        # (reply store, negotiator question's key) -> why it gave no usable weights
        self.failed_negotiations: dict[tuple[str, str], str] = {}
        # URL -> where it redirected to; URL -> why requests to it stop (`judge.redirects`)
        self.redirects: dict[str, str] = {}
        self.redirects_stopped: dict[str, str] = {}

    def warn_once(self, logger: logging.Logger, about: tuple[str, ...], message: str) -> None:
        """Log `message` as a warning unless this run has said one `about` the same."""
        if about not in self.said:
            self.said.add(about)
            logger.warning(message)


_RUNS: WeakKeyDictionary[object, dict[str, RunNotes]] = WeakKeyDictionary()


def this_run() -> RunNotes:
    """The notes of the run in progress; outside any event loop, fresh notes each call."""
    try:
        loop = current_token().native_token
    except RuntimeError:  # sniffio's AsyncLibraryNotFoundError: no event loop, no run
        return RunNotes()
    runs = _RUNS.setdefault(loop, {})
    active = sample_active()
    run = (active.run_id or active.eval_id) if active is not None else _LOOP
    if run not in runs:
        # a run's first sample takes over what was said while its tasks were built
        runs[run] = runs.pop(_LOOP) if run != _LOOP and _LOOP in runs else RunNotes()
    return runs[run]
