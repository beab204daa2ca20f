"""The Auto-Plan baseline: one judge call in which the judge plans its own aggregation.

The implicit plan the paper criticises (section 5.1; docs/scorers.md): nothing fixes it,
so it drifts between calls. To measure that drift (section 5.3) each reply's sub-score
shares l_k = s_k / S are recorded, with s_k = weight_k · score_k and S their sum.
"""

from __future__ import annotations

from statistics import fmean
from typing import Any

from inspect_ai.scorer import Scorer, scorer

from howtobench.baselines.prompts import baseline_prompt
from howtobench.baselines.single_call import (
    METRICS,
    Question,
    SingleCallSettings,
    single_call_judge,
    single_call_parameters,
)
from howtobench.judge.inputs import JudgeInput
from howtobench.judge.reading import Form, ReplyError, bounded, number
from howtobench.judge.replies import Verdict, reason_of
from howtobench.vocabulary.metadata import ScoreKey
from howtobench.vocabulary.parameter_values import refuses_unknown

__all__ = ["FEWEST", "MOST", "autoplan", "check_plan", "plan_question", "pool_plans"]

FEWEST, MOST = 3, 6


def plan_question(judge_input: JudgeInput) -> Question:
    language = judge_input.language
    return Question(
        system=baseline_prompt("autoplan_system", language),
        instructions=baseline_prompt("autoplan", language),
        form=Form(("dimensions", "overall"), check_plan),
    )


def check_plan(reply: dict[str, Any]) -> Verdict:
    """3-6 distinct named dimensions, weights >= 0 (not all 0), whole scores 1-10, overall 1-10."""
    dimensions = reply.get("dimensions")
    if not isinstance(dimensions, list) or not FEWEST <= len(dimensions) <= MOST:
        found = f"{len(dimensions)}" if isinstance(dimensions, list) else "no list"
        raise ReplyError(
            f'"dimensions" must be a list of {FEWEST} to {MOST} dimensions, got {found}'
        )
    checked = [_dimension(item, index) for index, item in enumerate(dimensions, 1)]
    keys = [d["name"].strip().lower() for d in checked]
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ReplyError(f"dimension names must differ, {', '.join(repeated)} is repeated")
    parts = [d["weight"] * d["score"] for d in checked]
    total = sum(parts)
    if total <= 0:
        raise ReplyError("at least one weight must be above 0")
    overall = bounded(reply.get("overall"), '"overall"', 1, 10, whole=False)
    shares = {k: part / total for k, part in zip(keys, parts, strict=True)}
    summary = " · ".join(
        f"{d['name'].strip()} w={d['weight']:g} {d['score']} ({shares[k]:.0%})"
        for d, k in zip(checked, keys, strict=True)
    )
    return Verdict(overall, reason_of(reply), {"dimensions": checked, "shares": shares}, summary)


def _dimension(item: Any, index: int) -> dict[str, Any]:
    """One dimension as returned, its weight and score checked."""
    if not isinstance(item, dict):
        raise ReplyError(f"dimension {index} must be an object with name, weight and score")
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ReplyError(f'dimension {index} needs a non-empty "name"')
    weight = number(item.get("weight"), f'the weight of "{name}"')
    if weight < 0:
        raise ReplyError(f'the weight of "{name}" must not be negative, got {weight:g}')
    score = bounded(item.get("score"), f'the score of "{name}"', 1, 10, whole=True)
    return {"name": name, "weight": weight, "score": int(score)}


def pool_plans(verdicts: list[tuple[str, Verdict]]) -> dict[str, Any]:
    """Shares: each name's mean share over the panel (0 where a judge lacks it), so they
    still sum to 1. Dimensions: the judge's list, or every judge's entries tagged with it."""
    names = dict.fromkeys(name for _, v in verdicts for name in v.details["shares"])
    shares = {n: fmean(v.details["shares"].get(n, 0.0) for _, v in verdicts) for n in names}
    if len(verdicts) == 1:
        return {ScoreKey.SHARES: shares, "dimensions": verdicts[0][1].details["dimensions"]}
    tagged = [{**d, "judge": model} for model, v in verdicts for d in v.details["dimensions"]]
    return {ScoreKey.SHARES: shares, "dimensions": tagged}


@scorer(name="autoplan", metrics=METRICS)
@refuses_unknown("autoplan")
@single_call_parameters
def autoplan(**given: Any) -> Scorer:
    """Score a writing in one judge call that plans its own dimensions and weights
    (Auto-Plan); the parameters are `SingleCallSettings`'."""
    return single_call_judge(plan_question, pool_plans, SingleCallSettings(**given))
