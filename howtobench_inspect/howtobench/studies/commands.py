"""The studies as `howtobench` commands (metaeval, judges, consistency, robustness, lengths,
report, cost) and `howtobench plan export`, registered by `howtobench.cli`.

Each study command runs one study of this package, prints its tables and notes, and with
`--out DIR` writes them as CSV and Markdown with its PNG figures and its notes. The
parsers need only light modules (and the package's `__init__` imports none); each command
imports its study, with pandas and inspect-ai, when it runs, so its `--help` stays light.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from howtobench.commands import (
    add_actions,
    add_command,
    add_count,
    add_logs,
    add_prices,
    add_seed,
    names,
)
from howtobench.constants import DEFAULT_RESAMPLES, DEFAULT_SCORES

if TYPE_CHECKING:
    from howtobench.commands import Commands
    from howtobench.studies import StudyResult

Study = Callable[[argparse.Namespace], "StudyResult"]
PLAN_SUMMARY = "judge plans: every instruction's negotiated weights as one file for every worker"


def add_study_commands(commands: Commands) -> None:
    """The seven studies, in the order `howtobench --help` lists them."""
    p = _study(
        commands,
        "metaeval",
        "correlation of each metric with human ratings, system and sample level (Table 3)",
        _metaeval,
    )
    p.add_argument(
        "--ratings",
        required=True,
        type=Path,
        metavar="FILE",
        help="CSV or JSONL with infer_id, model, score and optionally rater",
    )
    p.add_argument("--metrics", type=names, help="comma list (default: every metric)")
    _add_bootstrap(p, "resamples")

    p = _study(
        commands,
        "judges",
        "Pearson matrix and heatmap between judges, and humans with --ratings (figure 4)",
        _judges,
    )
    p.add_argument("--ratings", type=Path, metavar="FILE", help="human ratings as one more judge")
    p.add_argument("--metric", default="tow.overall", help="score of a grader log without panel")

    _study(
        commands,
        "consistency",
        "fluctuation (delta, sigma) of ToW weights or autoplan shares across epochs (sec. 5.3)",
        _consistency,
    )
    _add_robustness(commands)

    p = _study(
        commands,
        "lengths",
        "input and output length against scores, per task (Table 6, figure 5)",
        _lengths,
    )
    p.add_argument(
        "--scores",
        type=names,
        default=list(DEFAULT_SCORES),
        help=f"comma list of metrics (default: {','.join(DEFAULT_SCORES)})",
    )

    p = _study(
        commands,
        "report",
        "leaderboard by task and genre with paired-bootstrap intervals and rank ranges, "
        "per-node means, weight box plots (Table 4, figs 3, 6); with --out also "
        "leaderboard.json and report.html",
        _report,
    )
    p.add_argument("--metric", default="tow.overall", help="the leaderboard score")
    _add_bootstrap(p, "resamples of the intervals and rank ranges")

    p = _study(
        commands, "cost", "tokens and dollars per model and role, and per scored writing", _cost
    )
    add_prices(p, "inspect's --model-cost-config format")


def add_plan_command(commands: Commands) -> None:
    """`howtobench plan export`: the judge plans of `studies.plans`."""
    actions = add_actions(commands, "plan", PLAN_SUMMARY)
    p = add_command(
        actions, "export", "write the weights of howtobench/negotiate (or ToW) logs as a plan file"
    )
    add_logs(p)
    p.add_argument(
        "--out", required=True, metavar="PLAN", help="the plan file to write (PLAN.jsonl)"
    )
    p.set_defaults(run=_export_plan)


def _study(
    commands: Commands, name: str, summary: str, study: Study, logs: bool = True
) -> argparse.ArgumentParser:
    """A study's command with `--out` and (unless `logs` is false) the logs it reads."""
    p = add_command(commands, name, summary)
    p.add_argument(
        "--out", type=Path, metavar="DIR", help="write <study>_*.csv, .md, .png and _notes.txt"
    )
    if logs:
        add_logs(p)
    p.set_defaults(run=partial(_present, study))
    return p


def _add_robustness(commands: Commands) -> None:
    """Robustness reads two kinds of logs, the clean ones and the perturbed ones."""
    p = _study(
        commands,
        "robustness",
        "mean score change per metric under each disturbance, pooled over writers (Table 7)",
        _robustness,
        logs=False,
    )
    p.add_argument(
        "clean",
        metavar="CLEAN_LOG",
        help="the log of the undisturbed writings, or a folder of such logs (one run per "
        "writer and task); each perturbed sample is paired with the clean sample of the same "
        "writer, task, sample id and epoch",
    )
    add_logs(p, "perturbed", "PERTURBED_LOGS")
    p.add_argument(
        "--clean",
        dest="more_clean",
        action="append",
        default=[],
        metavar="LOG",
        help="another clean log or folder, pooled with CLEAN_LOG (repeatable)",
    )


def _add_bootstrap(parser: argparse.ArgumentParser, what: str) -> None:
    """`--bootstrap N` resamples (0: none) and the `--seed` of their draws."""
    resamples = DEFAULT_RESAMPLES
    add_count(
        parser, "--bootstrap", f"{what} (default {resamples}; 0: none)", resamples, or_zero=True
    )
    add_seed(parser, "bootstrap seed")


def _present(study: Study, args: argparse.Namespace) -> None:
    """Run the study, write its files to `--out` (if given), then print its tables and
    notes and the files written. A folder that cannot be written is the user's error."""
    from howtobench.errors import UserError
    from howtobench.studies import show, write

    result = study(args)
    written: list[Path] = []
    if args.out:
        try:
            written = write(result, args.out)
        except OSError as err:
            raise UserError(f"cannot write to {args.out}: {err}") from None
    try:
        show(result, sys.stdout)
        print("".join(f"\nwrote {path}" for path in written))
    except BrokenPipeError:  # the reader (e.g. `head`) has gone: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


# Each study imports its module (pandas, inspect-ai) when it runs.


def _metaeval(a: argparse.Namespace) -> StudyResult:
    from howtobench.studies import metaeval

    return metaeval(a.logs, a.ratings, a.metrics, a.bootstrap, a.seed)


def _judges(a: argparse.Namespace) -> StudyResult:
    from howtobench.studies import judges

    return judges(a.logs, a.ratings, a.metric)


def _consistency(a: argparse.Namespace) -> StudyResult:
    from howtobench.studies import consistency

    return consistency(a.logs)


def _robustness(a: argparse.Namespace) -> StudyResult:
    from howtobench.studies import robustness

    return robustness([a.clean, *a.more_clean], a.perturbed)


def _lengths(a: argparse.Namespace) -> StudyResult:
    from howtobench.studies import lengths

    return lengths(a.logs, a.scores)


def _report(a: argparse.Namespace) -> StudyResult:
    from howtobench.studies.leaderboard_report import report, with_files

    return with_files(report(a.logs, a.metric, a.bootstrap, a.seed), a.out)


def _cost(a: argparse.Namespace) -> StudyResult:
    from howtobench.studies.cost import cost

    return cost(a.logs, a.prices)


def _export_plan(a: argparse.Namespace) -> None:
    from howtobench.studies.plans import export_plan

    print(export_plan(a.logs, a.out))
