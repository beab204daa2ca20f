"""The negotiator as a scorer of its own, for the `howtobench/negotiate` task.

Negotiating every instruction once, before any writer is judged, makes the weights a
record (the task's log) that `howtobench plan export` turns into a plan file for every
worker. It asks exactly the question the ToW scorer asks (same messages, same checks and
re-asks, same reply store entry), so on one host a later ToW run reads these weights
from the store, and elsewhere it reads them from the plan.
"""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from howtobench.judge.defaults import TRIES
from howtobench.judge.guards import unscored
from howtobench.judge.inputs import JudgeInput
from howtobench.judge.models import grader
from howtobench.judge.outages import surface_outage
from howtobench.judge.replies import Asking
from howtobench.tree.negotiator import SettledWeights, weights_record
from howtobench.tree.spec import tree_for
from howtobench.vocabulary.metadata import ScoreKey
from howtobench.vocabulary.parameter_values import refuses_unknown
from howtobench.vocabulary.rounding import rounded

__all__ = ["instruction_only", "negotiation"]


@solver
def instruction_only() -> Solver:
    """No writer: the negotiator reads the instruction, never a writing."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return state

    return solve


@scorer(name="negotiation", metrics={"*": [mean()]})
@refuses_unknown("negotiation")
def negotiation(
    judge_temperature: float | None = None, cache: bool = True, tries: int = TRIES
) -> Scorer:
    """The instruction's negotiated weights as the score (one key per weighted leaf),
    rounded as every score stores its numbers; the metadata keeps them as negotiated,
    which is what `howtobench plan export` reads. The parameters are the `tow` scorer's.
    """
    settled = SettledWeights()

    async def score(state: TaskState, target: Target) -> Score:
        judge_input = JudgeInput.from_state(state, target)
        asking = Asking.for_scorer(tries, cache, judge_temperature, 1)
        exchange, reused = await surface_outage(
            settled.negotiate(grader(), tree_for(judge_input.task), judge_input, asking=asking)
        )
        metadata = {ScoreKey.TASK: judge_input.task, **weights_record(exchange, reused)}
        weights = exchange.value
        if weights is None:
            return unscored(
                "grader_failed", f"negotiator ({exchange.model}): {exchange.error}", metadata
            )
        lines = [f"{leaf}  w={value:.3f}" for leaf, value in weights.values.items()]
        return Score(
            value=rounded(weights.values),
            answer=weights.fingerprint,
            explanation="\n".join([*lines, weights.explanation]).strip(),
            metadata=metadata,
        )

    return score
