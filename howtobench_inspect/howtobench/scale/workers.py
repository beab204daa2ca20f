"""A worker of an eval set that owns its bookkeeping: rerun after any kill, it resumes.

inspect's selection mode (`INSPECT_EVAL_SET_SELECTION`) runs the tasks a file names "with
no eval-set bookkeeping": a rerun does not skip a finished task, does not continue a log
that stopped, and leaves the stopped log beside the new one, so a folder a killed worker
wrote into needs a person before `howtobench check-logs` or `report` accept it. The
runner owns that, and a job runner (Slurm, Kubernetes) knows nothing of logs; so the
worker does it itself, from the one thing workers on many hosts share, the log folder's
files (no lock, no database):

- A task (a unit: its identifier and, for a task cut by `howtobench shards split`, its
  sample range) with a finished log in the folder is skipped.
- A task whose log stopped (`started` after a kill, `error`, `cancelled`) is continued
  with inspect's own retry of that log (the selection's `resume`), so its finished
  samples are kept and only the rest run; the judge replies of samples that finished
  but were not yet in the log come from the reply store (`INSPECT_CACHE_DIR`), so only
  the questions in flight at the kill are asked again.
- Once a task has a finished log, the stopped logs of its run are deleted (the killed
  log, inspect's `-recovered` copy of it, an earlier retry: inspect's retry keeps the
  task id), here and on the next start (a kill between the two leaves them for then), so
  the folder holds one finished log per task. No finished log is ever deleted: a second
  one of a unit (a copy, a log from another host, a run against another judge endpoint)
  is named with what differs, and the worker exits 1, as `check-logs` fails on it.
- A folder holding finished logs of another split of the same tasks (ranges that overlap
  this worker's) is refused before anything runs: the two splits would score samples
  twice.

Logs are matched to units as inspect's eval-set matches them, by `task_identifier` of the
log header, plus the eval set id and the range (`limit`) the header records. Each unit
belongs to one worker file, so two workers never touch one unit's logs.

`run(define, log_dir, judges)` is the whole entry: `docs/examples/scale_out.py` calls it
with the function that calls `eval_set()`. Outside selection mode it changes nothing,
except in capture mode (`INSPECT_EVAL_SET_CAPTURE`), where building the tasks builds the
judge roles' models and an `openai-api/<service>/...` judge would refuse to start without
`<SERVICE>_BASE_URL`: there it fills the judge's endpoint and key variables, when unset,
with placeholders nothing calls. inspect leaves a role's base URL and key out of a task's
identity, so the captured identifiers are those the workers run with their real endpoint.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from howtobench.scale.limits import connections_line, limits
from howtobench.scale.log_folder import (
    WorkerFile,
    second_finished,
    survey,
    tidy,
    to_resume,
    why_stopped,
)
from howtobench.scale.logcheck import stopped_runs
from howtobench.vocabulary.errors import UserError

__all__ = ["CAPTURE", "SELECTION", "capture_variables", "run"]

SELECTION = "INSPECT_EVAL_SET_SELECTION"
CAPTURE = "INSPECT_EVAL_SET_CAPTURE"
PLACEHOLDER_URL = "http://capture.invalid/v1"  # never called: the capture runs nothing
PLACEHOLDER_KEY = "capture-calls-no-model"


def say(line: str) -> None:
    """A line on stderr, where a job runner's output file collects it beside inspect's."""
    print(f"howtobench worker: {line}", file=sys.stderr, flush=True)


def run_selection(
    define: Callable[[], object], selection_path: str, log_dir: str, scratch: Path
) -> int:
    """Run a worker file's units that have no finished log yet; 0 when every unit has
    exactly one finished log at the end, 1 otherwise."""
    worker = WorkerFile.read(selection_path)
    log_dir = (worker.selection.get("overrides") or {}).get("log_dir") or log_dir
    eval_set_id = worker.selection["eval_set_id"]
    found = survey(log_dir, eval_set_id, worker.units)
    if found.foreign:
        unit, log = found.foreign[0]
        raise UserError(
            f"{log_dir} already holds finished logs of another split of these tasks "
            f"({log.path}: {unit.describe()}, and {len(found.foreign) - 1} more) that "
            f"overlap {selection_path}: run this split into a log folder of its own "
            "(HOWTOBENCH_LOG_DIR), or finish the earlier split with its own worker files"
        )
    logs = found.logs
    for unit in worker.units:
        for path in tidy(logs[unit]):
            say(f"removed {path}: its run of {unit.describe()} has a finished log")
    for index, (limit, units) in enumerate(worker.groups()):
        entries = []
        for unit in units:
            if any(log.finished for log in logs[unit]):
                say(f"skipped {unit.describe()}: finished")
                continue
            entry: dict[str, Any] = {"identifier": unit.identifier}
            stopped = to_resume(logs[unit])
            if stopped is not None:
                entry["resume"] = stopped.path
                say(f"continuing {unit.describe()} from {stopped.path} ({stopped.status})")
            entries.append(entry)
        if not entries:
            continue
        group = scratch / f"selection-{index}.json"
        group.write_text(worker.selection_for(limit, entries), "utf-8")
        with _environment({SELECTION: str(group)}):
            define()
    logs = survey(log_dir, eval_set_id, worker.units).logs
    unfinished, doubled = [], []
    for unit in worker.units:
        tidy(logs[unit])
        if not any(log.finished for log in logs[unit]):
            unfinished.append(unit)
        if (line := second_finished(unit, logs[unit])) is not None:
            doubled.append(line)
    for line in doubled:
        say(line)
    reasons = []  # why each unfinished unit stopped; one that has no log never started
    for unit in unfinished:
        reason = why_stopped(logs[unit][-1]) if logs[unit] else ""
        reasons += [reason] if reason else []
        say(f"{unit.describe()} did not finish ({reason or 'not started'})")
    if unfinished:  # the last line: what, why, and what to do
        why = f" (the first stopped: {reasons[0]})" if reasons else ""
        say(
            f"{len(unfinished)} of {len(worker.units)} tasks did not finish{why}; run the same "
            "command again to continue them"
        )
    return 1 if unfinished or doubled else 0


def capture_variables(models: Iterable[str]) -> dict[str, str]:
    """The endpoint and key variables the providers of these models read when built
    (`openai-api/<service>/...`: `<SERVICE>_BASE_URL`, `<SERVICE>_API_KEY`; any other
    `<provider>/...`: `<PROVIDER>_API_KEY`), with placeholders."""
    values: dict[str, str] = {}
    for model in models:
        provider, _, rest = model.partition("/")
        if provider == "openai-api":
            service = rest.partition("/")[0].upper().replace("-", "_")
            values[f"{service}_BASE_URL"] = PLACEHOLDER_URL
            values[f"{service}_API_KEY"] = PLACEHOLDER_KEY
        elif rest:
            values[f"{provider.upper().replace('-', '_')}_API_KEY"] = PLACEHOLDER_KEY
    return values


@contextmanager
def _environment(values: dict[str, str], keep: bool = False) -> Iterator[None]:
    """Set these variables (only those unset, with `keep`) for the block."""
    before = {name: os.environ.get(name) for name in values}
    for name, value in values.items():
        if not (keep and os.environ.get(name)):
            os.environ[name] = value
    try:
        yield
    finally:
        for name, earlier in before.items():
            if earlier is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = earlier


def run(define: Callable[[], object], log_dir: str, judges: Sequence[str]) -> int:
    """Run the eval set `define` calls `eval_set()` for, as the environment asks: a
    capture (with placeholder judge endpoints), a worker (with its bookkeeping), or
    eval-set's own one-process run. Returns the exit status: 0 done, 1 a unit left
    unfinished or with two finished logs, a one-process run whose `define` returned False
    (eval_set's verdict) or a bad limit, 2 a folder or file refused before any run.

    The limits `define` takes from inspect's variables (`worker_limits.limits`) are
    checked first: a bad one is a line on stderr and status 1, before anything runs. A
    run that calls the judge starts with a line saying what its connections are."""
    try:
        chosen = limits()
    except UserError as error:
        print(error, file=sys.stderr, flush=True)
        return 1
    selection = os.environ.get(SELECTION, "").strip()
    if os.environ.get(CAPTURE, "").strip():
        with _environment(capture_variables(judges), keep=True):
            define()  # inspect writes the manifest and exits
        return 0
    say(connections_line(chosen["max_connections"]))
    if not selection:
        # eval-set's one-process run: its verdict, when `define` returns it (a judge that
        # went away leaves a task unfinished, and the job must not look done), and why
        if define() is not False:
            return 0
        for line in stopped_runs(log_dir):
            say(f"did not finish: {line}")
        return 1
    with tempfile.TemporaryDirectory(prefix="howtobench-worker-") as scratch:
        try:
            return run_selection(define, selection, log_dir, Path(scratch))
        except UserError as refused:  # one line in the job's output, not a traceback
            say(str(refused))
            return 2
