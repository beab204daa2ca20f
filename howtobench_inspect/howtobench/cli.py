"""`howtobench`: the paper's analyses on inspect logs of our tasks, as tables and plots.

Each subcommand runs one study of `howtobench.studies`, prints its tables and notes, and
with `--out DIR` writes them as CSV and Markdown with its PNG figures and its notes. Bad
input (a file that is no inspect log, a log of another task, unknown rated ids, a rating
that is not a finite number, no overlap, a missing score) exits with status 2 and one
line giving the reason.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from howtobench.studies import (
    StudyError,
    StudyResult,
    consistency,
    judges,
    lengths,
    metaeval,
    report,
    robustness,
    show,
    write,
)
from howtobench.studies.cost import cost
from howtobench.studies.lengths import DEFAULT_SCORES

LOGS_HELP = "inspect log files or folders of logs (searched recursively)"


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _study(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    summary: str,
    run: Callable[[argparse.Namespace], StudyResult],
) -> argparse.ArgumentParser:
    parser = sub.add_parser(name, help=summary, description=summary)
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="write <study>_*.csv, .md, .png and _notes.txt"
    )
    parser.set_defaults(run=run)
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="howtobench",
        description="Analyses of HoWToBench inspect logs (paper arXiv 2604.19071).",
    )
    sub = parser.add_subparsers(dest="study", required=True, metavar="STUDY")

    p = _study(
        sub,
        "metaeval",
        "correlation of each metric with human ratings, system and sample level (Table 3)",
        lambda a: metaeval(a.logs, a.ratings, a.metrics, a.bootstrap, a.seed),
    )
    p.add_argument("logs", nargs="+", metavar="LOGS", help=LOGS_HELP)
    p.add_argument(
        "--ratings",
        required=True,
        type=Path,
        metavar="FILE",
        help="CSV or JSONL with infer_id, model, score and optionally rater",
    )
    p.add_argument("--metrics", type=_names, help="comma list (default: every metric)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="resamples (0: none)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")

    p = _study(
        sub,
        "judges",
        "Pearson matrix and heatmap between judges, and humans with --ratings (figure 4)",
        lambda a: judges(a.logs, a.ratings, a.metric),
    )
    p.add_argument("logs", nargs="+", metavar="LOGS", help=LOGS_HELP)
    p.add_argument("--ratings", type=Path, metavar="FILE", help="human ratings as one more judge")
    p.add_argument("--metric", default="tow.overall", help="score of a grader log without panel")

    p = _study(
        sub,
        "consistency",
        "fluctuation (delta, sigma) of ToW weights or autoplan shares across epochs (sec. 5.3)",
        lambda a: consistency(a.logs),
    )
    p.add_argument("logs", nargs="+", metavar="LOGS", help=LOGS_HELP)

    p = _study(
        sub,
        "robustness",
        "mean score change per metric under each disturbance, pooled over writers (Table 7)",
        lambda a: robustness([a.clean, *a.more_clean], a.perturbed),
    )
    p.add_argument(
        "clean",
        metavar="CLEAN_LOG",
        help="the log of the undisturbed writings, or a folder of such logs (one run per "
        "writer and task); each perturbed sample is paired with the clean sample of the same "
        "writer, task, sample id and epoch",
    )
    p.add_argument("perturbed", nargs="+", metavar="PERTURBED_LOGS", help=LOGS_HELP)
    p.add_argument(
        "--clean",
        dest="more_clean",
        action="append",
        default=[],
        metavar="LOG",
        help="another clean log or folder, pooled with CLEAN_LOG (repeatable)",
    )

    p = _study(
        sub,
        "lengths",
        "input and output length against scores, per task (Table 6, figure 5)",
        lambda a: lengths(a.logs, a.scores),
    )
    p.add_argument("logs", nargs="+", metavar="LOGS", help=LOGS_HELP)
    p.add_argument(
        "--scores",
        type=_names,
        default=list(DEFAULT_SCORES),
        help=f"comma list of metrics (default: {','.join(DEFAULT_SCORES)})",
    )

    p = _study(
        sub,
        "report",
        "leaderboard by task and genre, per-node means, weight box plots (Table 4, figs 3, 6)",
        lambda a: report(a.logs, a.metric),
    )
    p.add_argument("logs", nargs="+", metavar="LOGS", help=LOGS_HELP)
    p.add_argument("--metric", default="tow.overall", help="the leaderboard score")

    p = _study(
        sub,
        "cost",
        "tokens and dollars per model and role, and per scored writing",
        lambda a: cost(a.logs, a.prices),
    )
    p.add_argument("logs", nargs="+", metavar="LOGS", help=LOGS_HELP)
    p.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="YAML/JSON of model prices per million tokens (inspect's --model-cost-config format)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        result = args.run(args)
    except StudyError as err:
        print(f"howtobench {args.study}: error: {err}", file=sys.stderr)
        return 2
    written: list[Path] = []
    if args.out:
        try:
            written = write(result, args.out)
        except OSError as err:
            print(
                f"howtobench {args.study}: error: cannot write to {args.out}: {err}",
                file=sys.stderr,
            )
            return 2
    try:
        show(result, sys.stdout)
        print("".join(f"\nwrote {path}" for path in written))
    except BrokenPipeError:  # the reader (e.g. `head`) has gone: not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
