"""How the check words its lines: one line each, at most `WIDTH` columns, with the
counts spelled out (`1 writing`, `3 writings`)."""

import textwrap

from howtobench.judge.server_words import one_line

__all__ = ["WIDTH", "many", "one_line", "shorten", "wrap"]

WIDTH = 100  # the report fits a terminal this wide


def shorten(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def many(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def wrap(text: str, indent: str = "") -> list[str]:
    """`text` in lines of at most `WIDTH` columns, the first after `indent`."""
    return textwrap.wrap(
        text, WIDTH, initial_indent=indent, subsequent_indent="    ", break_on_hyphens=False
    )
