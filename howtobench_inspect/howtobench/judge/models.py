"""Which models judge: the `grader` role, or a panel named by the user.

Every judge scorer (Tree-of-Writing and the single-call baselines) reads its models here,
so a panel is parsed the same way and a missing grader fails with the same advice.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Sequence
from typing import TypeVar

from inspect_ai.model import Model, get_model, model_roles

from howtobench._inspect import eval_running, gathered
from howtobench.judge.runs import this_run
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.parameter_values import names
from howtobench.vocabulary.words import replayed_writer

__all__ = ["ask_panel", "grader", "logger", "panel", "panel_models"]

T = TypeVar("T")
logger = logging.getLogger(__name__)


def panel_models(judges: str | Sequence[str | Model] | None) -> list[str | Model]:
    """A comma list of model names (`-S judges=a,b`), or a list of names and models."""
    if isinstance(judges, str) or judges is None:
        return list(names(judges, "judges"))
    return [
        j.strip() if isinstance(j, str) else j
        for j in judges
        if not isinstance(j, str) or j.strip()
    ]


def grader() -> Model:
    """inspect's `grader` role; with none bound, the evaluated model, which then judges its
    own writing (said once per model and run). Raises `UserError` when that is 'none' or a
    replay model (a stored writer never judges), and `ValueError` when no eval is under way
    (the model in context, if any, is an earlier eval's).
    """
    if not eval_running():
        raise ValueError("no eval is under way: the grader role is not known yet")
    try:
        bound: bool | None = "grader" in model_roles()
    except LookupError:  # no eval running yet (a task built from Python before eval())
        bound = None
    # bound, the grader; unbound, the evaluated model itself, which inspect's fallback
    # would give, chosen here on purpose and said below (`default=get_model()` would be
    # a copy with the role set, to which inspect no longer applies the eval's settings)
    model = get_model(role="grader", required=True) if bound else get_model()
    if str(model) == "none/none" or replayed_writer(str(model)):
        replays = f"{model} only replays stored writings"
        why = replays if replayed_writer(str(model)) else "the evaluated model is 'none'"
        raise UserError(
            "the judge scorers need a judge model: bind one with --model-role grader=<model>, "
            f"or choose scorers=rouge_l,bleu ({why})"
        )
    if bound is False:
        this_run().warn_once(
            logger,
            ("judges itself", str(model)),
            f"no judge bound: {model} will judge its own writing; bind one with "
            "--model-role grader=<model>",
        )
    return model


def panel(judges: Sequence[str | Model]) -> list[Model]:
    """The panel's models, resolved inside the running eval; no panel means the grader."""
    return [get_model(judge) for judge in judges] or [grader()]


async def ask_panel(questions: Sequence[Awaitable[T]]) -> list[T]:
    """Every panel judge's answer, concurrently (`gathered`: no span per judge, the
    leaf's span holds them); a lone judge is awaited directly."""
    if len(questions) == 1:
        return [await questions[0]]
    return await gathered(*questions)
