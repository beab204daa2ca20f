"""What a run's writings were, counted in the log's results (docs/writers.md).

Every writing task ends its scorers with `writing_state`: each sample's score is its
writing's state (`SampleKey.WRITING`), and inspect's `frequency` metric counts them, so the
counts stand beside the scores they qualify wherever inspect shows results. A scorer of its
own, not a metric on the judges' scorers: inspect leaves unscored samples out of every
metric, and a cut or unjudged writing is exactly what must be counted.
"""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, frequency, scorer
from inspect_ai.solver import TaskState

from howtobench.vocabulary.metadata import SampleKey
from howtobench.vocabulary.parameter_values import refuses_unknown
from howtobench.writing.state import STATES, WritingState

__all__ = ["WRITING_STATE", "writing_state"]

WRITING_STATE = "writing_state"  # the scorer's name, in the log and its results


@scorer(name=WRITING_STATE, metrics=[frequency(categories=STATES, normalize=False)])
@refuses_unknown(WRITING_STATE)
def writing_state() -> Scorer:
    """Each writing's state as its score, counted per state over the run."""

    async def score(state: TaskState, target: Target) -> Score:
        record = state.metadata.get(SampleKey.WRITING)
        if not record:
            return Score.unscored(
                reason="scoring_failed", explanation="the sample records no writing state"
            )
        found = WritingState.from_record(record)
        return Score(value=found.state, explanation=found.note)

    return score
