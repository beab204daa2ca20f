"""Before a run spends its retries: every endpoint its models talk to takes a connection,
and a live writer's length limit is said when the task chose it.

inspect retries a call that gets no connection for over a minute, then exits 0; so while
`inspect eval` builds a task, each endpoint is opened once and a dead one stops the run in
one line naming the role, the model and the URL (docs/running.md, "Endpoints: checked at
the start"). A server that takes connections but does not answer is left to the judge's
outage check (`judge/outages.py`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from contextlib import suppress

from inspect_ai.model import Model, get_model

from howtobench._inspect import endpoint, eval_config, eval_running
from howtobench.judge.models import grader
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.reachable import unreachable
from howtobench.vocabulary.words import replayed_writer
from howtobench.writing.perturb import rewriter
from howtobench.writing.writer import WRITER_MAX_TOKENS

__all__ = ["evaluated_model", "logger", "preflight"]

logger = logging.getLogger(__name__)
_said: set[str] = set()  # the writers whose length limit this process has said


def preflight(*, graded: bool, judges: Sequence[str] = (), rewrites: bool = False) -> None:
    """While `inspect eval` builds a task: refuse an endpoint that takes no connection,
    of the writer, the grader (`graded`), the panel's `judges` and the perturber when it
    `rewrites`; then say a live writer's default length limit."""
    if not eval_running():
        return
    writer = _writer()
    checked: set[str] = set()
    for role, model in _roles(writer, graded, judges, rewrites):
        url = endpoint(model)
        if not url or url in checked:
            continue
        checked.add(url)
        why = unreachable(url)
        if why:
            raise UserError(
                f"the {role} {model} at {url} does not answer ({why}): start it, or correct "
                "its base URL; nothing has run"
            )
    if writer is not None and eval_config().max_tokens is None and str(writer) not in _said:
        _said.add(str(writer))
        logger.warning(
            "writer %s: up to %s tokens a writing (the default; --max-tokens sets it)",
            writer,
            f"{WRITER_MAX_TOKENS:,}",
        )


def evaluated_model() -> Model | None:
    """The evaluated model while `inspect eval` builds a task, else None."""
    if not eval_running():
        return None
    try:
        return get_model()
    except Exception:  # no model in context
        return None


def _writer() -> Model | None:
    """The evaluated model when it writes (not `replay/`, `none` or `mockllm/`)."""
    model = evaluated_model()
    name = str(model)
    if model is None or replayed_writer(name) or name == "none/none" or name.startswith("mockllm/"):
        return None
    return model


def _roles(
    writer: Model | None, graded: bool, judges: Sequence[str], rewrites: bool
) -> Iterator[tuple[str, Model]]:
    """(role, model) for each model the run will ask, the writer first."""
    if writer is not None:
        yield "writer", writer
    if graded:
        with suppress(ValueError):  # not known yet (a `UserError` was raised by `check_grader`)
            yield "grader", grader()
    for judge in judges:
        yield "judge", get_model(judge)
    if rewrites:
        with suppress(UserError):  # no model to rewrite with: each sample says which role to bind
            yield "perturber", rewriter()
