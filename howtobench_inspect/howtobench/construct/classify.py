"""Step 1, genre classification (paper section 4.3, appendix D): c = Cls(T).

The paper's classifier was right on 98.6% of texts by three experts' check: run this
task on texts that carry a genre and its `agreement` metric is that check, against your
labels.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from statistics import fmean
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from howtobench.construct.corpus import CorpusText
from howtobench.construct.prompts import genre_list
from howtobench.construct.steps import Step, corpus_texts, step_score, step_task, text_sample
from howtobench.judge.reading import ReplyError
from howtobench.judge.replies import reason_of
from howtobench.vocabulary.genres import CANONICAL_GENRES
from howtobench.vocabulary.parameter_values import refuses_unknown

__all__ = [
    "CLASSIFY",
    "agreement",
    "check_genre",
    "classify_sample",
    "classify_step",
    "genre_scorer",
]


def check_genre(reply: dict[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """One of the canonical ids (any case, spaces around it ignored)."""
    genre = reply.get("genre")
    chosen = genre.strip().lower() if isinstance(genre, str) else None
    if chosen not in CANONICAL_GENRES:
        raise ReplyError(
            f'"genre" must be one of {", ".join(CANONICAL_GENRES)}, '
            f"got {json.dumps(genre, ensure_ascii=False)}"
        )
    return {"genre": chosen, "reason": reason_of(reply)}


CLASSIFY = Step("classify", ("genre",), check_genre)


def classify_sample(text: CorpusText) -> Sample:
    menu = genre_list(text.language)
    return text_sample(CLASSIFY, text, {"given_genre": text.genre}, genres=menu)


@metric
def agreement() -> Metric:
    """Share of the texts with a given genre that were classified into it; None (left
    out of inspect's results, rather than `nan`) when there is none."""

    def compute(scores: list[SampleScore]) -> dict[str, float | None]:
        hits = [
            s.score.value == label
            for s in scores
            if (label := (s.sample_metadata or {}).get("given_genre"))
        ]
        return {"agreement": fmean(hits) if hits else None}

    return compute


@scorer(name="genre", metrics=[agreement()])
@refuses_unknown("genre")
def genre_scorer() -> Scorer:
    """The genre the model chose (its reason in the explanation)."""

    async def score(state: TaskState, target: Target) -> Score:
        return step_score(
            state,
            lambda answer: Score(
                value=answer["genre"], answer=answer["genre"], explanation=answer["reason"]
            ),
        )

    return score


@task(name="classify")
def classify_step(corpus: str | None = None) -> Task:
    """Build step 1: classify each text of a corpus into one of the 12 genres (a text
    that carries one too, for the `agreement` metric).

    Args:
        corpus: a corpus JSONL file (`text`, and optionally `id`, `genre`, `language`,
            `source`).
    """
    texts = corpus_texts(corpus)
    samples = [classify_sample(t) for t in texts]
    return step_task(CLASSIFY, samples, genre_scorer(), {"corpus": corpus}, reducer="mode")
