"""A worker of an eval set that owns its bookkeeping: rerun after any kill, it resumes.

inspect's selection mode runs the tasks a file names with no eval-set bookkeeping, so the
worker keeps the books itself from the log folder, the one thing workers on many hosts
share (docs/cluster.md, "Workers and resuming"). `run(define, log_dir, judges)` is the
whole entry; in capture mode it only fills unset judge endpoint variables with placeholders.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Sequence
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
from howtobench.vocabulary.environment import environment
from howtobench.vocabulary.errors import UserError

__all__ = ["CAPTURE", "SELECTION", "run"]

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
        with environment({SELECTION: str(group)}):
            define()
    logs = survey(log_dir, eval_set_id, worker.units).logs
    for unit in worker.units:
        tidy(logs[unit])
    unfinished = [unit for unit in worker.units if not any(log.finished for log in logs[unit])]
    doubled = [line for unit in worker.units if (line := second_finished(unit, logs[unit]))]
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


def run(define: Callable[[], object], log_dir: str, judges: Sequence[str]) -> int:
    """Run the eval set `define` calls `eval_set()` for, as the environment asks: a
    capture, a worker, or eval-set's own one-process run. Returns the exit status: 0 done,
    1 a unit left unfinished or with two finished logs, eval_set's False or a bad limit
    (checked first, before anything runs), 2 a folder or file refused before any run.
    """
    try:
        chosen = limits()
    except UserError as error:
        print(error, file=sys.stderr, flush=True)
        return 1
    selection = os.environ.get(SELECTION, "").strip()
    if os.environ.get(CAPTURE, "").strip():
        unset = {k: v for k, v in capture_variables(judges).items() if not os.environ.get(k)}
        with environment(unset):
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
