"""The studies as `howtobench` commands, and `howtobench plan export`.

The parsers need only light modules; each command imports its study, with pandas and
inspect-ai, when it runs, so its `--help` stays light.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from howtobench.commandline.commands import (
    add_actions,
    add_command,
    add_count,
    add_logs,
    add_prices,
    add_seed,
    names,
)
from howtobench.commandline.constants import DEFAULT_RESAMPLES, DEFAULT_SCORES

if TYPE_CHECKING:
    from howtobench.commandline.commands import Commands
    from howtobench.studies.tables import StudyResult

__all__ = ["STUDIES", "add_plan_command", "add_study_commands"]

Run = Callable[[Callable[..., Any], argparse.Namespace], "StudyResult"]
PLAN_SUMMARY = "judge plans: every instruction's negotiated weights as one file for every worker"


@dataclass(frozen=True)
class StudyCommand:
    """A study as a command and a public name of `howtobench.studies`: `module` defines the
    function named as the command, `run` calls it with the parsed options, `options` adds
    its own (beside `--out`, and LOGS unless `reads_logs` is false)."""

    module: str
    summary: str
    run: Run
    options: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    reads_logs: bool = True


def _metaeval_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--ratings",
        required=True,
        type=Path,
        metavar="FILE",
        help="CSV or JSONL with infer_id, model, score and optionally rater",
    )
    p.add_argument("--metrics", type=names, help="comma list (default: every metric)")
    _add_bootstrap(p, "resamples")


def _judges_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ratings", type=Path, metavar="FILE", help="human ratings as one more judge")
    p.add_argument("--metric", default="tow.overall", help="score of a grader log without panel")


def _robustness_options(p: argparse.ArgumentParser) -> None:
    """Robustness reads two kinds of logs, the clean ones and the perturbed ones."""
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


def _lengths_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--scores",
        type=names,
        default=list(DEFAULT_SCORES),
        help=f"comma list of metrics (default: {','.join(DEFAULT_SCORES)})",
    )


def _report_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--metric", default="tow.overall", help="the leaderboard score")
    _add_bootstrap(p, "resamples of the intervals and rank ranges")


def _report(report: Callable[..., Any], a: argparse.Namespace) -> StudyResult:
    """With `--out`, the board's JSON and the page too (`_present` writes the rest)."""
    from howtobench.studies.leaderboard_report import Report, publish

    result: Report = report(a.logs, a.metric, a.bootstrap, a.seed)
    if a.out is not None:
        for path in publish(result, a.out):
            print(f"wrote {path}")
    return result


# The studies, in the order `howtobench --help` lists them. A new study is its module and
# one entry here (docs/extending.md).
STUDIES: dict[str, StudyCommand] = {
    "metaeval": StudyCommand(
        "howtobench.studies.human_correlation",
        "correlation of each metric with human ratings, system and sample level (Table 3)",
        lambda study, a: study(a.logs, a.ratings, a.metrics, a.bootstrap, a.seed),
        _metaeval_options,
    ),
    "judges": StudyCommand(
        "howtobench.studies.judge_agreement",
        "Pearson matrix and heatmap between judges, and humans with --ratings (figure 4)",
        lambda study, a: study(a.logs, a.ratings, a.metric),
        _judges_options,
    ),
    "consistency": StudyCommand(
        "howtobench.studies.weight_consistency",
        "fluctuation (delta, sigma) of ToW weights or autoplan shares across epochs (sec. 5.3)",
        lambda study, a: study(a.logs),
    ),
    "robustness": StudyCommand(
        "howtobench.studies.perturbation_effects",
        "mean score change per metric under each disturbance, pooled over writers (Table 7)",
        lambda study, a: study([a.clean, *a.more_clean], a.perturbed),
        _robustness_options,
        reads_logs=False,
    ),
    "lengths": StudyCommand(
        "howtobench.studies.length_bias",
        "input and output length against scores, per task (Table 6, figure 5)",
        lambda study, a: study(a.logs, a.scores),
        _lengths_options,
    ),
    "report": StudyCommand(
        "howtobench.studies.leaderboard_report",
        "leaderboard by task and genre with paired-bootstrap intervals and rank ranges, "
        "per-node means, weight box plots (Table 4, figs 3, 6); with --out also "
        "leaderboard.json and report.html",
        _report,
        _report_options,
    ),
    "cost": StudyCommand(
        "howtobench.studies.token_costs",
        "tokens and dollars per model and role, and per scored writing",
        lambda study, a: study(a.logs, a.prices),
        lambda p: add_prices(p, "inspect's --model-cost-config format"),
    ),
}


def add_study_commands(commands: Commands) -> None:
    """Every study of `STUDIES` as a command: `--out`, the logs it reads, its options."""
    for name, study in STUDIES.items():
        p = add_command(commands, name, study.summary)
        p.add_argument(
            "--out", type=Path, metavar="DIR", help="write <study>_*.csv, .md, .png and _notes.txt"
        )
        if study.reads_logs:
            add_logs(p)
        study.options(p)
        p.set_defaults(run=partial(_present, name), extra="studies")


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


def _add_bootstrap(parser: argparse.ArgumentParser, what: str) -> None:
    """`--bootstrap N` resamples (0: none) and the `--seed` of their draws."""
    resamples = DEFAULT_RESAMPLES
    add_count(
        parser, "--bootstrap", f"{what} (default {resamples}; 0: none)", resamples, or_zero=True
    )
    add_seed(parser, "bootstrap seed")


def _present(name: str, args: argparse.Namespace) -> None:
    """Run the study (its module, with pandas and inspect-ai, imported now), write its
    files to `--out`, then print its tables and notes and the files written."""
    from howtobench.studies.tables import show, write
    from howtobench.vocabulary.errors import UserError

    study = STUDIES[name]
    result = study.run(getattr(importlib.import_module(study.module), name), args)
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


def _export_plan(a: argparse.Namespace) -> None:
    from howtobench.studies.plans import export_plan

    print(export_plan(a.logs, a.out))
