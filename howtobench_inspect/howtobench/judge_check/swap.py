"""The swap, `judge-check --quality`'s control: each instruction read with another
instruction's writing, whole, fluent and stored, which a judge that scores high whatever
it has seen word for word does not tell from the original (docs/judges.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from inspect_ai.model import ChatMessageAssistant
from inspect_ai.solver import Generate, Solver, TaskState, solver

from howtobench.dataset import open_source
from howtobench.dataset.records import WritingRecord
from howtobench.vocabulary.metadata import SampleKey

__all__ = ["SWAP", "TELL", "partner", "swap"]

SWAP = "swap"  # its name beside the damages' in the check's tasks, logs and report
TELL = "topic"  # what gives it away to a judge that does not read for sense


def partner(
    record: WritingRecord, records: Sequence[WritingRecord], writings: Mapping[str, str]
) -> WritingRecord | None:
    """The record whose stored writing (`writings`, by id) stands in for `record`'s:
    another of its language, nearest in genre, then length; None when there is none."""
    own = writings.get(record.id, "")
    others = [
        other
        for other in records
        if other.id != record.id
        and other.language == record.language
        and other.id in writings
        and writings[other.id].strip() != own.strip()
    ]
    return min(
        others,
        key=lambda other: (
            other.genre != record.genre,
            abs(len(writings[other.id]) - len(own)),
            other.id,
        ),
        default=None,
    )


@solver
def swap(dataset: str, task: str, writer: str) -> Solver:
    """Put `writer`'s stored writing of the sample's `partner` in place of the sample's
    own; the sample metadata `perturbation` records which."""
    source = open_source(dataset)
    records = source.records(task)
    writings = source.generations(task, writer)
    by_id = {record.id: record for record in records}

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        original = state.output.completion
        other = partner(by_id[str(state.sample_id)], records, writings)
        if other is None:
            detail: dict[str, object] = {"note": "no other writing of its task and language"}
        else:
            state.output.completion = writings[other.id]
            state.messages.append(ChatMessageAssistant(content=writings[other.id], model=SWAP))
            detail = {"partner": other.id, "genre": other.genre}
        state.metadata[SampleKey.PERTURBATION] = {
            "kind": SWAP,
            "original_length": len(original),
            "length": len(state.output.completion),
            **detail,
        }
        return state

    return solve
