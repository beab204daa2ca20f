"""`howtobench`: the paper's analyses on inspect logs of our tasks, as tables and plots.

Each subcommand runs one study of `howtobench.studies`, prints its tables and notes, and
with `--out DIR` writes them as CSV and Markdown with its PNG figures and its notes;
`howtobench annotate ...` runs the rating studio (`howtobench.annotate`), whose ratings
`metaeval` reads. Bad input (a file that is no inspect log, a log of another task,
unknown rated ids, a rating that is not a finite number, no overlap, a missing score,
a campaign option that cannot be met) exits with status 2 and one line giving the reason.
`howtobench build ...` makes a benchmark data folder from a corpus (`howtobench.construct`):
a bad corpus line exits with status 2 in one line naming file, line and field, and a
step that did not finish with status 1 and how to resume. `howtobench check-logs`
exits 1 when a run's logs say it did not finish (`inspect eval` itself exits 0 then).
Every numeric option is checked by its argparse type (`howtobench.options`): a value
out of range is refused in argparse's one line, with status 2. The parser is built from
light modules alone and each command imports what it runs when it runs, so `howtobench
--help` (and every command's) loads neither inspect-ai nor pandas, scipy or matplotlib.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from howtobench import options
from howtobench.annotate.campaign_options import KINDS, REFERENCE_MODES, Options
from howtobench.annotate.commands import DEFAULT_URL, export_file, new_campaign, show_links
from howtobench.constants import DEFAULT_LIMIT, DEFAULT_RESAMPLES, DEFAULT_SCORES, DEFAULT_TASKS
from howtobench.construct.commands import add_build_command

if TYPE_CHECKING:
    from howtobench.studies import StudyResult

LOGS_HELP = "inspect log files or folders of logs (searched recursively)"
CAMPAIGN = Options()  # the defaults of `howtobench annotate new`


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def _study(
    sub: argparse._SubParsersAction,  # type: ignore[type-arg]
    name: str,
    summary: str,
    run: Callable[[argparse.Namespace], StudyResult],
) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = sub.add_parser(name, help=summary, description=summary)
    parser.add_argument(
        "--out", type=Path, metavar="DIR", help="write <study>_*.csv, .md, .png and _notes.txt"
    )
    parser.set_defaults(run=run)
    return parser


# The commands that need inspect-ai, pandas or the studio's server: each imports its
# module when it runs.


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
    from howtobench.studies.report import report, with_files

    return with_files(report(a.logs, a.metric, a.bootstrap, a.seed), a.out)


def _cost(a: argparse.Namespace) -> StudyResult:
    from howtobench.studies.cost import cost

    return cost(a.logs, a.prices)


def _serve(a: argparse.Namespace) -> None:
    from howtobench.annotate.app import serve

    serve(a.db, a.host, a.port)


def _export_plan(a: argparse.Namespace) -> None:
    from howtobench.studies.plans import export_plan

    print(export_plan(a.logs, a.out))


def _run_judge_check(a: argparse.Namespace) -> None:
    from howtobench.judge_check import run_command

    run_command(a)


def _run_check_logs(a: argparse.Namespace) -> int:
    from howtobench.logcheck import run_command

    return run_command(a)


def _options(args: argparse.Namespace) -> Options:
    return Options(
        args.instructions,
        tuple(args.raters),
        args.raters_per_writing,
        args.seed,
        args.kind,
        args.reference,
    )


def _annotate(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    summary = "the rating studio: experts rate writings in a browser (paper section 5.2)"
    group = sub.add_parser("annotate", help=summary, description=summary)
    actions = group.add_subparsers(dest="action", required=True, metavar="ACTION")

    what = "a campaign in a new SQLite file, from the writings of inspect logs"
    p = actions.add_parser("new", help=what, description=what)
    p.add_argument("db", type=Path, metavar="DB", help="the campaign file to create")
    p.add_argument("--logs", nargs="+", required=True, metavar="LOGS", help=LOGS_HELP)
    p.add_argument(
        "--instructions",
        type=options.count,
        metavar="N",
        help="how many (default: all written by every writer)",
    )
    p.add_argument(
        "--raters",
        type=_names,
        default=list(CAMPAIGN.raters),
        help=f"comma list of rater names (default {','.join(CAMPAIGN.raters)})",
    )
    p.add_argument(
        "--raters-per-writing",
        type=options.count,
        default=CAMPAIGN.per_writing,
        metavar="K",
        help=f"default {CAMPAIGN.per_writing}",
    )
    p.add_argument(
        "--seed",
        type=options.seed,
        default=CAMPAIGN.seed,
        help=f"seed of the sampling and orders (default {CAMPAIGN.seed})",
    )
    p.add_argument(
        "--kind",
        choices=KINDS,
        default=CAMPAIGN.kind,
        help="rate each writing 1-5, or pick the best",
    )
    p.add_argument(
        "--reference",
        choices=REFERENCE_MODES,
        default=CAMPAIGN.reference,
        help="rate: show the reference as a 4; pick: put it among the candidates",
    )
    p.set_defaults(run=lambda a: print(new_campaign(a.db, a.logs, _options(a))))

    what = "the admin link and each rater's private link"
    p = actions.add_parser("links", help=what, description=what)
    p.add_argument("db", type=Path, metavar="DB")
    p.add_argument(
        "--url", default=DEFAULT_URL, help=f"where raters reach the studio ({DEFAULT_URL})"
    )
    p.add_argument(
        "--json", action="store_true", help='print {"admin": URL, "raters": {name: URL}}'
    )
    p.set_defaults(run=lambda a: print(show_links(a.db, a.url, a.json)))

    what = "serve the rater and admin pages (Ctrl-C stops)"
    p = actions.add_parser("serve", help=what, description=what)
    p.add_argument("db", type=Path, metavar="DB")
    p.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (this machine only)")
    p.add_argument(
        "--port", type=options.port, default=8780, help="default 8780 (0: any free port)"
    )
    p.set_defaults(run=_serve)

    what = "write the ratings (or picks) as CSV or JSONL, by the file's suffix"
    p = actions.add_parser("export", help=what, description=what)
    p.add_argument("db", type=Path, metavar="DB")
    p.add_argument("--out", required=True, type=Path, metavar="FILE", help="ratings.csv or .jsonl")
    p.set_defaults(run=lambda a: print(export_file(a.db, a.out)))


def _plan(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    summary = "judge plans: every instruction's negotiated weights as one file for every worker"
    group = sub.add_parser("plan", help=summary, description=summary)
    actions = group.add_subparsers(dest="action", required=True, metavar="ACTION")
    what = "write the weights of howtobench/negotiate (or ToW) logs as a plan file"
    p = actions.add_parser("export", help=what, description=what)
    p.add_argument("logs", nargs="+", metavar="LOGS", help=LOGS_HELP)
    p.add_argument(
        "--out", required=True, metavar="PLAN", help="the plan file to write (PLAN.jsonl)"
    )
    p.set_defaults(run=_export_plan)


def _judge_check(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    summary = "before a large run: can this judge serve Tree-of-Writing? (a small real run)"
    p = sub.add_parser("judge-check", help=summary, description=summary)
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
        type=_names,
        default=list(DEFAULT_TASKS),
        help=f"comma list (default {','.join(DEFAULT_TASKS)})",
    )
    p.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="YAML/JSON of model prices per million tokens (as for howtobench cost)",
    )
    p.add_argument("--log-dir", metavar="DIR", help="keep the check's logs here")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(run=_run_judge_check)


def _check_logs(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    summary = "exit 1 if a run did not finish (inspect eval exits 0 then), naming each"
    p = sub.add_parser("check-logs", help=summary, description=summary)
    p.add_argument("logs", nargs="+", metavar="LOGS", help=LOGS_HELP)
    p.set_defaults(run=_run_check_logs)


class _OneLineParser(argparse.ArgumentParser):
    """argparse, with a mistake said in one line (exit 2) instead of the usage block and
    the error: the line names the option, and `--help` is one step away."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog="howtobench",
        description="Analyses of HoWToBench inspect logs (paper arXiv 2604.19071).",
    )
    sub = parser.add_subparsers(dest="study", required=True, metavar="COMMAND")

    p = _study(
        sub,
        "metaeval",
        "correlation of each metric with human ratings, system and sample level (Table 3)",
        _metaeval,
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
    p.add_argument(
        "--bootstrap",
        type=options.count_or_zero,
        default=DEFAULT_RESAMPLES,
        metavar="N",
        help=f"resamples (default {DEFAULT_RESAMPLES}; 0: none)",
    )
    p.add_argument("--seed", type=options.seed, default=0, help="bootstrap seed (default 0)")

    p = _study(
        sub,
        "judges",
        "Pearson matrix and heatmap between judges, and humans with --ratings (figure 4)",
        _judges,
    )
    p.add_argument("logs", nargs="+", metavar="LOGS", help=LOGS_HELP)
    p.add_argument("--ratings", type=Path, metavar="FILE", help="human ratings as one more judge")
    p.add_argument("--metric", default="tow.overall", help="score of a grader log without panel")

    p = _study(
        sub,
        "consistency",
        "fluctuation (delta, sigma) of ToW weights or autoplan shares across epochs (sec. 5.3)",
        _consistency,
    )
    p.add_argument("logs", nargs="+", metavar="LOGS", help=LOGS_HELP)

    p = _study(
        sub,
        "robustness",
        "mean score change per metric under each disturbance, pooled over writers (Table 7)",
        _robustness,
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
        _lengths,
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
        "leaderboard by task and genre with paired-bootstrap intervals and rank ranges, "
        "per-node means, weight box plots (Table 4, figs 3, 6); with --out also "
        "leaderboard.json and report.html",
        _report,
    )
    p.add_argument("logs", nargs="+", metavar="LOGS", help=LOGS_HELP)
    p.add_argument("--metric", default="tow.overall", help="the leaderboard score")
    p.add_argument(
        "--bootstrap",
        type=options.count_or_zero,
        default=DEFAULT_RESAMPLES,
        metavar="N",
        help=f"resamples of the intervals and rank ranges (default {DEFAULT_RESAMPLES}; 0: none)",
    )
    p.add_argument("--seed", type=options.seed, default=0, help="bootstrap seed (default 0)")

    p = _study(
        sub,
        "cost",
        "tokens and dollars per model and role, and per scored writing",
        _cost,
    )
    p.add_argument("logs", nargs="+", metavar="LOGS", help=LOGS_HELP)
    p.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help="YAML/JSON of model prices per million tokens (inspect's --model-cost-config format)",
    )
    _annotate(sub)
    _plan(sub)
    _check_logs(sub)
    _judge_check(sub)
    add_build_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # What the commands raise and print with: a `--help` or a bad option has exited by now.
    from howtobench.construct.runs import BuildIncomplete
    from howtobench.errors import UserError
    from howtobench.studies import show, write

    command = " ".join(filter(None, (args.study, getattr(args, "action", None))))
    try:
        result = args.run(args)
    except UserError as err:  # study errors included
        print(f"howtobench {command}: error: {err}", file=sys.stderr)
        return 2
    except BuildIncomplete as err:  # the model stopped answering: rerun to resume
        print(f"howtobench {command}: {err}", file=sys.stderr)
        return 1
    if isinstance(result, int):  # a command that has printed its lines and chosen a status
        return result
    if result is None:  # an annotate or build command, which has printed what it did
        return 0
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
