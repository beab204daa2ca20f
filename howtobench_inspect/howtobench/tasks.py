"""The three HoWToBench tasks: completion, guided writing and open writing."""

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset

from howtobench.dataset import filter_genre, load_generations, load_records, record_to_sample
from howtobench.scorers import build_scorers
from howtobench.writer import writer, writer_prompt


def howtobench_task(
    task_type: str,
    dataset: str | None = "hub",
    replay: str | None = None,
    genre: str | None = None,
    scorers: str | list[str] | None = None,
    judges: str | list[str] | None = None,
    reference: bool = True,
) -> Task:
    """One HoWToBench task on a data source, writing live or replaying stored writings."""
    records = filter_genre(load_records(dataset, task_type), genre)
    generations = load_generations(dataset, task_type, replay, records) if replay else None
    return Task(
        dataset=MemoryDataset(
            [record_to_sample(r, writer_prompt(r)) for r in records],
            name=f"howtobench-{task_type}",
        ),
        solver=writer(generations, replay),
        scorer=build_scorers(scorers, judges=judges, reference=reference),
        metadata={
            "howtobench_task": task_type,
            "dataset": dataset or "hub",
            "replay": replay,
            "genre": genre,
        },
        version=1,
    )


@task(name="completion")
def completion(
    dataset: str = "hub",
    replay: str | None = None,
    genre: str | None = None,
    scorers: str | list[str] | None = None,
    judges: str | list[str] | None = None,
    reference: bool = True,
) -> Task:
    """Level I: write the passage missing from a text (379 instructions).

    Args:
        dataset: `hub`, `demo`, a data folder (`<task>/aligned.jsonl`) or a JSONL file.
        replay: score this model's stored writings instead of generating.
        genre: keep one canonical genre (e.g. `argumentative`).
        scorers: comma list of scorer names (`tow`, `rouge_l`, `bleu`); default `tow`.
        judges: Tree-of-Writing expert panel (comma list of models); default the grader role.
        reference: show judges the human reference as an anchor (false: reference-free).
    """
    return howtobench_task("completion", dataset, replay, genre, scorers, judges, reference)


@task(name="guide")
def guide(
    dataset: str = "hub",
    replay: str | None = None,
    genre: str | None = None,
    scorers: str | list[str] | None = None,
    judges: str | list[str] | None = None,
    reference: bool = True,
) -> Task:
    """Level II: write from an instruction and an outline (456 instructions).

    Args:
        dataset: `hub`, `demo`, a data folder (`<task>/aligned.jsonl`) or a JSONL file.
        replay: score this model's stored writings instead of generating.
        genre: keep one canonical genre (e.g. `argumentative`).
        scorers: comma list of scorer names (`tow`, `rouge_l`, `bleu`); default `tow`.
        judges: Tree-of-Writing expert panel (comma list of models); default the grader role.
        reference: show judges the human reference as an anchor (false: reference-free).
    """
    return howtobench_task("guide", dataset, replay, genre, scorers, judges, reference)


@task(name="open")
def open_writing(
    dataset: str = "hub",
    replay: str | None = None,
    genre: str | None = None,
    scorers: str | list[str] | None = None,
    judges: str | list[str] | None = None,
    reference: bool = True,
) -> Task:
    """Level III: write from a one-sentence instruction only (467 instructions).

    Args:
        dataset: `hub`, `demo`, a data folder (`<task>/aligned.jsonl`) or a JSONL file.
        replay: score this model's stored writings instead of generating.
        genre: keep one canonical genre (e.g. `argumentative`).
        scorers: comma list of scorer names (`tow`, `rouge_l`, `bleu`); default `tow`.
        judges: Tree-of-Writing expert panel (comma list of models); default the grader role.
        reference: show judges the human reference as an anchor (false: reference-free).
    """
    return howtobench_task("open", dataset, replay, genre, scorers, judges, reference)
