"""`howtobench check-logs LOGS`: a non-zero exit status when a run did not finish.

`inspect eval` exits 0 even when a task ends in error, so an unattended script must read
the logs to know. This reads their headers only (the sample summaries only of logs that
count unscored samples, for a lost batch's reason), so it is quick on any log folder. A
run is grouped as the studies group runs (`studies.runs`): a retried run counts by its
newest log, and samples scored twice fail it as `report` refuses them. The log reader is
imported when the check runs, so that `check-logs --help` stays light.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from howtobench.commandline.commands import add_command, add_logs
from howtobench.vocabulary.names import shown_name

if TYPE_CHECKING:
    from howtobench.commandline.commands import Commands
    from howtobench.studies.runs import Run

__all__ = ["add_check_logs_command", "stop_reason", "stopped_runs"]

FINISHED = "success"
SUMMARY = (
    "exit 1 if a run did not finish (inspect eval exits 0 then), or left samples unscored "
    "with their lost batch, naming each"
)


def add_check_logs_command(commands: Commands) -> None:
    """`howtobench check-logs LOGS`."""
    p = add_command(commands, "check-logs", SUMMARY)
    add_logs(p)
    p.set_defaults(run=run_command)


@dataclass(frozen=True)
class Unfinished:
    """A run whose newest log did not end in success."""

    path: str
    status: str  # inspect's: error, cancelled or started
    reason: str  # the first line of the error, or ""

    def line(self) -> str:
        """The run's line; a hidden character in its path or reason is shown escaped
        (`howtobench.vocabulary.names`), so that two runs cannot look alike."""
        why = f": {self.reason}" if self.reason else ""
        return shown_name(f"{self.path}: {self.status}{why}", None)


def read_runs(paths: Sequence[str]) -> list[Run]:
    """The runs the logs hold, from their headers. Raises a `StudyError` for a path that is
    no log or holds none (status 2 from the command, as for the studies)."""
    from howtobench.studies.log_files import log_files, runs

    return runs(log_files(paths))


def unfinished(found: Sequence[Run]) -> list[Unfinished]:
    """The runs whose newest log is not a success."""
    return [
        Unfinished(run.path, log.status, stop_reason(log.error.message) if log.error else "")
        for run in found
        if (log := run.newest).status != FINISHED
    ]


def stop_reason(message: str) -> str:
    """A log's error as one line: its first (the package's errors say it all there; a
    traceback's first line is its headline)."""
    return (message.strip().splitlines() or [""])[0][:300]


def stopped_runs(log_dir: str) -> list[str]:
    """A line per run in `log_dir` that did not finish, with its reason; none where the
    folder holds no log."""
    from howtobench.studies.log_files import StudyError

    try:
        return [each.line() for each in unfinished(read_runs([log_dir]))]
    except StudyError:
        return []


def lost_with_batches(found: Sequence[Run]) -> list[Unfinished]:
    """The finished runs with samples unscored because their batch was lost, one entry
    per run: how many samples, and the first one's reason."""
    from inspect_ai.log import read_eval_log_sample_summaries

    from howtobench.judge.lost_batches import LOST_WITH_BATCH

    lost = []
    for run in found:
        log = run.newest
        scores = log.results.scores if log.results is not None else []
        if log.status != FINISHED or not any(s.unscored_samples for s in scores):
            continue
        reasons = [
            score.explanation or ""
            for sample in read_eval_log_sample_summaries(run.path)
            for score in (sample.scores or {}).values()
            if LOST_WITH_BATCH in (score.explanation or "")
        ]
        if reasons:
            first = " ".join(reasons[0].split())[:300]
            count = f"{len(reasons)} score(s) left unscored, a rerun can score them"
            lost.append(Unfinished(run.path, FINISHED, f"{count}; the first: {first}"))
    return lost


def run_command(args: argparse.Namespace) -> int:
    """Print one line per unfinished run, per run with samples lost with their batch, and
    per set of samples scored in several logs, and return 1; or a one-line all-clear and
    0."""
    from howtobench.studies.runs import overlaps

    found = read_runs(args.logs)
    total, failed, lost = len(found), unfinished(found), lost_with_batches(found)
    twice = overlaps(found)
    for each in failed + lost:
        print(each.line())
    for overlap in twice:
        print(shown_name(overlap.line(), None))
    if failed:
        print(f"{len(failed)} of {total} run(s) did not finish")
    if lost:
        print(f"{len(lost)} of {total} run(s) left samples unscored with their lost batch")
    if twice:
        print(
            f"{len(twice)} set(s) of samples scored in more than one log: `howtobench "
            "report` refuses the folder until one log of each is left"
        )
    if failed or lost or twice:
        return 1
    print(f"all {total} run(s) finished")
    return 0
