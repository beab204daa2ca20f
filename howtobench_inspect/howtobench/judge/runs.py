"""What one run has said and learnt about its judges, kept for that run and no longer.

A warning meant to be said once ("this reply store cannot be written", "no judge bound")
is said once per run, not once per process: a second `eval()` in the same Python process
(a notebook cell, the next pass of an eval set, a script that runs two evals) is a run of
its own, and its console and log get the line again. What a run learns about an
endpoint, that its chat template refuses a system message, is learnt again by the next
run at the price of one refused request: the server behind a URL may have been restarted
with another model or template since, and each run's log then says why its system
prompts travelled in the first user message. A batched judge's endpoint is likewise
asked once per run whether it has a batch API (`judge.batching`). A negotiation that
found no usable weights is asked once per run too (`tree.negotiator.SettledWeights`):
every other writing, epoch and task of the instruction takes that failure rather than
asking three times more, and the next run asks again, since the failure is not kept in
the reply store.

The run, not the Model: inspect memoizes models for the whole process, so a memo on one
would outlive the run. Not the scorer: it is built per task (two tasks of one run would
each warn), the task build and the build steps' solver have none, and the memo of a
refused system role is needed below it, where the call is made.

Which run is in progress:

- while a sample runs, inspect's run (`run_id`: one per `eval()` call, also per eval-set
  pass and per notebook cell, where inspect re-enters the notebook's own event loop);
- else the event loop: `inspect score` (and `score()`) runs in a loop of its own, and
  under `inspect eval` the tasks are built inside the eval's loop before any sample
  runs. The first sample of a run takes over what was said while its tasks were built,
  so a warning the task build gave is not given again by the same run;
- outside any event loop (a task built from Python before `eval()`) there is no run:
  nothing is kept and a warning is said each time.

The notes are held by the event loop (weakly), so they go with the loop; a notebook's
loop keeps one small entry per run. Two `score()` calls from one notebook share the
notebook's loop, and so their notes.
"""

from __future__ import annotations

import logging
from collections import deque
from weakref import WeakKeyDictionary

import anyio
from anyio.lowlevel import current_token

from howtobench._inspect import sample_active

__all__ = ["RunNotes", "this_run"]

# The loop's own notes (`inspect score`, or an eval whose tasks are being built), under
# the loop beside its runs' notes (by inspect's run id).
_LOOP = ""


class RunNotes:
    """One run's notes: the warnings it has said, the endpoints it found to refuse a
    system message or our `max_tokens` beside a prompt, what it found out about its batched judges' batch APIs, each
    judge's last prompts, the negotiations that failed, and the redirects met."""

    def __init__(self) -> None:
        self.said: set[tuple[str, ...]] = set()
        self.no_system: set[str] = set()  # "<model>@<base URL>"
        # "<model>@<base URL>" -> the context its server named when it refused a prompt
        # with our max_tokens (`judge.request_shape.room_refused`)
        self.contexts: dict[str, int] = {}
        # "<model>@<base URL>" -> None (it has a batch API), the reason it has none, or
        # the check still under way
        self.batch_api: dict[str, str | None | anyio.Event] = {}
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
