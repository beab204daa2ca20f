"""`howtobench build CORPUS --out DIR --model MODEL ...`: the build as a command.

A bad corpus line or option stops with one line and status 2 (a `UserError`, as the
other subcommands' bad input); a step that did not finish stops with one line saying
how to resume and status 1 (`BuildIncomplete`).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from howtobench.build.pipeline import BuildOptions, build_benchmark, parse_tasks
from howtobench.build.quality import DEFAULT_THRESHOLD
from howtobench.build.runs import EvalOptions
from howtobench.dataset import TASKS

SUMMARY = "build a benchmark data folder from a corpus of human texts (paper sections 4.3-4.6)"


def add_build_command(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """The `build` subcommand of `howtobench`."""
    p = sub.add_parser("build", help=SUMMARY, description=SUMMARY)
    p.add_argument(
        "corpus", type=Path, metavar="CORPUS", help="JSONL: text, id, genre, language, source"
    )
    p.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="the data folder to write"
    )
    p.add_argument(
        "--model", required=True, help="the model that does the LLM steps (inspect's name)"
    )
    p.add_argument(
        "--tasks",
        type=parse_tasks,
        default=TASKS,
        help=f"comma list of tasks to build (default: {','.join(TASKS)})",
    )
    p.add_argument(
        "--threshold",
        type=int,
        default=DEFAULT_THRESHOLD,
        help=f"lowest quality score (1-5) a text needs to be kept (default {DEFAULT_THRESHOLD})",
    )
    p.add_argument("--per-genre", type=int, metavar="N", help="keep at most N texts of each genre")
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the cap, tasks and gaps (default 0)"
    )
    p.add_argument("--model-base-url", help="the model's base URL (inspect's --model-base-url)")
    p.add_argument("--max-connections", type=int, metavar="N", help="concurrent calls to the model")
    p.add_argument(
        "--max-retries", type=int, metavar="N", help="retries of a failed call (default 4)"
    )
    p.add_argument(
        "--retry-attempts",
        type=int,
        default=2,
        metavar="N",
        help="times inspect retries a step that did not finish, before the build stops (default 2)",
    )
    p.set_defaults(run=run_build)


def run_build(args: argparse.Namespace) -> None:
    """Build, then say what was written."""
    options = BuildOptions(args.tasks, args.threshold, args.per_genre, args.seed)
    evals = EvalOptions(
        args.model,
        model_base_url=args.model_base_url,
        max_connections=args.max_connections,
        max_retries=args.max_retries,
        retry_attempts=args.retry_attempts,
    )
    result = build_benchmark(args.corpus, args.out, evals, options)
    made = ", ".join(f"{task} {n}" for task, n in result.items.items() if task in options.tasks)
    print(
        f"built {result.out}: {made}; {result.rejected} texts rejected "
        f"({result.out / 'rejected.jsonl'}); summary in {result.out / 'summary.md'}"
    )
