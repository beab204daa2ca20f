"""`howtobench build CORPUS --out DIR --model MODEL ...`: the build as a command.

A bad corpus line or option stops with one line and status 2 (`UserError`); a step that
did not finish stops with one line saying how to resume and status 1 (`BuildIncomplete`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from howtobench.commandline import options
from howtobench.commandline.commands import add_command, add_count, add_seed
from howtobench.commandline.constants import DEFAULT_THRESHOLD, HIGHEST, LOCK_FILE, LOWEST
from howtobench.vocabulary.words import TASKS

if TYPE_CHECKING:
    from howtobench.commandline.commands import Commands

__all__ = ["add_build_command", "check_out"]

SUMMARY = "build a benchmark data folder from a corpus of human texts (paper sections 4.3-4.6)"


def add_build_command(commands: Commands) -> None:
    """The `build` subcommand of `howtobench`."""
    p = add_command(commands, "build", SUMMARY)
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
        type=options.parse_tasks,
        default=TASKS,
        help=f"comma list of tasks to build (default: {','.join(TASKS)})",
    )
    p.add_argument(
        "--threshold",
        type=options.whole_number(LOWEST, HIGHEST),
        default=DEFAULT_THRESHOLD,
        help=f"lowest quality score (1-5) a text needs to be kept (default {DEFAULT_THRESHOLD})",
    )
    add_count(p, "--per-genre", "keep at most N texts of each genre")
    add_seed(p, "seed of the cap, tasks and gaps")
    p.add_argument("--model-base-url", help="the model's base URL (inspect's --model-base-url)")
    add_count(p, "--max-connections", "concurrent calls to the model")
    add_count(p, "--max-retries", "retries of a failed call (default 4)", or_zero=True)
    add_count(
        p,
        "--retry-attempts",
        "times inspect retries a step that did not finish, before the build stops (default 2)",
        2,
        or_zero=True,
    )
    p.set_defaults(run=run_build, extra="construct")


def run_build(args: argparse.Namespace) -> None:
    """Build, then say what was written."""
    from howtobench.construct.options import BuildOptions
    from howtobench.construct.pipeline import build_benchmark
    from howtobench.construct.runs import EvalOptions

    check_out(args.out)
    chosen = BuildOptions(args.tasks, args.threshold, args.per_genre, args.seed)
    evals = EvalOptions(
        args.model,
        model_base_url=args.model_base_url,
        max_connections=args.max_connections,
        max_retries=args.max_retries,
        retry_attempts=args.retry_attempts,
    )
    result = build_benchmark(args.corpus, args.out, evals, chosen)
    made = ", ".join(f"{task} {n}" for task, n in result.items.items() if task in chosen.tasks)
    print(
        f"built {result.out}: {made}; {result.rejected} texts rejected "
        f"({result.out / 'rejected.jsonl'}); summary in {result.out / 'summary.md'}"
    )


# What a folder that a build has written to holds: the lock is made before the first
# step, the manifest after the last one.
BUILD_MARKERS = (LOCK_FILE, "manifest.json")


def check_out(out: Path) -> None:
    """`--out` must be a new folder, an empty one or an earlier build's; anything else is
    refused before the corpus is read, so a folder of other files does not get a build's
    files mixed into it."""
    from howtobench.vocabulary.errors import UserError

    existing = next((p for p in (out, *out.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        where = "is a file" if existing == out else f"is inside {existing}, which is a file"
        raise UserError(f"--out {out}: {where}, not a folder; give a new or empty folder")
    if existing != out:
        return
    try:
        empty = next(out.iterdir(), None) is None
    except OSError as err:
        raise UserError(f"--out {out}: cannot read it: {err.strerror or err}") from None
    if not empty and not any((out / name).exists() for name in BUILD_MARKERS):
        raise UserError(
            f"--out {out}: holds files, and no earlier build's ({' or '.join(BUILD_MARKERS)}); "
            "give a new or empty folder, or the folder of the build to resume"
        )
