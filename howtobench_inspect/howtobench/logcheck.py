"""`howtobench check-logs LOGS`: a non-zero exit status when a run did not finish.

`inspect eval` exits 0 even when a task ends in error (a dead judge, a cancelled run):
inspect keeps per-task outcomes in the logs, and only `inspect eval-set` exits 1. A
script that runs `inspect eval` unattended, on one host or on many workers, therefore
needs to read the logs to know; this reads their headers only (no samples), so it is
quick on logs of any size and on remote log folders.

A run continued with `inspect eval-retry` counts as finished when its newest log is:
the logs of one run are grouped as the studies group them (`howtobench.studies.runs`),
so the earlier failed log of a retried run does not fail the check.

The command's parser is here too; the log reader (inspect-ai, pandas) is imported when the
check runs, so that `check-logs --help` stays light.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from howtobench.commands import add_command, add_logs

if TYPE_CHECKING:
    from howtobench.commands import Commands

FINISHED = "success"
SUMMARY = "exit 1 if a run did not finish (inspect eval exits 0 then), naming each"


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
        why = f": {self.reason}" if self.reason else ""
        return f"{self.path}: {self.status}{why}"


def unfinished(paths: Sequence[str]) -> tuple[int, list[Unfinished]]:
    """(how many runs the logs hold, those of them whose newest log is not a success).

    Raises a `StudyError` for a path that is no log or holds none (status 2 from the
    command, as for the studies).
    """
    from howtobench.studies.logs import log_files, runs

    found = runs(log_files(paths))
    failed = []
    for run in found:
        log = run.newest
        if log.status == FINISHED:
            continue
        message = log.error.message if log.error is not None else ""
        first = (message.strip().splitlines() or [""])[0]
        failed.append(Unfinished(run.path, log.status, first[:200]))
    return len(found), failed


def run_command(args: argparse.Namespace) -> int:
    """Print one line per unfinished run and return 1, or a one-line all-clear and 0."""
    total, failed = unfinished(args.logs)
    for each in failed:
        print(each.line())
    if failed:
        print(f"{len(failed)} of {total} run(s) did not finish")
        return 1
    print(f"all {total} run(s) finished")
    return 0
