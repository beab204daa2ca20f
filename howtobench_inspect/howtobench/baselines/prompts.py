"""The baselines' prompt files, and the genre rubrics with the dimension ids read from them.

A rubric's dimensions are written once, in its template (`[id] title: ...` lines), so
the prompt, the reply check and the simulator cannot disagree about them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from howtobench.genres import CANONICAL_GENRES
from howtobench.templates import render

PROMPTS = Path(__file__).parent / "prompts"
GENERAL_RUBRIC = "general"
_DIMENSION = re.compile(r"^\[([a-z][a-z0-9_]*)\] ", re.M)


def baseline_prompt(name: str, language: str, **values: object) -> str:
    return render(PROMPTS, name, language, **values).strip()


def rubric_ids(text: str) -> tuple[str, ...]:
    """The dimension ids of a rubric text, in order."""
    return tuple(_DIMENSION.findall(text))


@dataclass(frozen=True)
class Rubric:
    """A genre's rubric: its name (a canonical genre or `general`), text and dimension ids."""

    name: str
    text: str
    ids: tuple[str, ...]


# Raw labels judged with another genre's rubric than their Table 4 row: 纪实 (literary
# non-fiction) counts under fiction to fit Table 4's arithmetic (`howtobench.genres`),
# but it has no plot or invented characters, so the prose rubric serves it.
RUBRIC_OF_RAW = {"纪实": "prose"}


@cache
def genre_rubric(genre: str, language: str, genre_raw: str = "") -> Rubric:
    """The rubric of a canonical genre (or of the raw label, where `RUBRIC_OF_RAW` says);
    any other genre label gets the general one."""
    genre = RUBRIC_OF_RAW.get(genre_raw, genre)
    name = genre if genre in CANONICAL_GENRES else GENERAL_RUBRIC
    text = baseline_prompt(f"rubric_{name}", language)
    return Rubric(name, text, rubric_ids(text))
