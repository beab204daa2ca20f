"""`howtobench lm-eval path` and `howtobench lm-eval import`: the parser (light: it is
built for every `--help`), each action importing what it runs when it runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from howtobench.commandline.commands import add_actions, add_command
from howtobench.lmeval import TASKS_DIR

if TYPE_CHECKING:
    from howtobench.commandline.commands import Commands

__all__ = ["SUMMARY", "add_lm_eval_command"]

SUMMARY = "HoWToBench in lm-evaluation-harness: its task folder, and its writings for ToW"


def add_lm_eval_command(commands: Commands) -> None:
    """`howtobench lm-eval path` and `howtobench lm-eval import`."""
    actions = add_actions(commands, "lm-eval", SUMMARY)
    p = add_command(
        actions, "path", "print the folder of the lm-eval tasks, for lm_eval --include_path"
    )
    p.set_defaults(run=lambda args: print(TASKS_DIR))
    p = add_command(
        actions,
        "import",
        "turn lm_eval --log_samples output into a data folder that inspect judges with ToW",
    )
    p.add_argument(
        "output",
        type=Path,
        metavar="OUTPUT_PATH",
        help="lm_eval's --output_path, or a results file",
    )
    p.add_argument(
        "--writer",
        metavar="NAME",
        help="the writer's name: inspect judges it as --model replay/NAME "
        "(default: lm-eval's name of the model)",
    )
    p.add_argument(
        "--out", type=Path, required=True, metavar="DIR", help="the data folder to write"
    )
    p.set_defaults(run=_import)


def _import(args: argparse.Namespace) -> None:
    from howtobench.lmeval.imports import import_output

    print("\n".join(import_output(args.output, args.writer, args.out)))
