"""A worker's limits from inspect's variables, and the line that says what its connections are.

`eval_set()` in Python does not read `INSPECT_EVAL_MAX_CONNECTIONS`, `_MAX_SAMPLES` and
`_MAX_TASKS` as `inspect eval-set` does, so the scale-out recipe takes them from here and
the worker checks them before anything runs. Left unset, the connections follow inspect's
adaptive concurrency, which climbs to its maximum against a judge server that queues
rather than refuses: hence the line each worker prints (docs/cluster.md, "Judge
connections").
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from inspect_ai.util import AdaptiveConcurrency

from howtobench.vocabulary.errors import UserError

__all__ = ["VARIABLES", "connections_line", "limits"]

# eval_set()'s argument -> the variable `inspect eval-set` reads for it
VARIABLES = {
    "max_connections": "INSPECT_EVAL_MAX_CONNECTIONS",
    "max_samples": "INSPECT_EVAL_MAX_SAMPLES",
    "max_tasks": "INSPECT_EVAL_MAX_TASKS",
}


def whole_number(environ: Mapping[str, str], name: str) -> int | None:
    """A whole number above 0 from `environ`; None (inspect's default) when unset."""
    text = environ.get(name, "").strip()
    if text and not (text.isdigit() and int(text) > 0):
        raise UserError(f"{name}={text!r}: give a whole number above 0, or leave it unset")
    return int(text) if text else None


def limits(environ: Mapping[str, str] | None = None) -> dict[str, int | None]:
    """eval_set()'s `max_connections`, `max_samples` and `max_tasks`, from the variables."""
    source = os.environ if environ is None else environ
    return {argument: whole_number(source, name) for argument, name in VARIABLES.items()}


def connections_line(max_connections: int | None) -> str:
    """What the judge connections of this worker process are, in one line."""
    variable = VARIABLES["max_connections"]
    if max_connections is not None:
        return f"judge connections: {max_connections} per judge model ({variable})"
    adaptive = AdaptiveConcurrency()  # what inspect resolves an unset limit to
    return (
        f"judge connections: {variable} unset, so inspect's adaptive concurrency per judge "
        f"model: {adaptive.start} at the start, doubled after each round of calls that filled "
        f"it, up to {adaptive.max} (lowered only on rate-limit replies, to no less than "
        f"{adaptive.min}); set {variable} to this worker's share of the judge's parallel slots"
    )
