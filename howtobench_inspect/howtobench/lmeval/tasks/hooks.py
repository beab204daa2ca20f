"""What lm-eval's HoWToBench task files call (`!function hooks.<name>`): the inspect tasks'
items, writer prompts and overlap scores, so both harnesses ask and score alike. A row
carries the whole record, so that `howtobench lm-eval import` can write it back.
"""

from __future__ import annotations

from typing import Any

from howtobench.baselines.overlap import overlap_values
from howtobench.dataset import open_source
from howtobench.dataset.records import WritingRecord, filter_genre
from howtobench.vocabulary.errors import UserError
from howtobench.writing.state import DEFAULT_ARTIFACTS, STORED, examine
from howtobench.writing.writer import writer_prompt

__all__ = [
    "completion_docs",
    "doc_to_text",
    "docs",
    "guide_docs",
    "open_docs",
    "process_results",
    "row",
]


def completion_docs(**metadata: Any) -> Any:
    return docs("completion", metadata)


def guide_docs(**metadata: Any) -> Any:
    return docs("guide", metadata)


def open_docs(**metadata: Any) -> Any:
    return docs("open", metadata)


def docs(task: str, metadata: dict[str, Any]) -> Any:
    """The task's items as lm-eval's dataset (one `test` split). lm-eval passes its model
    arguments here too, so only `dataset` and `genre` are read; an item without a
    reference is refused, since lm-eval's mean cannot leave a sample unscored."""
    from datasets import Dataset, DatasetDict

    source = open_source(metadata.get("dataset") or "hub")
    try:
        records = filter_genre(source.records(task), metadata.get("genre"))
    except ValueError as error:
        raise UserError(f"--metadata genre: {error}") from None
    for record in records:
        if not record.reference.strip():
            raise UserError(
                f"{record.source}, line {record.line}: item '{record.id}' has no reference, "
                "which lm-eval's BLEU and ROUGE-L need: give every item one, or write in inspect"
            )
    rows = [row(record, source.name) for record in records]
    return DatasetDict({"test": Dataset.from_list(rows)})


def row(record: WritingRecord, dataset: str) -> dict[str, str]:
    """One item as lm-eval keeps and logs it: the published `aligned.jsonl` fields, its
    language, genre and writer prompt."""
    return {
        "infer_id": record.id,
        "bench_id": record.bench_id,
        "task_type": record.task,
        "sub_task": record.genre_raw,
        "genre": record.genre,
        "basic_instruction": record.instruction,
        "information": record.grounding,
        "reference": record.reference,
        "language": record.language,
        "dataset": dataset,
        "prompt": writer_prompt(record),
    }


def doc_to_text(doc: dict[str, Any]) -> str:
    """The writer prompt, as it is: the chat template makes it the one user message,
    as inspect sends it."""
    return str(doc["prompt"])


def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, float]:
    """ROUGE-L, BLEU-1 and BLEU-4 of the first generation, as inspect's scorers score it
    (lm-eval keeps no stop reason: the writing is read as a stored one is)."""
    writing, _ = examine(
        results[0] or "", STORED, str(doc["task_type"]), artifacts=DEFAULT_ARTIFACTS
    )
    return overlap_values(writing, str(doc["reference"]), str(doc["language"]))
