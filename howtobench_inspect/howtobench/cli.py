"""`howtobench`: the top-level parser, and the exit status of whatever command ran.

Bad input, and a command whose extra is not installed, is a `UserError`: status 2 and one
line giving the reason; a build step that did not finish, or a judge that cannot serve,
is a `BuildIncomplete`: status 1 and one line. Each command imports what it runs when it
runs, so `howtobench --help` loads neither inspect-ai nor pandas, scipy or matplotlib.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from howtobench.annotate.commands import add_annotate_command
from howtobench.commandline.commands import OneLineParser
from howtobench.commandline.extras import check_extra
from howtobench.construct.commands import add_build_command
from howtobench.judge_check.commands import add_judge_check_command
from howtobench.lmeval.commands import add_lm_eval_command
from howtobench.scale.logcheck import add_check_logs_command
from howtobench.scale.shards import add_shards_command
from howtobench.studies.commands import add_plan_command, add_study_commands

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="howtobench",
        description="Analyses of HoWToBench inspect logs (paper arXiv 2604.19071).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_study_commands(commands)  # in the order `--help` lists them
    add_annotate_command(commands)
    add_plan_command(commands)
    add_check_logs_command(commands)
    add_shards_command(commands)
    add_judge_check_command(commands)
    add_build_command(commands)
    add_lm_eval_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # What the commands raise: a `--help` or a bad option has exited by now.
    from howtobench.construct.runs import BuildIncomplete
    from howtobench.vocabulary.errors import UserError

    command = " ".join(filter(None, (args.command, getattr(args, "action", None))))
    try:
        if getattr(args, "extra", None):  # the part of the install the command needs
            check_extra(args.extra)
        status = args.run(args)
    except UserError as err:  # study errors included
        print(f"howtobench {command}: error: {err}", file=sys.stderr)
        return 2
    except BuildIncomplete as err:  # the model stopped answering: rerun to resume
        print(f"howtobench {command}: {err}", file=sys.stderr)
        return 1
    # A command that has printed its lines returns None, or the status it has chosen.
    return 0 if status is None else int(status)


if __name__ == "__main__":
    sys.exit(main())
