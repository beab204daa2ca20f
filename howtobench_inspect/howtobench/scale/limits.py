"""A worker's limits from inspect's variables, and the line that says what its connections are.

`inspect eval-set` reads `INSPECT_EVAL_MAX_CONNECTIONS`, `_MAX_SAMPLES` and `_MAX_TASKS`
for its options; `eval_set()` in Python does not, so the scale-out recipe
(`docs/examples/scale_out.py`) takes them from here, and its worker entry
(`howtobench.scale.workers.run`) checks them before anything runs, so that a value that is no
whole number stops it in one line instead of a traceback from inside the eval.

Left unset, the connections are not a fixed number: inspect-ai 0.3.285 then runs each
model's calls under its adaptive concurrency (`AdaptiveConcurrency`: a limit that starts
at `start`, doubles after each round of calls that filled it, up to `max`, and is cut
only on rate-limit replies, down to `min`). A judge server of our own (vLLM, llama.cpp)
queues what it cannot serve instead of refusing it, so the limit climbs to `max` per
worker process however few slots the judge has, and every call waiting in that queue is
asked again if the worker is killed. Hence the line each worker prints at its start,
with the numbers read from inspect's own defaults.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from inspect_ai.util import AdaptiveConcurrency

from howtobench.vocabulary.errors import UserError

__all__ = ["VARIABLES", "connections_line", "limits", "whole_number"]

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
