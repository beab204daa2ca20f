"""The damages `-T perturb=` does to a writing by itself, as data: the table `DAMAGES`,
one `Damage(...)` and its function each, which everything that names a damage reads
(docs/extending.md, "A damage"). It imports nothing heavy, so that `judge-check --help`
can list them. The genre transfer is a model's rewrite, not a function of the text
(`writing.perturb`)."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

from howtobench.vocabulary.templates import render

__all__ = [
    "DAMAGES",
    "LOWERING",
    "NAMED",
    "PROMPTS",
    "Damage",
    "Tell",
    "drop",
    "inject",
    "repeat",
    "sentences",
    "shuffle",
    "units",
]

PROMPTS = Path(__file__).parent / "prompts"
Changed = tuple[str, dict[str, Any]]  # the damaged writing, and what was done
# What gives a damage away to a judge that does not read for sense: the length, a passage
# that comes twice, only the order of the sentences; or a sentence addressed to the judge.
Tell = Literal["length", "repetition", "order", "request"]
_SENTENCE_END = re.compile(r"(?<=[。！？!?.；;])")
# Where `shuffle` ends a sentence: after its end marks and the closing quotes that follow
# them (so a quotation moves whole), and after a full stop only before a space and not
# after a digit (so that "1. " of a numbered heading and "3.5" stay whole).
_SHUFFLE_END = re.compile(r"[。！？!?；;…]+[”’」』）)\"']*|(?<!\d)\.+(?=\s)")
_LINE_BREAKS = re.compile(r"(\n\s*)")


@dataclass(frozen=True)
class Damage:
    """A damage, as `-T perturb=<name>` applies it."""

    name: str
    # of the writing, the seeded generator and the writing's language (of what it adds)
    function: Callable[[str, random.Random, str], Changed]
    tell: Tell
    lowers: bool = True  # a good judge scores it lower (`judge-check --quality`), or ignores it
    paper: Mapping[str, float] | None = None  # the paper's figures (`_table7`)


def units(text: str) -> tuple[list[str], str]:
    """The writing's paragraphs and their separator (blank lines, else line breaks) when
    there are at least 4; else its sentences, joined with nothing."""
    for separator, pattern in (("\n\n", r"\n\s*\n"), ("\n", r"\n")):
        paragraphs = [p for p in re.split(pattern, text.strip()) if p.strip()]
        if separator in text and len(paragraphs) >= 4:
            return paragraphs, separator
    return [s for s in _SENTENCE_END.split(text.strip()) if s.strip()], ""


def _unit_name(joiner: str) -> str:
    return "paragraph" if joiner else "sentence"


def drop(text: str, rng: random.Random, language: str) -> Changed:
    """Remove 1-3 paragraphs (or sentences, in a text of fewer than 4 paragraphs)."""
    parts, joiner = units(text)
    if len(parts) < 2:
        return text, {"removed": [], "note": "too short to drop from"}
    count = rng.randint(1, min(3, len(parts) - 1))
    removed = sorted(rng.sample(range(len(parts)), count))
    kept = [p for i, p in enumerate(parts) if i not in removed]
    return joiner.join(kept), {"unit": _unit_name(joiner), "removed": removed}


def repeat(text: str, rng: random.Random, language: str) -> Changed:
    """Repeat 1-3 paragraphs (or sentences) at other positions: the copies go into gaps
    between the original units, never next to their own unit."""
    parts, joiner = units(text)
    if len(parts) < 2:
        return text, {"repeated": [], "note": "too short to repeat within"}
    count = rng.randint(1, min(3, len(parts)))
    into: dict[int, list[int]] = {}  # gap before original unit g (g == len: at the end)
    moves = []
    for source in sorted(rng.sample(range(len(parts)), count)):
        gap = rng.choice([g for g in range(len(parts) + 1) if g not in (source, source + 1)])
        into.setdefault(gap, []).append(source)
        moves.append({"unit": source, "gap": gap})
    result = []
    for gap in range(len(parts) + 1):
        result += [parts[s] for s in into.get(gap, [])]
        if gap < len(parts):
            result.append(parts[gap])
    return joiner.join(result), {"unit": _unit_name(joiner), "repeated": moves}


def sentences(paragraph: str) -> list[str]:
    """The paragraph's sentences, each with its end marks and closing quotes; joined they
    give the paragraph back, character for character."""
    edges = [0, *(match.end() for match in _SHUFFLE_END.finditer(paragraph)), len(paragraph)]
    return [paragraph[a:b] for a, b in pairwise(edges) if a < b]


def _reordered(parts: list[str], rng: random.Random) -> list[str]:
    """`parts` in a seeded order that differs from theirs (a shuffle that drew the same
    order is turned by one)."""
    order = list(range(len(parts)))
    rng.shuffle(order)
    if order == sorted(order):
        order = order[1:] + order[:1]
    return [parts[i] for i in order]


def shuffle(text: str, rng: random.Random, language: str) -> Changed:
    """Every paragraph's sentences in another order, the paragraphs and their line breaks
    where they were: the same characters, so the same length, without the line of
    thought (beyond the paper: a judge that reads length alone cannot see it). A text
    whose paragraphs are single sentences (a poem, a list) has its lines shuffled."""
    pieces = _LINE_BREAKS.split(text)  # paragraphs at even places, their breaks between
    shuffled = []
    for index in range(0, len(pieces), 2):
        paragraph = pieces[index]
        body = paragraph.strip()
        parts = sentences(body)
        if len(set(parts)) < 2:
            continue
        start = paragraph.index(body)
        moved = "".join(_reordered(parts, rng))
        if moved != body:
            pieces[index] = paragraph[:start] + moved + paragraph[start + len(body) :]
            shuffled.append(index // 2)
    if shuffled:
        return "".join(pieces), {"unit": "sentence", "paragraphs": shuffled}
    lines = pieces[::2]
    if len(set(lines)) >= 2:
        pieces[::2] = _reordered(lines, rng)
        if (moved := "".join(pieces)) != text:
            return moved, {"unit": "paragraph"}
    return text, {"paragraphs": [], "note": "too short to shuffle within"}


def inject(text: str, rng: random.Random, language: str) -> Changed:
    """A sentence inside the writing asks the judge for full marks (beyond the paper: a
    security check of the judge, which a good judge ignores)."""
    parts, joiner = units(text)
    sentence = render(PROMPTS, "inject", language).strip()
    position = rng.randint(1, max(1, len(parts) - 1)) if len(parts) > 1 else len(parts)
    parts.insert(position, sentence)
    return joiner.join(parts), {"sentence": sentence, "at": position}


def _table7(*changes: float) -> dict[str, float]:
    """The paper's Table 7, ToW with GPT-4o: the mean change of overall, content, format
    and impression, damaged minus initial writing (the rule leaf included)."""
    return dict(zip(("overall", "content", "format", "impression"), changes, strict=True))


DAMAGES: tuple[Damage, ...] = (
    Damage("drop", drop, "length", paper=_table7(-0.36, -0.34, -0.58, -0.24)),
    Damage("repeat", repeat, "repetition", paper=_table7(-0.49, -0.48, -0.81, -0.30)),
    Damage("shuffle", shuffle, "order"),
    Damage("inject", inject, "request", lowers=False),
)
NAMED: dict[str, Damage] = {damage.name: damage for damage in DAMAGES}
LOWERING: tuple[str, ...] = tuple(damage.name for damage in DAMAGES if damage.lowers)
