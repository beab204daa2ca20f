"""What a run's writings were, counted in the log's results.

Each sample records its writing's state (`SampleKey.WRITING`, written by
`writer.final_writing`). Every writing task ends its scorers with `writing_state`: each
sample's score is its writing's state (`complete`, `cut`, `filtered`, `empty` or
`refused`; the note of a writing that is not simply whole is its explanation), and
inspect's `frequency` metric counts the run's writings in each state, every state named. So the
counts stand in the log's results beside the scores they qualify, where inspect's
results table at the end of `inspect eval`, `evals_df` (`score_writing_state_cut`, ...),
the viewer, `inspect score` and `eval-retry` (which compute the metrics again from the
samples) all see them, and a run of cut writings cannot pass for a run of whole ones.

A scorer of its own, not a metric on the judges' scorers: inspect leaves unscored
samples out of every metric, and a cut writing under `-T cut=unscored`, or one its judge
could not score, is exactly what must be counted. Each epoch's writing counts
(`frequency` reads every epoch's score).
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
