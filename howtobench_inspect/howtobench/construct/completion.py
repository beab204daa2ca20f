"""Completion items by a seeded rule: which paragraphs are cut out of a text (section 4.5).

The paper's annotators chose the passage to remove; here a seeded rule does, so a build
is repeatable (the rule: docs/construction.md, "The completion rule"). Putting the
reference back at the marker gives the original text exactly.
"""

from __future__ import annotations

import random
import re
import statistics
from dataclasses import dataclass

from howtobench.vocabulary.words import FILL_MARKER

__all__ = ["Gap", "MAX_GAP", "choose_gap", "cut", "gap_size", "paragraphs"]

MIN_PARAGRAPHS = 3
MAX_GAP = 10  # the paper's limit on removed paragraphs
GAP_SHARE = 6  # a gap of about one paragraph in six
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
_CONTENT = re.compile(r"\S(?:.*\S)?")  # a line's content, without its indentation


@dataclass(frozen=True)
class Gap:
    """The passage cut out: `count` paragraphs from `first`, characters `start`..`end`."""

    first: int
    count: int
    start: int
    end: int


def paragraphs(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each paragraph's content, without surrounding whitespace."""
    if _BLANK_LINE.search(text.strip()):
        spans = []
        position = 0
        for block in re.split(r"(\n[^\S\n]*\n\s*)", text):
            content = block.strip()
            if content:
                offset = position + block.index(content[0])
                spans.append((offset, offset + len(content)))
            position += len(block)
        return spans
    return [m.span() for m in _CONTENT.finditer(text)]


def gap_size(paragraph_count: int) -> int:
    return min(MAX_GAP, max(1, round(paragraph_count / GAP_SHARE)))


def choose_gap(text: str, seed: int, text_id: str) -> Gap | str:
    """The gap this rule cuts from `text`, or why the text cannot make a completion item."""
    spans = paragraphs(text)
    if len(spans) < MIN_PARAGRAPHS:
        return f"{len(spans)} paragraph(s): a completion item needs at least {MIN_PARAGRAPHS}"
    lengths = [end - start for start, end in spans]
    enough = statistics.median(lengths) / 2
    k = gap_size(len(spans))
    runs = [
        first
        for first in range(1, len(spans) - k)
        if lengths[first] >= enough and lengths[first + k - 1] >= enough
    ]
    if not runs:
        return (
            f"no run of {k} paragraph(s) inside the text whose first and last paragraphs are "
            "at least half the median paragraph's length"
        )
    first = random.Random(f"{seed}/{text_id}").choice(runs)
    return Gap(first, k, spans[first][0], spans[first + k - 1][1])


def cut(text: str, gap: Gap) -> tuple[str, str]:
    """(grounding with the marker, reference): the text with the gap cut out, and the gap."""
    return text[: gap.start] + FILL_MARKER + text[gap.end :], text[gap.start : gap.end]
