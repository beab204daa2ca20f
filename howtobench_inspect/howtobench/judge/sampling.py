"""Self-consistency for any judge scorer: n samples of the judge per writing, reduced by mean.

Each judge sample runs the scorer's whole judging once with its own number, part of its
questions' scope in the reply store, so a repeated run reuses every sample. The spread,
every sample's value and how many were usable are recorded. A writing is scored only when
at least half of its judge samples are usable (`enough_samples`): a mean of one sample
out of five is not the self-consistent score it claims to be.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping
from statistics import fmean, pstdev
from typing import Any

from inspect_ai.scorer import Score
from inspect_ai.solver import TaskState
from inspect_ai.util import collect

from howtobench.judge.guards import excerpt, noted, unjudgeable, unscored
from howtobench.judge.inputs import JudgeInput
from howtobench.judge.outages import surface_outage
from howtobench.vocabulary.metadata import ScoreKey, SelfConsistencyKey
from howtobench.vocabulary.rounding import rounded

__all__ = ["enough_samples", "judge_scope", "judge_writing", "self_consistent"]


def judge_scope(epoch: int, judge_sample: int) -> Mapping[str, str]:
    """The scope of a judge question in the reply store: its epoch (a question asked
    anew each epoch) and its judge sample (one answer per sample of self-consistency)."""
    scope = {"epoch": str(epoch)}
    if judge_sample:
        scope["judge_sample"] = str(judge_sample)
    return scope


def enough_samples(judge_samples: int) -> int:
    """The fewest usable judge samples for a score: half of them, rounded up."""
    return math.ceil(judge_samples / 2)


async def judge_writing(
    state: TaskState,
    judge_input: JudgeInput,
    metadata: dict[str, Any],
    judge_samples: int,
    judge_once: Callable[[Mapping[str, str]], Awaitable[Score]],
) -> Score:
    """What every judge scorer does with one writing: refuse what must not reach a judge
    (`unjudgeable`), judge it `judge_samples` times (`judge_once(scope)`, one scope per judge
    sample), and raise an outage as its own one-line error (`surface_outage`)."""
    score = unjudgeable(state, judge_input, metadata)
    if score is None:
        score = await surface_outage(
            self_consistent(
                judge_samples,
                lambda judge_sample: judge_once(judge_scope(state.epoch, judge_sample)),
            )
        )
    score.answer = excerpt(state)
    return noted(state, score)


def _values(score: Score) -> dict[str, float] | None:
    value = score.value
    if isinstance(value, dict):
        return {k: float(v) for k, v in value.items()}
    if isinstance(value, int | float) and not math.isnan(value):
        return {"": float(value)}
    return None


async def self_consistent(judge_samples: int, judge: Callable[[int], Awaitable[Score]]) -> Score:
    """`judge(judge_sample)` run for each of the `judge_samples` concurrently; the mean of the
    usable runs, or unscored when fewer than `enough_samples` are usable. The mean and the
    spread are rounded as the runs' own values were (`howtobench.vocabulary.rounding`): a mean of
    rounded numbers carries floating-point noise of its own."""
    if judge_samples <= 1:
        return await judge(0)
    scores = await collect(*(judge(sample) for sample in range(judge_samples)))
    scored = [(s, v) for s in scores if (v := _values(s)) is not None]
    reasons = [str(s.explanation) for s in scores if _values(s) is None]
    needed = enough_samples(judge_samples)
    record: dict[str, Any] = {
        SelfConsistencyKey.N: judge_samples,
        SelfConsistencyKey.SCORED: len(scored),
        SelfConsistencyKey.NEEDED: needed,
        SelfConsistencyKey.VALUES: [s.value for s, _ in scored],
        SelfConsistencyKey.UNSCORED_REASONS: reasons,
    }
    if len(scored) < needed:
        first_failed = next(s for s in scores if _values(s) is None)
        return unscored(
            "grader_failed",
            f"only {len(scored)} of {judge_samples} judge samples were usable "
            f"(at least {needed} needed): {reasons[0]}",
            {**(first_failed.metadata or {}), ScoreKey.SELF_CONSISTENCY: record},
        )
    keys = list(scored[0][1])
    mean = rounded({k: fmean(v[k] for _, v in scored) for k in keys})
    std = rounded({k: pstdev([v[k] for _, v in scored]) for k in keys})
    record[SelfConsistencyKey.STD] = std[""] if keys == [""] else std
    record[SelfConsistencyKey.SAMPLES_METADATA] = [s.metadata for s, _ in scored[1:]]
    first = scored[0][0]
    return Score(
        value=mean[""] if keys == [""] else mean,
        explanation=f"mean of {len(scored)} of {judge_samples} judge samples; the first:\n{first.explanation}",
        metadata={**(first.metadata or {}), ScoreKey.SELF_CONSISTENCY: record},
    )
