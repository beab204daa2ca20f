"""What a back-constructed item looks like: the shape of the published guide and open
items, literary (a chatty request, most often with a length, and trait sections) or
practical (a businesslike request, no length, key points). The figures and the rules:
docs/construction.md, "Requests and groundings like the published ones".
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

from rapidfuzz import fuzz
from rapidfuzz.utils import default_process

from howtobench.construct.corpus import CorpusText
from howtobench.construct.prompts import Trait, genre_sections

__all__ = [
    "ItemShape",
    "SHAPES",
    "copied_sentence",
    "item_shape",
    "latin_breaks",
    "longest_request",
    "measure",
    "stated_lengths",
    "target_length",
    "unit",
]


@dataclass(frozen=True)
class Shape:
    """Shares of a genre's published items that state a length, and that have sections."""

    length: float
    sections: float


SHAPES: dict[str, Shape] = {
    "fiction": Shape(length=0.98, sections=1.0),
    "prose": Shape(length=0.48, sections=0.48),
    "poem": Shape(length=0.06, sections=1.0),
}
_PRACTICAL = Shape(length=0.0, sections=0.0)
_STEP = {"zh": 500}  # characters; words in every other language
_WORD_STEP = 100
# The longest request accepted, in the unit lengths are counted in: the published
# instructions have 33-209 characters (the prompt asks for at most 150, or 80 words).
_LONGEST = {"zh": 250}
_LONGEST_WORDS = 150
# A reference sentence the request must not copy: at least this long (a title, a short
# line, may be named), and how alike (rapidfuzz partial_ratio) counts as a copy.
_COPY_MIN = {"zh": 16}
_COPY_MIN_LATIN = 48
COPIED = 90.0
_DIGITS_ZH = re.compile(r"(\d[\d,，]*)\s*(?:多)?个?字(?!诀)")
_NUMERALS_ZH = re.compile(
    r"[一二两三四五六七八九十]+[百千万][零一二两三四五六七八九十百千万]*\s*(?:多)?个?字"
)
_DIGITS_EN = re.compile(r"(\d[\d,]*)(?:\s+|-)words?\b", re.IGNORECASE)
_NUMERALS_EN = re.compile(r"\b(?:hundred|thousand)(?:\s+|-)words?\b", re.IGNORECASE)
# A Latin sentence break: an end mark, closing quotes, space, then a capital letter;
# unless the word before a full stop is a usual abbreviation (Mr. Smith, e.g. This).
_LATIN_BREAK = re.compile(r"(\w+(?:\.\w+)*)?([.!?])[\"'”’)]*\s+(?=[A-Z])")
_ABBREVIATIONS = {"mr", "mrs", "ms", "dr", "st", "prof", "e.g", "i.e", "etc", "vs", "no", "u.s"}
_OTHER_BREAK = re.compile(r"[。！？；;…]+[”’」』）)]*|\n")
_ENDS = ("。", "！", "？", ".", "!", "?", "；", ";", "…", "」", "”", '"')


@dataclass(frozen=True)
class ItemShape:
    """One item's shape: its grounding's sections (none: key points), its stated length."""

    sections: tuple[Trait, ...]
    length: int | None


def counts_characters(language: str) -> bool:
    return language in _STEP


def measure(text: str, language: str) -> int:
    """A text's length as a request states it: characters for Chinese, else words."""
    return len(text) if counts_characters(language) else len(text.split())


def unit(language: str) -> str:
    """What `measure` counts, as a message names it."""
    return "characters" if counts_characters(language) else "words"


def target_length(reference: str, language: str) -> int | None:
    """The length a request for `reference` states, rounded up; None for a short one."""
    step = _STEP.get(language, _WORD_STEP)
    size = measure(reference, language)
    return math.ceil(size / step) * step if size >= step else None


def item_shape(text: CorpusText, seed: int) -> ItemShape:
    """The text's item shape: one seeded draw below the genre's length share gives a
    length, below its sections share sections (so prose's two shares stay tied)."""
    shape = SHAPES.get(text.genre, _PRACTICAL)
    draw = random.Random(f"{seed}/shape/{text.id}").random()
    sections = genre_sections(text.genre, text.language, text.genre_raw)
    return ItemShape(
        sections=sections if draw < shape.sections else (),
        length=target_length(text.text, text.language) if draw < shape.length else None,
    )


def stated_lengths(request: str, language: str) -> list[int | None]:
    """Every length a request states, in order: the number, or None for one in words
    ("两千字", "two thousand words")."""
    digits, numerals = (
        (_DIGITS_ZH, _NUMERALS_ZH) if counts_characters(language) else (_DIGITS_EN, _NUMERALS_EN)
    )
    found: list[int | None] = [
        int(re.sub(r"[,，]", "", m.group(1))) for m in digits.finditer(request)
    ]
    return found + [None for _ in numerals.finditer(request)]


def longest_request(language: str) -> int:
    return _LONGEST.get(language, _LONGEST_WORDS)


def copied_sentence(request: str, reference: str, language: str) -> str | None:
    """The first sentence of `reference` that `request` copies, or None. Short sentences
    are passed over, and so is a first line without an end mark: the title, which a
    request may name."""
    shortest = _COPY_MIN.get(language, _COPY_MIN_LATIN)
    lines = reference.strip().splitlines()
    if lines and not lines[0].rstrip().endswith(_ENDS):
        reference = "\n".join(lines[1:])
    for sentence in sentences(reference):
        if len(sentence) >= shortest and fuzz.partial_ratio(
            sentence, request, processor=default_process, score_cutoff=COPIED
        ):
            return sentence
    return None


def latin_breaks(text: str) -> list[int]:
    """Where Latin sentences end in `text`: the offset after each break."""
    return [
        m.end()
        for m in _LATIN_BREAK.finditer(text)
        if not (m.group(2) == "." and (m.group(1) or "").lower() in _ABBREVIATIONS)
    ]


def sentences(text: str) -> list[str]:
    """The text's sentences, stripped."""
    cuts = {m.end() for m in _OTHER_BREAK.finditer(text)} | set(latin_breaks(text))
    bounds = [0, *sorted(cuts), len(text)]
    pieces = (text[start:end].strip() for start, end in zip(bounds, bounds[1:], strict=False))
    return [piece for piece in pieces if piece]
