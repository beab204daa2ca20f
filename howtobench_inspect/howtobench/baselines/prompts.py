"""The baselines' prompt files, and the genre rubrics with the dimension ids read from them.

A rubric's dimensions are written once, in its template (`[id] title: ...` lines), so
the prompt, the reply check, the simulator and the build's genre traits cannot disagree
about them. Which rubric judges which genre is the data below.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from howtobench.vocabulary.templates import render, tagged

__all__ = [
    "APPENDIX_H_RUBRICS",
    "GENERAL_RUBRIC",
    "PROMPTS",
    "RUBRIC_OF_GENRE",
    "RUBRIC_OF_RAW",
    "Rubric",
    "TAGS",
    "baseline_prompt",
    "genre_rubric",
    "rubric_ids",
    "rubric_name",
]

PROMPTS = Path(__file__).parent / "prompts"
# The tags of the single-call judges' questions, on their system prompts
# (`howtobench.vocabulary.templates.tagged`): one per judge, the same for every writing.
TAGS = {"rubric_system": "rubric", "autoplan_system": "autoplan"}
# For labels no appendix-H rubric fits. Ours, on the points that recur across appendix
# H: content (all 15 rubrics), language (14), structure (13), originality (9), and fit
# to the purpose and readers (about half).
GENERAL_RUBRIC = "general"
_DIMENSION = re.compile(r"^\[([a-z][a-z0-9_]*)\] ", re.M)


def baseline_prompt(name: str, language: str, **values: object) -> str:
    return tagged(render(PROMPTS, name, language, **values).strip(), TAGS.get(name))


def rubric_ids(text: str) -> tuple[str, ...]:
    """The dimension ids of a rubric text, in order."""
    return tuple(_DIMENSION.findall(text))


@dataclass(frozen=True)
class Rubric:
    """A genre's rubric: its name (an appendix-H genre or `general`), text and dimension ids."""

    name: str
    text: str
    ids: tuple[str, ...]


# The 15 genre rubrics of the paper's appendix H (H.1-H.15), each a `rubric_<name>` file
# that follows its dimensions and their sub-criteria in order, in our words.
APPENDIX_H_RUBRICS: tuple[str, ...] = (
    "argumentative",
    "summary",
    "contract",
    "delivery",
    "documentary",
    "essay",
    "fiction",
    "letters",
    "officials",
    "plan",
    "poem",
    "prose",
    "report",
    "document",
    "speech",
)

# Which appendix-H rubric judges which genre. The paper does not publish this mapping;
# ours pairs each genre with the rubric of the same kind of writing. Table 4's canonical
# genres (`howtobench.vocabulary.genres`) come first; `comment` is appendix H's commentary "Essay"
# (H.6), `regulation` the rules of an institution (H.9 Officials), `others` the notices,
# explanations and introductions that H.14's general "Document" rubric covers.
RUBRIC_OF_GENRE: dict[str, str] = {
    "argumentative": "argumentative",
    "comment": "essay",
    "poem": "poem",
    "prose": "prose",
    "fiction": "fiction",
    "letters": "letters",
    "others": "document",
    "speech": "speech",
    "report": "report",
    "contract": "contract",
    "plan": "plan",
    "regulation": "officials",
}
# The published raw labels (`sub_task`) that appendix H treats more finely than Table 4's
# rows: literary non-fiction has its own rubric (H.5), summaries theirs (H.2), official
# documents and administrative notices are H.9's, secretarial writing and explanations
# H.14's. Every other raw label is judged by its canonical genre's rubric.
RUBRIC_OF_RAW: dict[str, str] = {
    "纪实": "documentary",
    "总结类写作": "summary",
    "公文": "officials",
    "通知": "officials",
    "文秘知识": "document",
    "介绍说明": "document",
}


def rubric_name(genre: str, genre_raw: str = "") -> str:
    """The rubric a writing is judged with: its raw label's where `RUBRIC_OF_RAW` has one,
    an appendix-H rubric named as the label itself, else its canonical genre's; any other
    label (a user's own genre) gets the general rubric."""
    for label in (genre_raw.strip(), genre.strip()):
        if label in RUBRIC_OF_RAW:
            return RUBRIC_OF_RAW[label]
        if label.lower() in APPENDIX_H_RUBRICS:
            return label.lower()
        if label.lower() in RUBRIC_OF_GENRE:
            return RUBRIC_OF_GENRE[label.lower()]
    return GENERAL_RUBRIC


@cache
def genre_rubric(genre: str, language: str, genre_raw: str = "") -> Rubric:
    """The rubric of a writing's genre (see `rubric_name`), in `language` (English for
    languages without their own files)."""
    name = rubric_name(genre, genre_raw)
    text = baseline_prompt(f"rubric_{name}", language)
    return Rubric(name, text, rubric_ids(text))
