"""Step 3, back-construction (paper section 4.5, appendix F): (S, T, G) = BackConstruct(R).

For guide and open items the model reads the reference R with one worked example and
returns the summary S, the theme T, a free request as the published instructions are,
and the grounding G in the shape `construct.shape` draws. The checks:
docs/construction.md, "The steps: what each asks and checks".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from howtobench.baselines.overlap import tokenize
from howtobench.construct.corpus import CorpusText
from howtobench.construct.prompts import build_prompt, genre_name, trait_lines
from howtobench.construct.shape import (
    ItemShape,
    copied_sentence,
    item_shape,
    latin_breaks,
    longest_request,
    measure,
    stated_lengths,
    unit,
)
from howtobench.construct.steps import (
    Step,
    answered_means,
    corpus_texts,
    step_score,
    step_task,
    text_of,
    text_sample,
)
from howtobench.judge.reading import ReplyError, exact_keys
from howtobench.vocabulary.parameter_values import integer, refuses_unknown

__all__ = [
    "CHARACTERS",
    "MEASURES",
    "THEME_WORDS",
    "backconstruct_step",
    "check_construction",
    "construction_scorer",
    "sentence_breaks",
    "theme_words",
]

THEME_WORDS = 5  # the paper's T: "no more than five words"
# Key points of a practical grounding: most often 4 in the published ones, up to 28
OUTLINE_POINTS = (2, 12)
SUMMARY_CHARACTERS = 300
CHARACTERS = "characters"  # the section that lists people, one line each
MOST_CHARACTERS = 5  # the paper code's fiction prompt: "a maximum of 5 characters"
_CJK_END = "。！？"
_CLOSING = "\"'”’」』)）"
_WORD = re.compile(r"\w")


def sentence_breaks(text: str) -> int:
    """How many sentences end before the last one does: 0 for one sentence."""
    body = text.strip().rstrip(_CLOSING)
    body = body[:-1] if body[-1:] in (*_CJK_END, ".", "!", "?") else body
    return sum(body.count(mark) for mark in _CJK_END) + len(latin_breaks(body))


def theme_words(theme: str, language: str) -> int:
    """Words of a theme (jieba's for Chinese), punctuation not counted."""
    words = tokenize(theme, "zh") if language == "zh" else tuple(theme.split())
    return sum(1 for word in words if _WORD.search(word))


def check_construction(reply: dict[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Summary, theme, request and grounding (sections or an outline), each checked."""
    language = metadata["language"]
    summary = text_of(reply, "summary")
    if len(summary) > SUMMARY_CHARACTERS or sentence_breaks(summary):
        raise ReplyError(
            f'"summary" must be one sentence of at most {SUMMARY_CHARACTERS} characters'
        )
    theme = text_of(reply, "theme").strip("「」『』\"'“”")
    if not 1 <= theme_words(theme, language) <= THEME_WORDS:
        raise ReplyError(f'"theme" must be one to {THEME_WORDS} words, got "{theme}"')
    construction: dict[str, Any] = {
        "summary": summary,
        "theme": theme,
        "instruction": check_request(text_of(reply, "instruction"), metadata),
    }
    if metadata["sections"]:
        construction["sections"] = _sections(reply, list(metadata["sections"]))
    else:
        construction["outline"] = _strings(reply.get("outline"), '"outline"', OUTLINE_POINTS, "")
    return construction


def check_request(request: str, metadata: Mapping[str, Any]) -> str:
    """A request of bounded length that states exactly the item's length (or none), and
    copies no sentence of the reference."""
    language = metadata["language"]
    longest, counted = longest_request(language), unit(language)
    if measure(request, language) > longest:
        raise ReplyError(f'"instruction" must be a request of at most {longest} {counted}')
    stated = stated_lengths(request, language)
    target = metadata["length"]
    if target is None and stated:
        raise ReplyError('"instruction" must not state a length or a word count')
    if target is not None and (not stated or any(n != target for n in stated)):
        example = f"{target}字左右" if language == "zh" else f"about {target} words"
        raise ReplyError(
            f'"instruction" must state a length of about {target} {counted}, in digits '
            f'("{example}"), and no other length'
        )
    copied = copied_sentence(request, metadata["reference"], language)
    if copied:
        shown = copied if len(copied) <= 60 else copied[:60] + "…"
        raise ReplyError(
            f'"instruction" copies the text\'s sentence "{shown}"; ask in your own words'
        )
    return request


def _sections(reply: Mapping[str, Any], ids: list[str]) -> dict[str, Any]:
    """Exactly the section ids, each a non-empty string; the characters a list."""
    sections = reply.get("sections")
    if not isinstance(sections, dict):
        raise ReplyError('"sections" must be an object of section id -> text')
    exact_keys(sections, ids, '"sections"')
    return {
        section: _strings(
            sections[section], f'"{section}"', (1, MOST_CHARACTERS), "one per character"
        )
        if section == CHARACTERS
        else text_of(sections, section)
        for section in ids
    }


def _strings(value: Any, name: str, bounds: tuple[int, int], each: str) -> list[str]:
    """A list of `bounds` (low, high) non-empty strings, stripped."""
    low, high = bounds
    if (
        not isinstance(value, list)
        or not low <= len(value) <= high
        or not all(isinstance(v, str) and v.strip() for v in value)
    ):
        one = f", {each}" if each else ""
        raise ReplyError(f"{name} must be a list of {low} to {high} non-empty strings{one}")
    return [v.strip() for v in value]


BACKCONSTRUCT = Step("backconstruct", ("summary", "theme", "instruction"), check_construction)


def backconstruct_sample(text: CorpusText, seed: int) -> Sample:
    """The question for one text, in the shape `item_shape` draws for it."""
    language = text.language
    shape = item_shape(text, seed)
    genre = genre_name(text.genre, language)
    return text_sample(
        BACKCONSTRUCT,
        text,
        {
            "genre": text.genre,
            "sections": [s.id for s in shape.sections],
            "length": shape.length,
            "reference": text.text,
        },
        genre=genre.name,
        phrase=genre.phrase,
        example=build_prompt("example_sections" if shape.sections else "example_points", language),
        length=build_prompt("length_given", language, target=shape.length)
        if shape.length
        else build_prompt("length_none", language),
        layout=_layout_rule(shape, language),
    )


def _layout_rule(shape: ItemShape, language: str) -> str:
    if not shape.sections:
        low, high = OUTLINE_POINTS
        return build_prompt("layout_points", language, low=low, high=high)
    slots = ", ".join(
        f'"{s.id}": ["<…>", ...]' if s.id == CHARACTERS else f'"{s.id}": "<…>"'
        for s in shape.sections
    )
    return build_prompt(
        "layout_sections", language, sections=trait_lines(shape.sections), slots=slots
    )


# What the construction scorer counts, one mean each in the step's results.
MEASURES = [
    "request_length",
    "stated_length",
    "grounding_parts",
    "summary_characters",
    "theme_words",
]


@scorer(name="construction", metrics=[answered_means(MEASURES)])
@refuses_unknown("construction")
def construction_scorer() -> Scorer:
    """What was constructed, counted (`MEASURES`); the request as the answer."""

    async def score(state: TaskState, target: Target) -> Score:
        language = state.metadata["language"]

        def present(answer: dict[str, Any]) -> Score:
            grounding = answer.get("sections") or answer.get("outline") or []
            lines = [
                answer["summary"],
                answer["instruction"],
                *(f"- {p}" for p in answer.get("outline", ())),
                *(
                    f"[{k}] {' / '.join(v) if isinstance(v, list) else v}"
                    for k, v in answer.get("sections", {}).items()
                ),
            ]
            return Score(
                value={
                    "request_length": measure(answer["instruction"], language),
                    "stated_length": state.metadata["length"] or 0,
                    "grounding_parts": len(grounding),
                    "summary_characters": len(answer["summary"]),
                    "theme_words": theme_words(answer["theme"], language),
                },
                answer=answer["instruction"],
                explanation="\n".join(lines),
            )

        return step_score(state, present)

    return score


@task(name="backconstruct")
def backconstruct_step(corpus: str | None = None, seed: int = 0) -> Task:
    """Build step 3: recover the writing task (summary, theme, request, grounding) from
    each text, in a shape its genre and the seed draw.

    Args:
        corpus: a corpus JSONL file in which every text has a `genre`.
        seed: seeds each text's shape (`howtobench build --seed`).
    """
    texts = corpus_texts(corpus, genre_needed=True)
    drawn = integer(seed, "seed")
    return step_task(
        BACKCONSTRUCT,
        [backconstruct_sample(t, drawn) for t in texts],
        construction_scorer(),
        {"corpus": corpus, "seed": drawn},
    )
