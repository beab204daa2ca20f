"""`howtobench judge-check`: the command's parser, which imports the check (and inspect-ai)
only when the command runs, so that `judge-check --help` stays light.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from typing import TYPE_CHECKING

from howtobench.commandline.commands import add_command, add_prices, names
from howtobench.commandline.constants import DEFAULT_LIMIT, DEFAULT_TASKS
from howtobench.judge.defaults import DEFAULT_MAX_CONNECTIONS, DEFAULT_TIME_LIMIT
from howtobench.writing.damages import LOWERING

if TYPE_CHECKING:
    from howtobench.commandline.commands import Commands

__all__ = ["CHECK_OPTIONS", "SUMMARY", "add_judge_check_command", "run_judge_check"]

SUMMARY = "before a large run: can this judge serve Tree-of-Writing? (a small real run)"
# The options that `judge_check()` takes as they are, under their own names.
CHECK_OPTIONS = (
    "dataset", "limit", "tasks", "replay", "prices", "log_dir", "quality", "against",
    "max_connections",
    "time_limit", "weights",
)  # fmt: skip


def add_judge_check_command(commands: Commands) -> None:
    """`howtobench judge-check`: the judge as `--model-role`, and what to check it on."""
    p = add_command(commands, "judge-check", SUMMARY)
    p.add_argument(
        "--model-role",
        action="append",
        required=True,
        metavar="grader=MODEL",
        help="the judge, as inspect's --model-role takes it: a model name or YAML/JSON "
        "such as 'grader={model: openai-api/vllm/qwen, temperature: 0}'",
    )
    p.add_argument("--dataset", default="demo", help="demo (default), a data folder or JSONL")
    p.add_argument(
        "--replay", metavar="MODEL", help="the stored writer (default: the data's first)"
    )
    p.add_argument(
        "--limit",
        type=int,  # checked by judge-check itself, with the other inputs
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"writings per task (default {DEFAULT_LIMIT})",
    )
    p.add_argument(
        "--tasks",
        type=names,
        default=list(DEFAULT_TASKS),
        help=f"comma list (default {','.join(DEFAULT_TASKS)})",
    )
    add_prices(p, "as for howtobench cost")
    p.add_argument("--log-dir", metavar="DIR", help="keep the check's logs here")
    p.add_argument(
        "--quality",
        action="store_true",
        help=f"also judge damaged copies ({', '.join(LOWERING)}), each instruction with "
        "another's writing (swap: a judge that scores text it recognises fails it) and a "
        "retest of the writings: does the judge see each? (each writing judged twice, once "
        "per damage and once swapped; docs/judges.md)",
    )
    p.add_argument(
        "--weights",
        default="negotiated",
        metavar="uniform|PLAN",
        help="the tasks' -T weights: negotiated by the judge (default), uniform (no "
        "negotiator call), or a plan file (howtobench plan export): checks a judge whose "
        "negotiator is not usable",
    )
    p.add_argument(
        "--against",
        nargs="+",
        default=[],
        metavar="LOGS",
        help="a reference judge's ToW logs (files or folders) of the same writings: report "
        "Pearson and Kendall of overall with it",
    )
    p.add_argument(
        "--max-connections",
        type=int,  # checked by judge-check itself, with the other inputs
        default=DEFAULT_MAX_CONNECTIONS,
        metavar="N",
        help=f"connections to the judge at once (default {DEFAULT_MAX_CONNECTIONS}, for a "
        "local server with one slot; give the server's parallel slots, or more for a hosted "
        "API)",
    )
    p.add_argument(
        "--time-limit",
        type=float,
        default=DEFAULT_TIME_LIMIT,
        metavar="SECONDS",
        help="stop the whole check after this long, reporting what was judged "
        f"(default {DEFAULT_TIME_LIMIT:g})",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=run_judge_check)  # the core install's (`--against` checks its extra)


def run_judge_check(args: argparse.Namespace) -> None:
    """Print the report (or its JSON); raise `JudgeCannotServe` with the first reason
    when the judge cannot serve."""
    from howtobench.judge_check.check import JudgeCannotServe, judge_check
    from howtobench.judge_check.report import as_json, render

    # what the check is doing, for a person at a terminal (a real judge takes a while)
    say = partial(print, "howtobench judge-check:", file=sys.stderr)
    progress = say if sys.stderr.isatty() else None
    given = {name: getattr(args, name) for name in CHECK_OPTIONS}
    report = judge_check(args.model_role, progress=progress, **given)
    if args.json:
        print(json.dumps(as_json(report), ensure_ascii=False))
    elif not report.stopped:  # an outage is its one line, below
        print(render(report))
    if not report.ok:
        if report.quality is not None and not report.usability_reasons:
            raise JudgeCannotServe(report.quality.verdict)  # usable, but blind to quality
        reasons = report.reasons
        first = reasons[0]
        more = f" (and {len(reasons) - 1} more reasons in the report)" if len(reasons) > 1 else ""
        ran_out = report.summary is not None and report.summary.ran_out is not None
        raise JudgeCannotServe(
            first
            if report.stopped or ran_out
            else f"the judge cannot serve Tree-of-Writing: {first}{more}"
        )
