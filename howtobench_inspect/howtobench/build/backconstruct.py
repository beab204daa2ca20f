"""Step 3, back-construction (paper section 4.5, appendix F): (S, T, G) = BackConstruct(R).

For guide and open items the model reads the reference R with one worked example and
returns the summary S (one sentence, phrased as the task), the theme T (at most five
words), an outline, and one writing requirement per trait of the genre: the dimensions
of the genre's rubric, as the paper hands its back-constructor "specific traits of the
genre". S and T fill the instruction template (`items`); the outline and the
requirements are a guide item's grounding, and an open item keeps the instruction only.
Every part is checked (one sentence, five words, 2-8 outline points, exactly the
genre's trait ids) and asked again when it breaks the form.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from howtobench.baselines.overlap import tokenize
from howtobench.build.corpus import CorpusText
from howtobench.build.prompts import genre_name, genre_traits, trait_lines
from howtobench.build.steps import (
    Step,
    corpus_texts,
    step_score,
    step_task,
    text_of,
    text_sample,
)
from howtobench.judge.replies import ReplyError, exact_keys

THEME_WORDS = 5  # the paper's T: "no more than five words"
OUTLINE_POINTS = (2, 8)
SUMMARY_CHARACTERS = 300
_CJK_END = "。！？"
_CLOSING = "\"'”’」』)）"
# A Latin sentence break: an end mark, closing quotes, space, then a capital letter;
# unless the word before a full stop is a usual abbreviation (Mr. Smith, e.g. This).
_LATIN_BREAK = re.compile(r"(\w+(?:\.\w+)*)?([.!?])[\"'”’)]*\s+(?=[A-Z])")
_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "st", "prof", "e.g", "i.e", "etc", "vs", "no", "u.s"}
_WORD = re.compile(r"\w")


def sentence_breaks(text: str) -> int:
    """How many sentences end before the last one does: 0 for one sentence."""
    body = text.strip().rstrip(_CLOSING)
    body = body[:-1] if body[-1:] in (*_CJK_END, ".", "!", "?") else body
    breaks = sum(body.count(mark) for mark in _CJK_END)
    for match in _LATIN_BREAK.finditer(body):
        word = (match.group(1) or "").lower()
        if not (match.group(2) == "." and word in _ABBREVIATIONS):
            breaks += 1
    return breaks


def theme_words(theme: str, language: str) -> int:
    """Words of a theme: jieba words for Chinese, else whitespace words; punctuation
    does not count."""
    words = tokenize(theme, "zh") if language == "zh" else tuple(theme.split())
    return sum(1 for word in words if _WORD.search(word))


def check_construction(reply: dict[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Summary (one sentence), theme (at most five words), outline (2-8 points) and one
    requirement per trait id, each a non-empty string."""
    language = metadata["language"]
    summary = text_of(reply, "summary")
    if len(summary) > SUMMARY_CHARACTERS or sentence_breaks(summary):
        raise ReplyError(
            f'"summary" must be one sentence of at most {SUMMARY_CHARACTERS} characters'
        )
    theme = text_of(reply, "theme").strip("「」『』\"'“”")
    if not 1 <= theme_words(theme, language) <= THEME_WORDS:
        raise ReplyError(f'"theme" must be one to {THEME_WORDS} words, got "{theme}"')
    outline = reply.get("outline")
    low, high = OUTLINE_POINTS
    if (
        not isinstance(outline, list)
        or not low <= len(outline) <= high
        or not all(isinstance(p, str) and p.strip() for p in outline)
    ):
        raise ReplyError(f'"outline" must be a list of {low} to {high} non-empty strings')
    requirements = reply.get("requirements")
    if not isinstance(requirements, dict):
        raise ReplyError('"requirements" must be an object of trait id -> requirement')
    traits = list(metadata["traits"])
    exact_keys(requirements, traits, '"requirements"')
    return {
        "summary": summary,
        "theme": theme,
        "outline": [p.strip() for p in outline],
        "requirements": {t: text_of(requirements, t) for t in traits},
    }


BACKCONSTRUCT = Step("backconstruct", ("summary", "theme", "requirements"), check_construction)


def backconstruct_sample(text: CorpusText) -> Sample:
    traits = genre_traits(text.genre, text.language, text.genre_raw)
    return text_sample(
        BACKCONSTRUCT,
        text,
        {"genre": text.genre, "traits": [t.id for t in traits]},
        genre=genre_name(text.genre, text.language).name,
        traits=trait_lines(traits),
        slots=", ".join(f'"{t.id}": "<…>"' for t in traits),
    )


@scorer(name="construction", metrics={"*": [mean()]})
def construction_scorer() -> Scorer:
    """What was constructed, counted (outline points, summary characters, theme words),
    the theme as the answer and everything in the explanation."""

    async def score(state: TaskState, target: Target) -> Score:
        language = state.metadata["language"]

        def present(answer: dict[str, Any]) -> Score:
            lines = [
                answer["summary"],
                *(f"- {p}" for p in answer["outline"]),
                *(f"[{k}] {v}" for k, v in answer["requirements"].items()),
            ]
            return Score(
                value={
                    "outline_points": len(answer["outline"]),
                    "summary_characters": len(answer["summary"]),
                    "theme_words": theme_words(answer["theme"], language),
                },
                answer=answer["theme"],
                explanation="\n".join(lines),
            )

        return step_score(state, present)

    return score


@task(name="backconstruct")
def backconstruct_step(corpus: str | None = None) -> Task:
    """Build step 3: recover the writing task (summary, theme, outline, requirements)
    from each text, for guide and open items.

    Every text needs a genre, whose rubric dimensions are the traits the requirements
    follow (a label of your own uses the general rubric's).

    Args:
        corpus: a corpus JSONL file in which every text has a `genre`.

    Returns:
        The task: one question per text to the evaluated model (`--model`).
    """
    texts = corpus_texts(corpus, genre_needed=True)
    return step_task(
        BACKCONSTRUCT,
        [backconstruct_sample(t) for t in texts],
        construction_scorer(),
        {"corpus": corpus},
    )
