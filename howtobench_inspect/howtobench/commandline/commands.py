"""The pieces that the `howtobench` commands' parsers share.

Each part of the package registers its own commands (`add_..._command(commands)`, called
by `howtobench.cli`); an option that means the same in several commands (the logs to
read, a count, a seed, a price file, a comma list) is spelled, typed and explained here
once. The parser imports this module for every `--help`, so it imports only light modules.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from howtobench.commandline import options

LOGS_HELP = "inspect log files or folders of logs (searched recursively)"


class OneLineParser(argparse.ArgumentParser):
    """argparse, with a mistake said in one line (exit 2) instead of the usage block and
    the error: the line names the option, and `--help` is one step away. The commands'
    parsers are of this class too (argparse makes them of their parent's)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


if TYPE_CHECKING:
    #: what `add_subparsers()` returns: the commands (or actions) a parser chooses among
    Commands = argparse._SubParsersAction[OneLineParser]

__all__ = [
    "LOGS_HELP",
    "OneLineParser",
    "add_actions",
    "add_command",
    "add_count",
    "add_logs",
    "add_prices",
    "add_seed",
    "names",
]


def names(text: str) -> list[str]:
    """An argparse `type=` for a comma list (`a,b`): its names, blanks dropped."""
    return [n.strip() for n in text.split(",") if n.strip()]


def add_command(commands: Commands, name: str, summary: str) -> OneLineParser:
    """A command whose one line is both its entry in the list of commands and the top of
    its own `--help`."""
    return commands.add_parser(name, help=summary, description=summary)


def add_actions(commands: Commands, name: str, summary: str) -> Commands:
    """A command made of actions (`annotate new`, `plan export`): one of them is required,
    and `cli.main` names the failing one as `howtobench NAME ACTION`."""
    group = add_command(commands, name, summary)
    return group.add_subparsers(dest="action", required=True, metavar="ACTION")


def add_logs(parser: argparse.ArgumentParser, name: str = "logs", metavar: str = "LOGS") -> None:
    """The inspect logs a command reads, as positional arguments."""
    parser.add_argument(name, nargs="+", metavar=metavar, help=LOGS_HELP)


def add_count(
    parser: argparse.ArgumentParser,
    flag: str,
    what: str,
    default: int | None = None,
    *,
    or_zero: bool = False,
    metavar: str = "N",
) -> None:
    """An option that counts something: 1 or more (connections, instructions), or with
    `or_zero` 0 or more (retries, resamples), refused out of range as it is parsed."""
    parser.add_argument(
        flag,
        type=options.count_or_zero if or_zero else options.count,
        default=default,
        metavar=metavar,
        help=what,
    )


def add_seed(parser: argparse.ArgumentParser, what: str, default: int = 0) -> None:
    """`--seed`: 0 or more (numpy refuses a negative seed), its default in its help."""
    parser.add_argument(
        "--seed", type=options.seed, default=default, help=f"{what} (default {default})"
    )


def add_prices(parser: argparse.ArgumentParser, note: str) -> None:
    """`--prices FILE`: what `howtobench cost` and `judge-check` reckon dollars from."""
    parser.add_argument(
        "--prices",
        type=Path,
        metavar="FILE",
        help=f"YAML/JSON of model prices per million tokens ({note})",
    )
