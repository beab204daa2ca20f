"""Step 4, screening (paper section 4.6): personal information, unsafe content and
advertisements in an item's instruction, grounding and reference.

The paper's experts removed or de-identified what a DeepSeek-R1 detector helped them
find. Here the model is the detector: it quotes, word for word, each passage of the
three kinds, and a quote that is not in the item is asked again, so every flag carries
its evidence. `howtobench build` rejects a flagged item with its quotes (a human can
de-identify the text and build again); it rewrites nothing itself.

The task screens any data source of the package: a built folder, the published data, or
a JSONL file of writing tasks.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from howtobench.baselines.single_call import reason_of
from howtobench.build.prompts import build_prompt
from howtobench.build.steps import Step, fenced, step_sample, step_score, step_task
from howtobench.dataset import (
    TASKS,
    DataError,
    WritingRecord,
    load_records,
    parse_user_record,
    read_jsonl,
    resolve_source,
)
from howtobench.judge.inputs import clean_text
from howtobench.judge.replies import ReplyError, exact_keys
from howtobench.parameters import ParameterError

CATEGORIES: tuple[str, ...] = ("personal_info", "unsafe", "advertisement")


def _squeezed(text: str) -> str:
    """Text without whitespace: a quote may break lines differently from the item."""
    return "".join(text.split())


def check_flags(reply: dict[str, Any], metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Exactly the three lists (and an optional reason), each of passages found in the item."""
    exact_keys([k for k in reply if k != "reason"], CATEGORIES, "the reply")
    item = _squeezed(metadata["item"])
    flags: dict[str, list[str]] = {}
    for category in CATEGORIES:
        quotes = reply[category]
        if not isinstance(quotes, list) or not all(
            isinstance(q, str) and q.strip() for q in quotes
        ):
            raise ReplyError(f'"{category}" must be a list of quoted passages (empty if none)')
        for quote in quotes:
            if _squeezed(quote) not in item:
                raise ReplyError(
                    f'"{category}": "{quote.strip()}" is not in the item; quote its words exactly'
                )
        flags[category] = [q.strip() for q in quotes]
    return {"flags": flags, "reason": reason_of(reply)}


SCREEN = Step("screen", CATEGORIES, check_flags)


def item_text(record: WritingRecord) -> str:
    """An item as the detector reads it: instruction, grounding and reference, labelled."""
    none = build_prompt("none", record.language)
    return build_prompt(
        "item",
        record.language,
        instruction=record.instruction.strip(),
        grounding=record.grounding.strip() or none,
        reference=record.reference.strip() or none,
    )


def screen_sample(record: WritingRecord) -> Sample:
    text = item_text(record)
    prompt = build_prompt("screen", record.language, item=fenced(text))
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
    """Every item of a source: a data folder (each `<task>/aligned.jsonl` it has), the
    hub, `demo`, or a JSONL file of writing tasks (a record without `task` counts as
    open); ids must be unique across tasks, as they become sample ids."""
    if not dataset:
        raise ParameterError("dataset", "give a data folder or a JSONL file: -T dataset=DIR")
    source = resolve_source(dataset)
    if isinstance(source, Path) and source.is_file():
        records = [
            parse_user_record(obj, str(source), line, f"{source.stem}_{line}", "open")
            for line, obj in read_jsonl(source)
        ]
    else:
        tasks = [
            t for t in TASKS if source == "hub" or (Path(source) / t / "aligned.jsonl").is_file()
        ]
        if not tasks:
            raise DataError(str(source), "the folder has no <task>/aligned.jsonl")
        records = [record for t in tasks for record in load_records(dataset, t)]
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


@scorer(name="screen", metrics={"*": [mean()]})
def screen_scorer() -> Scorer:
    """Whether the item was flagged, and how many passages of each kind; the quotes in
    the explanation."""

    async def score(state: TaskState, target: Target) -> Score:
        def present(answer: dict[str, Any]) -> Score:
            flags: dict[str, list[str]] = answer["flags"]
            found = [f"{kind}: " + " | ".join(q) for kind, q in flags.items() if q]
            return Score(
                value={"flagged": float(bool(found)), **{k: len(q) for k, q in flags.items()}},
                explanation="\n".join(found) or "nothing found",
            )

        return step_score(state, present)

    return score


@task(name="screen")
def screen_step(dataset: str | None = None) -> Task:
    """Build step 4: find personal information, unsafe content and advertisements in
    each item's instruction, grounding and reference.

    Args:
        dataset: a data folder (`<task>/aligned.jsonl`, e.g. one `howtobench build`
            wrote), `hub`, `demo`, or a JSONL file of writing tasks (`instruction`,
            `grounding`, `reference`, ...).

    Returns:
        The task: one question per item to the evaluated model (`--model`).
    """
    records = screen_records(dataset)
    return step_task(
        SCREEN, [screen_sample(r) for r in records], screen_scorer(), {"dataset": dataset}
    )
