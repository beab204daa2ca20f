"""Step 4, screening (paper section 4.6): personal information, unsafe content and
advertisements in an item's instruction, grounding and reference.

The model is the detector the paper's experts had: it quotes each passage word for word,
and a quote not in the item is asked again, so every flag carries its evidence.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import TaskState

from howtobench.construct.prompts import build_prompt, placeholders
from howtobench.construct.steps import (
    Step,
    answered_means,
    fenced,
    step_sample,
    step_score,
    step_task,
)
from howtobench.dataset import open_source
from howtobench.dataset.records import DataError, WritingRecord
from howtobench.judge.inputs import clean_text
from howtobench.judge.reading import ReplyError, exact_keys
from howtobench.judge.replies import reason_of
from howtobench.vocabulary.parameter_values import ParameterError, refuses_unknown

__all__ = [
    "CATEGORIES",
    "HARMFUL",
    "PERSONAL",
    "check_flags",
    "screen_records",
    "screen_sample",
    "screen_scorer",
    "screen_step",
]

CATEGORIES: tuple[str, ...] = ("personal_info", "unsafe", "advertisement")
PERSONAL = "personal_info"
HARMFUL: tuple[str, ...] = ("unsafe", "advertisement")  # rejected: nothing can mend them


def _squeezed(text: str) -> str:
    """Text without whitespace: a quote may break lines differently from the item."""
    return "".join(text.split())


def check_flags(reply: dict[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Exactly the three lists (and an optional reason), each of passages found in the
    item; each piece of personal information an object with its `text` and `kind`."""
    exact_keys([k for k in reply if k != "reason"], CATEGORIES, "the reply")
    item = _squeezed(metadata["item"])
    flags: dict[str, list[Any]] = {}
    for category in HARMFUL:
        quotes = reply[category]
        if not isinstance(quotes, list):
            raise ReplyError(f'"{category}" must be a list of quoted passages (empty if none)')
        flags[category] = [_quoted(category, quote, item) for quote in quotes]
    flags[PERSONAL] = _personal(reply[PERSONAL], metadata["language"], item)
    return {"flags": {c: flags[c] for c in CATEGORIES}, "reason": reason_of(reply)}


def _quoted(category: str, quote: Any, item: str) -> str:
    """A quote of the (whitespace-free) item, stripped."""
    if not isinstance(quote, str) or not quote.strip():
        raise ReplyError(f'"{category}" must hold quoted passages (an empty list if none)')
    if _squeezed(quote) not in item:
        raise ReplyError(
            f'"{category}": "{quote.strip()}" is not in the item; quote its words exactly'
        )
    return quote.strip()


def _personal(found: Any, language: str, item: str) -> list[dict[str, str]]:
    """The personal details: each `{"text": <a quote>, "kind": <a placeholder kind>}`."""
    kinds = list(placeholders(language))
    if not isinstance(found, list) or not all(isinstance(f, dict) for f in found):
        raise ReplyError(
            f'"{PERSONAL}" must be a list of {{"text": ..., "kind": ...}} objects (empty if none)'
        )
    details: list[dict[str, str]] = []
    for detail in found:
        exact_keys(detail, ("text", "kind"), f'each "{PERSONAL}" object')
        kind = detail["kind"].strip().lower() if isinstance(detail["kind"], str) else None
        if kind not in kinds:
            raise ReplyError(
                f'"{PERSONAL}": "kind" must be one of {", ".join(kinds)}, got {detail["kind"]!r}'
            )
        details.append({"text": _quoted(PERSONAL, detail["text"], item), "kind": kind})
    return details


SCREEN = Step("screen", CATEGORIES, check_flags)


def screen_sample(record: WritingRecord) -> Sample:
    none = build_prompt("none", record.language)
    text = build_prompt(
        "item",
        record.language,
        instruction=record.instruction.strip(),
        grounding=record.grounding.strip() or none,
        reference=record.reference.strip() or none,
    )
    kinds = "\n".join(f"- {p.kind}: {p.what}" for p in placeholders(record.language).values())
    prompt = build_prompt("screen", record.language, item=fenced(text), kinds=kinds)
    metadata = {
        "language": record.language,
        "task": record.task,
        "genre": record.genre,
        "item": clean_text(text)[0],
    }
    return step_sample(
        record.id, build_prompt("screen_system", record.language), prompt, metadata, text
    )


def screen_records(dataset: str | None) -> list[WritingRecord]:
    """Every item of a source; ids must be unique across tasks, as they become sample
    ids."""
    if not dataset:
        raise ParameterError("dataset", "give a data folder or a JSONL file: -T dataset=DIR")
    records = open_source(dataset).items()
    seen: dict[str, WritingRecord] = {}
    for record in records:
        if record.id in seen:
            first = seen[record.id]
            raise DataError(
                record.source,
                f"id '{record.id}' is used twice ({first.source}, line {first.line}, and "
                f"line {record.line}); screening needs one id per item",
                record.line,
            )
        seen[record.id] = record
    return records


@scorer(name="screen", metrics=[answered_means(["flagged", *CATEGORIES])])
@refuses_unknown("screen")
def screen_scorer() -> Scorer:
    """Whether the item was flagged, and how many passages of each kind."""

    async def score(state: TaskState, target: Target) -> Score:
        def present(answer: dict[str, Any]) -> Score:
            flags: dict[str, list[Any]] = answer["flags"]
            found = [
                f"{kind}: " + " | ".join(q if isinstance(q, str) else q["text"] for q in quotes)
                for kind, quotes in flags.items()
                if quotes
            ]
            return Score(
                value={"flagged": float(bool(found)), **{k: len(q) for k, q in flags.items()}},
                explanation="\n".join(found) or "nothing found",
            )

        return step_score(state, present)

    return score


@task(name="screen")
def screen_step(dataset: str | None = None) -> Task:
    """Build step 4: find personal information, unsafe content and advertisements in
    each item.

    Args:
        dataset: a data folder (`<task>/aligned.jsonl`, e.g. one `howtobench build`
            wrote), `hub`, `demo`, or a JSONL file of writing tasks (`instruction`,
            `grounding`, `reference`, ...).
    """
    records = screen_records(dataset)
    return step_task(
        SCREEN, [screen_sample(r) for r in records], screen_scorer(), {"dataset": dataset}
    )
