"""Step 2, the quality filter (paper section 4.3, appendix E): s = Filter(T) in 1..5.

The genre's points are the dimensions of the package's genre rubrics: the paper's "12
genre-specific rubrics", and a general one for labels of your own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from howtobench.commandline.constants import DEFAULT_THRESHOLD, HIGHEST, LOWEST
from howtobench.construct.corpus import CorpusText
from howtobench.construct.prompts import genre_name, genre_traits, trait_lines
from howtobench.construct.steps import (
    Step,
    answered_means,
    corpus_texts,
    step_score,
    step_task,
    text_sample,
)
from howtobench.judge.reading import bounded
from howtobench.judge.replies import reason_of
from howtobench.vocabulary.parameter_values import ParameterError, integer, refuses_unknown

__all__ = ["check_quality", "quality_scorer", "quality_step"]


def check_quality(reply: dict[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """A whole number from 1 to 5."""
    score = bounded(reply.get("score"), '"score"', LOWEST, HIGHEST, whole=True)
    return {"score": int(score), "reason": reason_of(reply)}


QUALITY = Step("quality", ("score",), check_quality)


def quality_sample(text: CorpusText) -> Sample:
    return text_sample(
        QUALITY,
        text,
        {"genre": text.genre, "source": text.source},
        genre=genre_name(text.genre, text.language).name,
        traits=trait_lines(genre_traits(text.genre, text.language, text.genre_raw)),
    )


@scorer(name="quality", metrics=[answered_means(["score", "kept"])])
@refuses_unknown("quality")
def quality_scorer(threshold: int = DEFAULT_THRESHOLD) -> Scorer:
    """The model's 1-5 score, and whether it reaches `threshold` (`kept`)."""

    async def score(state: TaskState, target: Target) -> Score:
        return step_score(
            state,
            lambda answer: Score(
                value={"score": answer["score"], "kept": float(answer["score"] >= threshold)},
                explanation=answer["reason"],
            ),
        )

    return score


@task(name="quality")
def quality_step(corpus: str | None = None, threshold: int = DEFAULT_THRESHOLD) -> Task:
    """Build step 2: rate each text 1-5 against its genre's rubric points.

    Args:
        corpus: a corpus JSONL file in which every text has a `genre`.
        threshold: the score a text needs to be kept (the paper's 4), for the `kept`
            metric; `howtobench build --threshold` applies it.
    """
    limit = integer(threshold, "threshold")
    if not LOWEST <= limit <= HIGHEST:
        raise ParameterError("threshold", f"expected {LOWEST}-{HIGHEST}, got {limit}")
    texts = corpus_texts(corpus, genre_needed=True)
    return step_task(
        QUALITY,
        [quality_sample(t) for t in texts],
        quality_scorer(limit),
        {"corpus": corpus, "threshold": limit},
    )
