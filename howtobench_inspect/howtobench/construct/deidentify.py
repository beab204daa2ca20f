"""De-identification (paper section 4.6): each personal detail the screen step quoted is
replaced by its kind's placeholder wherever it occurs in the item, so instruction,
grounding and reference stay consistent and a completion item's gap still fits.

A detail is matched whitespace aside, longest first, so a name inside a longer quoted
detail cannot break it, and as a whole word at a Latin end ("Kent" is not replaced inside
"Kentish"). What was replaced is recorded by kind and count, never by the detail itself,
so the manifest and the summary carry no personal data.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from howtobench.construct.items import Item
from howtobench.construct.prompts import placeholders

__all__ = ["FIELDS", "Replacement", "deidentified", "masked"]

FIELDS: tuple[str, ...] = ("instruction", "grounding", "reference")
_LATIN = re.compile(r"[A-Za-z0-9]")


@dataclass(frozen=True)
class Replacement:
    """One detail replaced: its kind, its placeholder, and how often in each field."""

    kind: str
    placeholder: str
    counts: dict[str, int]

    def record(self) -> dict[str, Any]:
        return {"kind": self.kind, "placeholder": self.placeholder, **self.counts}


def detail_pattern(detail: str) -> re.Pattern[str]:
    """The detail as a pattern that lets whitespace fall anywhere between its characters."""
    chars = [c for c in detail if not c.isspace()]
    body = r"\s*".join(re.escape(c) for c in chars)
    start = r"(?<![A-Za-z0-9])" if _LATIN.match(chars[0]) else ""
    end = r"(?![A-Za-z0-9])" if _LATIN.match(chars[-1]) else ""
    return re.compile(start + body + end)


def _ordered(details: Iterable[Mapping[str, str]]) -> list[tuple[re.Pattern[str], str]]:
    """Each distinct detail's pattern and kind, the longest detail first."""
    unique = {d["text"]: d["kind"] for d in details}
    ordered = sorted(unique.items(), key=lambda pair: -len(pair[0]))
    return [(detail_pattern(detail), kind) for detail, kind in ordered]


def deidentified(
    item: Item, details: Iterable[Mapping[str, str]]
) -> tuple[Item, list[Replacement]]:
    """The item with every detail (`{"text", "kind"}`) replaced by its kind's
    placeholder, and what was replaced (a detail found nowhere is not listed)."""
    marks = placeholders(item.text.language)
    fields = {name: getattr(item, name) for name in FIELDS}
    replaced: list[Replacement] = []
    for pattern, kind in _ordered(details):
        placeholder = marks[kind].text
        counts = {}
        for name, value in fields.items():
            fields[name], counts[name] = pattern.subn(_literal(placeholder), value)
        if any(counts.values()):
            replaced.append(Replacement(kind, placeholder, counts))
    return replace(item, **fields), replaced


def masked(text: str, details: Iterable[Mapping[str, str]], language: str) -> str:
    """`text` (a quote of harmful content) with the details replaced as in an item."""
    marks = placeholders(language)
    for pattern, kind in _ordered(details):
        text = pattern.sub(_literal(marks[kind].text), text)
    return text


def _literal(text: str) -> str:
    """`text` as an `re.sub` replacement that is taken as it is."""
    return text.replace("\\", r"\\")
