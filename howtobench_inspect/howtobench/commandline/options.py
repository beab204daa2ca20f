"""Argparse types for the numeric options of every `howtobench` command (and the task
list of `howtobench build`): a value out of range is refused in argparse's one line,
status 2, before anything runs (0 connections would leave inspect waiting forever).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

__all__ = [
    "count",
    "count_or_zero",
    "parse_tasks",
    "port",
    "seed",
    "whole_number",
]

PORT_HIGHEST = 65535


def whole_number(lowest: int, highest: int | None = None, note: str = "") -> Callable[[str], int]:
    """An argparse `type=` taking a whole number from `lowest` (to `highest`, if given),
    `note` added to the message after the range (what 0 means for a port)."""
    span = f"of at least {lowest}" if highest is None else f"from {lowest} to {highest}"
    wanted = f"a whole number {span}" + (f" ({note})" if note else "")

    def parse(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {text!r}") from None
        if value < lowest or (highest is not None and value > highest):
            raise argparse.ArgumentTypeError(f"expected {wanted}, got {value}")
        return value

    return parse


#: a count of things that must happen at least once: connections, samples, instructions
count = whole_number(1)
#: a count that may be zero: retries, attempts, bootstrap resamples
count_or_zero = whole_number(0)
#: a seed: numpy's generators refuse negative ones, so every seed is 0 or more
seed = whole_number(0)
#: a TCP port; 0 asks the system for a free one (what the tests and scripts use)
port = whole_number(0, PORT_HIGHEST, "0: any free port")


def parse_tasks(text: str) -> tuple[str, ...]:
    """`completion,guide,open` as task names, each once, in the given order; which names
    are tasks is checked by the build (`BuildOptions`), with its other options."""
    return tuple(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
