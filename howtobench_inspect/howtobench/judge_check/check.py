"""The whole check (`judge_check`): every input checked, then the probes, then a small
ToW eval with a fresh reply store, then the summary of its logs. `--time-limit` is our own
deadline, since inspect's `time_limit` bounds each sample, not the run (docs/judges.md).
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

import anyio
from inspect_ai import eval_async
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.util import display_type

from howtobench._inspect import endpoint
from howtobench.commandline.constants import DEFAULT_LIMIT, DEFAULT_TASKS
from howtobench.commandline.extras import check_extra
from howtobench.construct.runs import BuildIncomplete
from howtobench.judge.defaults import DEFAULT_MAX_CONNECTIONS, DEFAULT_TIME_LIMIT
from howtobench.judge.prices import load_prices
from howtobench.judge.unread import CONTEXT_SETTINGS
from howtobench.judge_check.agreement import agree, read_reference
from howtobench.judge_check.probes import Probe, probe
from howtobench.judge_check.quality import measure
from howtobench.judge_check.report import Report
from howtobench.judge_check.role import ROLE, parse_role
from howtobench.judge_check.summary import summarize
from howtobench.judge_check.text import many, one_line, shorten
from howtobench.judge_check.writings import check_tasks, default_replay, present_tasks
from howtobench.vocabulary.environment import environment
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.words import replay_model

__all__ = ["JudgeCannotServe", "judge_check"]

T = TypeVar("T")


class JudgeCannotServe(BuildIncomplete):
    """The judge cannot serve ToW (or did not answer): a `BuildIncomplete`, which
    `cli.main` turns into status 1 with the message on one line."""


def judge_check(
    roles: Sequence[str],
    dataset: str = "demo",
    limit: int = DEFAULT_LIMIT,
    tasks: Sequence[str] = DEFAULT_TASKS,
    replay: str | None = None,
    prices: Path | None = None,
    log_dir: str | None = None,
    progress: Callable[[str], None] | None = None,
    quality: bool = False,
    against: Sequence[str] = (),
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    time_limit: float = DEFAULT_TIME_LIMIT,
    weights: str = "negotiated",
) -> Report:
    """Check the judge, every input before the first request (`UserError`). The eval's
    `INSPECT_CACHE_DIR` is a new empty folder, so no reply store answers for the judge."""
    if against:  # the agreement's p-values
        check_extra("studies", "--against")
    if limit < 1:
        raise UserError(f"--limit {limit}: give how many writings per task, 1 or more")
    if max_connections < 1:
        raise UserError(
            f"--max-connections {max_connections}: give the judge server's parallel slots, "
            "1 or more"
        )
    if not time_limit > 0:  # also NaN
        raise UserError(f"--time-limit {time_limit:g}: give the check's seconds, above 0")
    deadline = time.monotonic() + time_limit
    spec = parse_role(roles)
    rates = load_prices(prices) if prices is not None else None
    run = present_tasks(dataset, tasks)
    writer = replay or default_replay(dataset, run)
    reference = read_reference(against, writer, run) if against else None
    evaluated = check_tasks(dataset, writer, run, weights, quality)
    model = spec.model()
    report = Report(str(model), endpoint(model), dataset, writer, run, limit)
    # stdout carries the report: no inspect display for the rest of the process. inspect
    # reads INSPECT_DISPLAY at its first look at the display (a model call looks), and a
    # display an earlier eval of the process chose (a notebook's) is kept
    with environment({"INSPECT_DISPLAY": "none"}):
        display_type()
    say = progress or (lambda text: None)
    say(f"probing {report.where} ...")
    if asyncio.run(_within(deadline, probe(model, report.probes))) is None:
        report.stopped = _ran_out(time_limit, "during the probes")
        return report
    plain = report.probes[0]
    if not plain.accepted:
        report.stopped = _stopped(report, plain)
        return report
    extra = " with damaged copies, swapped writings and a retest" if quality else ""
    say(
        f"judging up to {many(limit, 'writing')} per task of {dataset}{extra} ({', '.join(run)}) ..."
    )
    with tempfile.TemporaryDirectory(prefix="howtobench-judge-check-") as scratch:
        with environment({"INSPECT_CACHE_DIR": str(Path(scratch) / "cache")}):
            folder = log_dir or str(Path(scratch) / "logs")
            before = _log_files(folder)
            run_eval = eval_async(
                evaluated,
                model=replay_model(writer),
                model_roles={ROLE: spec.model()},
                limit=limit,
                log_dir=folder,
                max_connections=max_connections,
            )
            done = asyncio.run(_within(deadline, run_eval))
        # a cancelled eval returns nothing: its logs are the ones it wrote meanwhile
        locations = (
            [log.location for log in done] if done is not None else _log_files(folder) - before
        )
        planned = many(sum(min(limit, len(task.dataset)) for task in evaluated), "writing")
        ran_out = (
            None if done is not None else _ran_out(time_limit, f"before it judged its {planned}")
        )
        # inspect loads a log's samples lazily, from the file: read them before the
        # temporary folder goes
        logs = [read_eval_log(location) for location in sorted(locations)]
        summary = report.summary = summarize(logs, ran_out)
        summary.cut_prompts = next((_cut_prompts(p) for p in report.probes if p.cut), None)
        if quality:
            report.quality = measure(logs)
        if reference is not None:
            report.agreement = agree([log.location for log in logs], reference)
    if log_dir:
        report.log_files = [log.location for log in logs]
    if summary.outage:
        report.stopped = _outage_line(report, summary.outage)
    if rates is not None:
        if report.judge in rates:
            cost = rates[report.judge].cost(summary.usage, summary.batched)
            report.dollars_per_writing = cost / max(summary.writings, 1)
        else:
            report.price_note = f"no price for {report.judge} in {prices}"
    return report


async def _within(deadline: float, work: Awaitable[T]) -> T | None:
    """`work`'s result, or None when `deadline` (`time.monotonic()`) came first."""
    with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
        return await work
    return None


def _cut_prompts(found: Probe) -> str:
    """Why a judge whose server cut the long probe's prompt cannot serve: the benchmark's
    own prompts would be cut too, and their replies left unscored (`judge.unread`)."""
    return (
        f"the server {found.message} of the long probe: it cuts prompts to its "
        "context, and a reply to a cut prompt is not scored; raise the context "
        f"({CONTEXT_SETTINGS})"
    )


def _log_files(folder: str) -> set[str]:
    """The logs in `folder`, as paths (inspect lists them as file URIs)."""
    if not Path(folder).is_dir():
        return set()
    return {info.name.removeprefix("file://") for info in list_eval_logs(folder)}


def _ran_out(limit: float, when: str) -> str:
    return (
        f"the check ran out of time (--time-limit {limit:g} s) {when}: the table shows what "
        "was judged by then. Give it more time (--time-limit), fewer writings (--limit), or "
        "more connections where the server has the slots (--max-connections)"
    )


def _stopped(report: Report, plain: Probe) -> str:
    """One line for a judge that did not take even the plainest request."""
    where = report.where
    said = plain.said
    if not plain.answered and plain.status != 429:
        return _outage_line(report, said or "no answer")
    if plain.status == 429:
        return f"{where} is rate-limiting ({said}): wait and check again, or raise the limit"
    if plain.status in (401, 403):
        return f"{where} refused the key ({said}): check the API key variable of the provider"
    if plain.status == 404:
        return f"{where} answered 404 ({plain.message}): check the model name and the base URL"
    return f"{where} refused a plain one-message request ({said})"


def _outage_line(report: Report, detail: str) -> str:
    return (
        f"no answer from {report.where} ({shorten(one_line(detail), 120)}): check the base URL, "
        "the key, and that the server is running"
    )
