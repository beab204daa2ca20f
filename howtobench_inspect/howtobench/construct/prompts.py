"""The build steps' prompt files and the tables they read: genre names, each genre's
traits, a guide grounding's sections, the de-identification placeholders.

A genre's traits are the dimensions of the package's genre rubric (`baselines.prompts`),
so the build and the `rubric` judge agree on what a genre asks for.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from howtobench.baselines.prompts import genre_rubric
from howtobench.vocabulary.genres import CANONICAL_GENRES
from howtobench.vocabulary.templates import render, tagged, template

__all__ = [
    "TAGS",
    "Trait",
    "build_prompt",
    "genre_list",
    "genre_name",
    "genre_sections",
    "genre_traits",
    "placeholders",
    "trait_lines",
]

PROMPTS = Path(__file__).parent / "prompts"
# The tags of the build's LLM steps, on their system prompts (`howtobench.vocabulary.templates.tagged`).
TAGS = {f"{step}_system": step for step in ("classify", "quality", "backconstruct", "screen")}
# A rubric dimension line: `[id] Title: what is asked` (the bands under it are left out:
# they are for the rubric judge's 1-10 scale).
_TRAIT = re.compile(r"^\[([a-z][a-z0-9_]*)\] (.+?)[：:](.*)$", re.M)


def build_prompt(name: str, language: str, **values: object) -> str:
    return tagged(render(PROMPTS, name, language, **values).strip(), TAGS.get(name))


def _rows(name: str, language: str) -> list[list[str]]:
    """The lines of a `a | b | ...` prompt file, each split into its stripped parts."""
    lines = template(PROMPTS, name, language).template.splitlines()
    return [[part.strip() for part in line.split("|")] for line in lines if line.strip()]


@dataclass(frozen=True)
class GenreName:
    """How a genre is named in one language."""

    name: str  # 议论文, argumentative essay
    phrase: str  # as an instruction writes it: 一篇议论文, an argumentative essay
    definition: str


@cache
def genre_names(language: str) -> dict[str, GenreName]:
    """The 12 canonical genres' names in `language`, `others` last, as a menu reads."""
    names = {genre: GenreName(*rest) for genre, *rest in _rows("genres", language)}
    if sorted(names) != sorted(CANONICAL_GENRES):
        raise ValueError(f"genres.{language}.txt must list {', '.join(CANONICAL_GENRES)}")
    return names


def genre_name(genre: str, language: str) -> GenreName:
    """A canonical genre's names, or a label of the user's own used as its own name."""
    known = genre_names(language).get(genre)
    if known is not None:
        return known
    article = "一篇" if language == "zh" else "a "
    return GenreName(genre, f"{article}{genre}", "")


def genre_list(language: str) -> str:
    """The classifier's menu: one line per genre with its id, name and definition."""
    return "\n".join(
        f"- {genre}（{g.name}）：{g.definition}"
        if language == "zh"
        else f"- {genre} ({g.name}): {g.definition}"
        for genre, g in genre_names(language).items()
    )


@dataclass(frozen=True)
class Trait:
    """One point a genre asks for: a rubric dimension, or a guide grounding's section."""

    id: str
    title: str
    question: str


def trait_lines(traits: tuple[Trait, ...]) -> str:
    """The traits as a prompt lists them, one `[id] Title: question` line each."""
    return "\n".join(f"[{t.id}] {t.title}: {t.question}" for t in traits)


def genre_traits(genre: str, language: str, genre_raw: str = "") -> tuple[Trait, ...]:
    """The genre's traits: its rubric's dimensions (the general rubric for own labels)."""
    rubric = genre_rubric(genre, language, genre_raw)
    return tuple(
        Trait(m.group(1), m.group(2).strip(), m.group(3).strip())
        for m in _TRAIT.finditer(rubric.text)
    )


# Raw labels whose published groundings have sections of their own: 纪实 (literary
# non-fiction) counts as fiction, but its 36 guide groundings use four other headings.
SECTIONS_OF_RAW = {"纪实": "documentary"}


@cache
def _sections(language: str) -> dict[str, tuple[Trait, ...]]:
    layouts: dict[str, list[Trait]] = {}
    for layout, *section in _rows("sections", language):
        layouts.setdefault(layout, []).append(Trait(*section))
    return {layout: tuple(sections) for layout, sections in layouts.items()}


def genre_sections(genre: str, language: str, genre_raw: str = "") -> tuple[Trait, ...]:
    """The sections a guide grounding of the genre is written in (section 4.5); none for
    a genre whose published groundings are key points."""
    return _sections(language).get(SECTIONS_OF_RAW.get(genre_raw, genre), ())


@dataclass(frozen=True)
class Placeholder:
    """What replaces one kind of personal information, and what the kind covers."""

    kind: str
    text: str  # [具体姓名], [name]
    what: str


@cache
def placeholders(language: str) -> dict[str, Placeholder]:
    """The kinds of personal information, in the file's order, with their placeholders."""
    return {row[0]: Placeholder(*row) for row in _rows("placeholders", language)}
