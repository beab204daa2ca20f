"""What a worker finds in the log folder it shares with other workers, and what it may do
there: the units' logs (finished, stopped, another split's), which stopped log to
continue, which to delete once the unit has a finished one. No finished log is ever
deleted here.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from howtobench.scale.logcheck import FINISHED, stop_reason
from howtobench.scale.shards import FIELD

__all__ = ["WorkerFile", "second_finished", "survey", "tidy", "to_resume", "why_stopped"]

# `JudgeUnavailable('judge ... did not answer ...')`: the exception's name and its message
_RAISED = re.compile(r"\w+\((['\"])(.*)\1\)", re.DOTALL)


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


@dataclass
class Survey:
    """The folder's logs of a worker's units, oldest first (by the time each file was
    written), and the finished logs of other splits of the same tasks (`foreign`: a
    range that overlaps a unit's without being it)."""

    logs: dict[Unit, list[Found]]
    foreign: list[tuple[Unit, Found]]


def survey(log_dir: str, eval_set_id: str, units: Iterable[Unit]) -> Survey:
    """What the log folder holds of these units."""
    import fsspec
    from inspect_ai import task_identifier
    from inspect_ai.log import list_eval_logs, read_eval_log

    from howtobench.studies.runs import judged_by

    wanted = set(units)
    found = Survey({unit: [] for unit in wanted}, [])
    fs, where = fsspec.core.url_to_fs(log_dir)
    fs.invalidate_cache(where)  # s3fs keeps listings per process: look again after the run
    if not fs.exists(where):  # a folder, local or a prefix on object storage, not there yet
        return found
    for info in list_eval_logs(log_dir, recursive=False):
        try:
            header = read_eval_log(info, header_only=True)
        except Exception:  # a file being replaced, or not a log: not ours to judge
            continue
        if header.eval.eval_set_id != eval_set_id:
            continue
        limit = header.eval.config.limit  # the range it ran, if any
        span = (int(limit[0]), int(limit[1])) if isinstance(limit, (list, tuple)) else None
        unit = Unit(task_identifier(header, None), span)
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


def _summaries(path: str) -> list[Any]:
    """A log's sample summaries; none where they cannot be read."""
    from inspect_ai.log import read_eval_log_sample_summaries

    try:
        return list(read_eval_log_sample_summaries(path))
    except Exception:  # unreadable sample list: nothing to say or keep from it
        return []


def why_stopped(log: Found) -> str:
    """Why a log's task did not finish: its error, else its first errored sample's
    (selection mode ends a task whose samples errored, such as every sample a dead judge
    stopped, in `success` with no error of its own: `all_done`); "" when neither says."""
    if log.reason:
        return log.reason
    error = next((sample.error for sample in _summaries(log.path) if sample.error), "")
    said = _RAISED.fullmatch(error)  # a sample's error is the exception's repr
    return stop_reason(said.group(2) if said else error)


def to_resume(logs: Sequence[Found]) -> Found | None:
    """The stopped log to continue: the one holding most finished samples, the newest
    of those (a retry's log carries over the samples of the log it continues)."""
    return max(
        (log for log in logs if not log.finished),
        key=lambda log: (sum(s.error is None for s in _summaries(log.path)), log.mtime, log.path),
        default=None,
    )


def tidy(logs: Sequence[Found]) -> list[str]:
    """Delete what a finished log replaces: the stopped logs of its own run (the killed
    log, inspect's `-recovered` copy of it, an earlier retry: inspect's retry keeps the
    task id). A finished log is never deleted, nor a stopped log of another run (a hand
    run, a log brought from another host): they are the user's. Returns the paths
    deleted."""
    import fsspec

    runs = {log.task_id for log in logs if log.finished}
    gone = [log.path for log in logs if not log.finished and log.task_id in runs]
    for path in gone:  # local or remote, as `list_eval_logs` names it
        fs, where = fsspec.core.url_to_fs(path)
        with contextlib.suppress(FileNotFoundError):  # a rerun racing its own cleanup
            fs.rm(where)
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
