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

import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from howtobench.scale.limits import connections_line, limits
from howtobench.scale.logcheck import stop_reason, stopped_runs
from howtobench.scale.shards import FIELD
from howtobench.vocabulary.errors import UserError

SELECTION = "INSPECT_EVAL_SET_SELECTION"
CAPTURE = "INSPECT_EVAL_SET_CAPTURE"
FINISHED = "success"
PLACEHOLDER_URL = "http://capture.invalid/v1"  # never called: the capture runs nothing
PLACEHOLDER_KEY = "capture-calls-no-model"


@dataclass(frozen=True)
class Unit:
    """What one finished log covers: a task, or a sample range of it."""

    identifier: str
    limit: tuple[int, int] | None = None

    def describe(self) -> str:
        """`howtobench/guide replay/gpt-4o samples 0-120`: the task, the model and the
        range of the identifier `<task>#<args hash>/<model>/<hash>`."""
        name, _, rest = self.identifier.partition("#")
        model = rest.partition("/")[2].rpartition("/")[0]
        part = f" samples {self.limit[0]}-{self.limit[1]}" if self.limit else ""
        return f"{name} {model}{part}"

    def overlaps(self, other: Unit) -> bool:
        """Whether two units of one task share samples (a whole task shares all)."""
        if other.identifier != self.identifier or other == self:
            return False
        if self.limit is None or other.limit is None:
            return True
        return max(self.limit[0], other.limit[0]) < min(self.limit[1], other.limit[1])


@dataclass(frozen=True)
class Found:
    """A log of a unit in the folder, with what tells it from the unit's other logs: its
    run (`task_id`, which inspect's retry of a log keeps) and how it was judged."""

    path: str
    status: str
    mtime: float
    finished: bool
    task_id: str = ""
    eval_id: str = ""
    judged: tuple[tuple[str, str], ...] = ()  # `studies.runs.judged_by`: judges, endpoints, plan
    reason: str = ""  # why it stopped: the first line of its error (a judge that went away)


def all_done(header: Any) -> bool:
    """Whether a log header says its task is done: a success, not invalidated, and every
    planned sample completed without an error. Selection mode forces `fail_on_error` off,
    so a task whose samples errored still ends in `success`; inspect leaves the runner to
    decide, and a rerun should retry those samples (inspect's retry of the log keeps the
    others), as inspect's own eval-set does for a log that lacks samples."""
    results = header.results
    if header.status != FINISHED or header.invalidated or results is None:
        return False
    planned = results.total_samples
    done = results.logged_samples if results.logged_samples is not None else planned
    return bool(results.completed_samples >= planned and done >= planned)


@dataclass(frozen=True)
class WorkerFile:
    """A worker file: inspect's selection, and the sample ranges of `howtobench.scale.shards`."""

    selection: dict[str, Any]  # inspect's part, our field removed
    units: tuple[Unit, ...]

    @classmethod
    def read(cls, path: str) -> WorkerFile:
        import fsspec

        with fsspec.open(path, "r", encoding="utf-8") as f:
            document = json.load(f)
        ours = document.pop(FIELD, None) or {}
        limits = {name: (int(a), int(b)) for name, (a, b) in ours.get("limits", {}).items()}
        units = tuple(
            Unit(entry["identifier"], limits.get(entry["identifier"]))
            for entry in document.get("tasks", [])
        )
        return cls(document, units)

    def groups(self) -> list[tuple[tuple[int, int] | None, list[Unit]]]:
        """Units that run in one `eval_set()` call: the whole tasks together, and each
        cut task alone (its range is the selection's `overrides.limit`)."""
        whole = [unit for unit in self.units if unit.limit is None]
        groups: list[tuple[tuple[int, int] | None, list[Unit]]] = [(None, whole)] if whole else []
        return groups + [(unit.limit, [unit]) for unit in self.units if unit.limit is not None]

    def selection_for(self, limit: tuple[int, int] | None, entries: list[dict[str, Any]]) -> str:
        """inspect's selection for one group, as JSON."""
        document = {**self.selection, "tasks": entries}
        if limit is not None:
            overrides = dict(document.get("overrides") or {})
            overrides["limit"] = list(limit)
            document["overrides"] = overrides
        return json.dumps(document)


def unit_of(header: Any) -> Unit:
    """The unit a log header belongs to (inspect's identifier, and the range it ran)."""
    from howtobench._inspect import task_identifier

    limit = header.eval.config.limit
    span = (int(limit[0]), int(limit[1])) if isinstance(limit, (list, tuple)) else None
    return Unit(task_identifier(header), span)


@dataclass
class Survey:
    """The folder's logs of a worker's units, oldest first (by the time each file was
    written), and the finished logs of other splits of the same tasks (`foreign`: a
    range that overlaps a unit's without being it)."""

    logs: dict[Unit, list[Found]]
    foreign: list[tuple[Unit, Found]]


def survey(log_dir: str, eval_set_id: str, units: Iterable[Unit]) -> Survey:
    """What the log folder holds of these units."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    from howtobench.studies.runs import judged_by

    wanted = set(units)
    found = Survey({unit: [] for unit in wanted}, [])
    if not _exists(log_dir):
        return found
    for info in list_eval_logs(log_dir, recursive=False):
        try:
            header = read_eval_log(info, header_only=True)
        except Exception:  # a file being replaced, or not a log: not ours to judge
            continue
        if header.eval.eval_set_id != eval_set_id:
            continue
        unit = unit_of(header)
        log = Found(
            info.name,
            header.status,
            info.mtime or 0.0,
            all_done(header),
            header.eval.task_id,
            header.eval.eval_id,
            tuple(judged_by(header).items()),
            stop_reason(header.error.message) if header.error is not None else "",
        )
        if unit in wanted:
            found.logs[unit].append(log)
        elif log.finished and any(unit.overlaps(mine) for mine in wanted):
            found.foreign.append((unit, log))
    for logs in found.logs.values():
        logs.sort(key=lambda log: (log.mtime, log.path))
    return found


def completed(path: str) -> int:
    """Samples a log holds that finished without an error."""
    from inspect_ai.log import read_eval_log_sample_summaries

    try:
        return sum(1 for s in read_eval_log_sample_summaries(path) if s.error is None)
    except Exception:  # unreadable sample list: nothing to keep from it
        return 0


def to_resume(logs: Sequence[Found]) -> Found | None:
    """The stopped log to continue: the one holding most finished samples, the newest
    of those (a retry's log carries over the samples of the log it continues)."""
    stopped = [log for log in logs if not log.finished]
    if not stopped:
        return None
    return max(stopped, key=lambda log: (completed(log.path), log.mtime, log.path))


def tidy(logs: Sequence[Found]) -> list[str]:
    """Delete what a finished log replaces: the stopped logs of its own run (the killed
    log, inspect's `-recovered` copy of it, an earlier retry: inspect's retry keeps the
    task id). A finished log is never deleted, nor a stopped log of another run (a hand
    run, a log brought from another host): they are the user's. Returns the paths
    deleted."""
    runs = {log.task_id for log in logs if log.finished}
    gone = [log.path for log in logs if not log.finished and log.task_id in runs]
    for path in gone:
        _remove(path)
    return gone


def second_finished(unit: Unit, logs: Sequence[Found]) -> str | None:
    """The line that names a unit's finished logs when it has more than one, and what
    differs between them; None when it has at most one."""
    finished = [log for log in logs if log.finished]
    if len(finished) < 2:
        return None
    named = ", ".join(log.path for log in finished)
    if len({log.eval_id for log in finished}) == 1:
        differs = "the same log copied"
    else:
        from howtobench.studies.runs import differences

        differs = differences([dict(log.judged) for log in finished]) or "judged alike"
    return (
        f"{unit.describe()} has {len(finished)} finished logs ({named}; {differs}); none is "
        "deleted: move out the ones not to report (`howtobench check-logs` names them)"
    )


def _exists(path: str) -> bool:
    """Whether a folder (local, or a prefix on object storage) is there yet."""
    import fsspec

    fs, where = fsspec.core.url_to_fs(path)
    fs.invalidate_cache(where)  # s3fs keeps listings per process: look again after the run
    return bool(fs.exists(where))


def _remove(path: str) -> None:
    """Delete a log file (local or remote, as `list_eval_logs` names it)."""
    import fsspec

    fs, where = fsspec.core.url_to_fs(path)
    try:
        fs.rm(where)
    except FileNotFoundError:  # already gone (a rerun racing its own cleanup)
        pass


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
    for unit in unfinished:
        newest = logs[unit][-1] if logs[unit] else None
        why = f" ({newest.reason})" if newest is not None and newest.reason else ""
        say(f"{unit.describe()} did not finish{why}; run the same command again to continue it")
    for line in doubled:
        say(line)
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
