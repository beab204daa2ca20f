"""The Elaborated Rubric baseline: one judge call per writing with the genre's own rubric
(the paper's section 5.1; the rubrics: docs/scorers.md). The overall is the judge's own,
not a formula of the dimensions: that is the baseline.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from statistics import fmean
from typing import Any

from inspect_ai.scorer import Scorer, scorer

from howtobench.baselines.prompts import baseline_prompt, genre_rubric
from howtobench.baselines.single_call import (
    METRICS,
    Question,
    SingleCallSettings,
    single_call_judge,
    single_call_parameters,
)
from howtobench.judge.inputs import JudgeInput
from howtobench.judge.reading import Form, ReplyError, bounded, exact_keys
from howtobench.judge.replies import Verdict, reason_of
from howtobench.vocabulary.parameter_values import refuses_unknown

__all__ = ["pool_scores", "rubric", "rubric_checker", "rubric_question"]


def rubric_question(judge_input: JudgeInput) -> Question:
    language = judge_input.language
    chosen = genre_rubric(judge_input.genre, language, judge_input.genre_raw)
    slots = ", ".join(f'"{i}": <1-10>' for i in chosen.ids)
    return Question(
        system=baseline_prompt("rubric_system", language),
        instructions=baseline_prompt("rubric", language, rubric=chosen.text, slots=slots),
        form=Form(("scores", "overall"), rubric_checker(chosen.ids)),
        about={"rubric": chosen.name},
    )


def rubric_checker(ids: Sequence[str]) -> Callable[[dict[str, Any]], Verdict]:
    """Exactly the rubric's ids, each a whole number 1-10, and a whole overall 1-10."""

    def check(reply: dict[str, Any]) -> Verdict:
        scores = reply.get("scores")
        if not isinstance(scores, dict):
            raise ReplyError('"scores" must be an object of dimension id -> score')
        exact_keys(scores, ids, '"scores"')
        checked = {
            i: int(bounded(scores[i], f'the score of "{i}"', 1, 10, whole=True)) for i in ids
        }
        overall = bounded(reply.get("overall"), '"overall"', 1, 10, whole=True)
        summary = " · ".join(f"{i} {s}" for i, s in checked.items())
        return Verdict(overall, reason_of(reply), {"scores": checked}, summary)

    return check


def pool_scores(verdicts: list[tuple[str, Verdict]]) -> dict[str, Any]:
    """Each dimension's mean over the panel (every judge scored the same rubric)."""
    ids = verdicts[0][1].details["scores"]
    return {"scores": {i: fmean(v.details["scores"][i] for _, v in verdicts) for i in ids}}


@scorer(name="rubric", metrics=METRICS)
@refuses_unknown("rubric")
@single_call_parameters
def rubric(**given: Any) -> Scorer:
    """Score a writing with its genre's rubric in one judge call (the Elaborated Rubric);
    the parameters are `SingleCallSettings`'."""
    return single_call_judge(rubric_question, pool_scores, SingleCallSettings(**given))
