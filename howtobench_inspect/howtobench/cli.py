"""`howtobench`: the top-level parser, and the exit status of whatever command ran.

Each part of the package registers its own commands (`add_..._command`): the studies and
`plan export` (`howtobench.studies.commands`), `annotate ...` (`howtobench.annotate.commands`),
`check-logs` (`howtobench.scale.logcheck`), `shards split` (`howtobench.scale.shards`), `judge-check`
(`howtobench.judge_check.commands`), `build` (`howtobench.construct.commands`) and `lm-eval
path`/`import` (`howtobench.lmeval.commands`), from the
pieces they share (`howtobench.commandline.commands`). Bad input (a file that is no inspect log, a log of another task,
unknown rated ids, a rating that is not a finite number, no overlap, a missing score, a
campaign option that cannot be met, a bad corpus line), and a command whose extra is not
installed (`howtobench.commandline.extras`: the studies, `build`, the studio's server), is a
`UserError`: status 2 and one line giving the reason. A build step that did not finish, or a judge that cannot serve, is
a `BuildIncomplete`: status 1 and one line (for a build, how to resume). `howtobench
check-logs` exits 1 when a run's logs say it did not finish (`inspect eval` itself exits 0
then). Every numeric option is checked by its argparse type (`howtobench.commandline.options`): a
value out of range is refused in argparse's one line, with status 2. The parser is built
from light modules alone and each command imports what it runs when it runs, so
`howtobench --help` (and every command's) loads neither inspect-ai nor pandas, scipy or
matplotlib.
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
