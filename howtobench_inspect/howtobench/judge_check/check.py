"""The whole check (`judge_check`): every input checked, then the probes, then a small
ToW eval with a fresh reply store, then the summary of its logs."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from inspect_ai import eval
from inspect_ai.log import read_eval_log
from inspect_ai.model import compute_model_cost

from howtobench._inspect import endpoint
from howtobench.constants import DEFAULT_LIMIT, DEFAULT_TASKS
from howtobench.construct.runs import BuildIncomplete
from howtobench.errors import UserError
from howtobench.judge_check.probes import Probe, probe
from howtobench.judge_check.report import Report
from howtobench.judge_check.role import ROLE, parse_role
from howtobench.judge_check.summary import summarize
from howtobench.judge_check.text import many, one_line, shorten
from howtobench.judge_check.writings import build_tasks, default_replay, present_tasks
from howtobench.studies.cost import load_prices
from howtobench.vocabulary import replay_model


class JudgeCannotServe(BuildIncomplete):
    """The judge cannot serve ToW (or did not answer): exit status 1 with the reason.

    A `BuildIncomplete` because that is what `cli.main` turns into status 1 with the
    message on one line; nothing is to be resumed.
    """


def judge_check(
    roles: Sequence[str],
    dataset: str = "demo",
    limit: int = DEFAULT_LIMIT,
    tasks: Sequence[str] = DEFAULT_TASKS,
    replay: str | None = None,
    prices: Path | None = None,
    log_dir: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Check the judge: probes, then a small ToW eval, then the log's summary.

    Every input is checked before the first request (bad input is a `UserError` or,
    for the prices file, a `StudyError`). The eval runs with `INSPECT_CACHE_DIR` set to
    a new empty folder, so no reply store answers for the judge; its logs go to
    `log_dir`, or to a temporary folder removed afterwards.
    """
    if limit < 1:
        raise UserError(f"--limit {limit}: give how many writings per task, 1 or more")
    spec = parse_role(roles)
    rates = load_prices(prices) if prices is not None else None
    run = present_tasks(dataset, tasks)
    writer = replay or default_replay(dataset, run)
    evaluated = build_tasks(dataset, writer, run)
    model = spec.model()
    report = Report(str(model), endpoint(model), dataset, writer, run, limit)
    say = progress or (lambda text: None)
    say(f"probing {report.judge} at {report.endpoint or 'its default endpoint'} ...")
    report.probes = asyncio.run(probe(model))
    plain = report.probes[0]
    if not plain.accepted:
        report.stopped = _stopped(report, plain)
        return report
    say(f"judging up to {many(limit, 'writing')} per task of {dataset} ({', '.join(run)}) ...")
    with tempfile.TemporaryDirectory(prefix="howtobench-judge-check-") as scratch:
        with _environment("INSPECT_CACHE_DIR", str(Path(scratch) / "cache")):
            logs = eval(
                evaluated,
                model=replay_model(writer),
                model_roles={ROLE: spec.model()},
                limit=limit,
                log_dir=log_dir or str(Path(scratch) / "logs"),
                display="none",
            )
        # inspect loads a log's samples lazily, from the file: read them before the
        # temporary folder goes
        summary = report.summary = summarize([read_eval_log(log.location) for log in logs])
    if log_dir:
        report.log_files = [log.location for log in logs]
    if summary.outage:
        report.stopped = _outage_line(report, summary.outage)
    if rates is not None and prices is not None:
        if report.judge in rates:
            chosen = rates[report.judge]
            cost = compute_model_cost(
                chosen.batch if summary.batched else chosen.standard, summary.usage
            )
            report.dollars_per_writing = cost / max(summary.writings, 1)
        else:
            report.price_note = f"no price for {report.judge} in {prices}"
    return report


@contextlib.contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    """`name=value` for the eval alone: the caller's environment is as it was after."""
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def _stopped(report: Report, plain: Probe) -> str:
    """One line for a judge that did not take even the plainest request."""
    where = f"{report.judge} at {report.endpoint or 'its default endpoint'}"
    said = f"HTTP {plain.status}: {plain.message}" if plain.status else plain.message
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
    where = f"{report.judge} at {report.endpoint or 'its default endpoint'}"
    return (
        f"no answer from {where} ({shorten(one_line(detail), 120)}): check the base URL, "
        "the key, and that the server is running"
    )
