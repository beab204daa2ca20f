"""Writings a scorer must not score, and how every scorer of the package says it did not.

Unscored samples follow inspect's convention (`model_graded_qa`): the reason is one of
inspect's `ScoreReason` codes (`grader_failed` for unusable replies, `scoring_failed`
when the scorer could not run) and the detail is in the explanation, so logs can be
filtered by code. Every score names the state of a writing that is not simply whole
(cut, filtered, empty, refused, reasoning or artifacts removed, a reasoning tag kept:
`noted`), so a cut writing is never read as a whole one. A solver that could not produce
the writing under test marks the sample `SampleKey.UNSCORABLE`, and every scorer leaves
it unscored with that reason rather than score the original as the disturbed one.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import Score, ScoreReason
from inspect_ai.solver import TaskState

from howtobench.judge.inputs import JudgeInput
from howtobench.vocabulary.metadata import SampleKey, ScoreKey
from howtobench.writing.state import WritingState

__all__ = ["EXCERPT", "excerpt", "incomparable", "noted", "unjudgeable", "unscorable", "unscored"]

EXCERPT = 200  # characters of the writing shown as a score's answer


def excerpt(state: TaskState) -> str:
    """The start of the writing under test, as every score's `answer`: what the viewer
    shows beside the score, so a reader sees which writing it judged."""
    writing = state.output.completion.strip()
    return writing if len(writing) <= EXCERPT else writing[:EXCERPT] + "…"


def unscorable(state: TaskState) -> str | None:
    """Why a solver marked this sample's writing unusable, if it did."""
    reason = state.metadata.get(SampleKey.UNSCORABLE)
    return str(reason) if reason else None


def unscored(code: ScoreReason, detail: str, metadata: dict[str, Any] | None = None) -> Score:
    """An unscored score: inspect's reason code, the detail as its explanation."""
    return Score.unscored(reason=code, explanation=detail, metadata=metadata)


def incomparable(state: TaskState, reference: str) -> Score | None:
    """An unscored score when a reference-based scorer has nothing to compare: no
    reference, or a writing a solver marked unusable; else None."""
    if not reference.strip():
        return unscored("scoring_failed", "the sample has no reference to compare with")
    marked = unscorable(state)
    return None if marked is None else unscored("scoring_failed", marked)


def unjudgeable(
    state: TaskState, judge_input: JudgeInput, metadata: dict[str, Any]
) -> Score | None:
    """An unscored score when the writing must not go to a judge, else None."""
    reason = unscorable(state) or judge_input.too_long
    return None if reason is None else unscored("scoring_failed", reason, metadata)


def noted(state: TaskState, score: Score) -> Score:
    """The score, naming the writing's state (`SampleKey.WRITING`) when it is not simply
    whole: the record in its metadata, the sentence at the head of its explanation (on a
    line of its own before a tree's explanation; a one-line reason stays one line)."""
    record = state.metadata.get(SampleKey.WRITING)
    note = WritingState.from_record(record).note if record else None
    if note is None:
        return score
    score.metadata = {**(score.metadata or {}), ScoreKey.WRITING: record}
    explanation = score.explanation or ""
    if note not in explanation:
        joint = "\n\n" if "\n" in explanation else " "
        score.explanation = f"{note}{joint}{explanation}" if explanation else note
    return score
