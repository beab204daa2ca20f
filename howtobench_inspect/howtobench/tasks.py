"""The three HoWToBench tasks: completion, guided writing and open writing."""

import inspect
from collections.abc import Callable
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Solver

from howtobench.dataset import (
    WritingRecord,
    filter_genre,
    load_generations,
    load_records,
    record_to_sample,
)
from howtobench.judge.calls import JUDGE_MAX_RETRIES
from howtobench.perturb import perturb as perturb_solver
from howtobench.scorers import build_scorers
from howtobench.writer import StoredWritings, writer, writer_prompt

PARAMETERS = """
    Args:
        dataset: `hub`, `demo`, a data folder (`<task>/aligned.jsonl`) or a JSONL file.
        replay: score this model's stored writings instead of generating.
        genre: keep one canonical genre (e.g. `argumentative`).
        scorers: comma list of scorers (`tow`, `rubric`, `autoplan`, `rouge_l`, `bleu`).
        judges: expert panel of the judge scorers (comma list of models); default the
            grader role.
        reference: the judges' anchor: true (the human reference), false (none), or the
            name of a model whose stored writing serves as the anchor.
        nodes: Tree-of-Writing node ablation: the root nodes to keep (comma list).
        judge_samples: self-consistency: judge each writing this many times (mean).
        reuse_weights: negotiate weights once per instruction (false: every time).
        perturb: disturb the writing before scoring: drop, repeat, inject,
            transfer:<comment|letter|official|poem>.
        perturb_seed: seed of the disturbances.
"""


def howtobench_task(
    task_type: str,
    dataset: str | None = "hub",
    replay: str | None = None,
    genre: str | None = None,
    scorers: str | list[str] | None = None,
    judges: str | list[str] | None = None,
    reference: bool | str = True,
    nodes: str | list[str] | None = None,
    judge_samples: int = 1,
    reuse_weights: bool = True,
    perturb: str | None = None,
    perturb_seed: int = 0,
) -> Task:
    """One HoWToBench task on a data source, writing live or replaying stored writings."""
    records = filter_genre(load_records(dataset, task_type), genre)
    generations = load_generations(dataset, task_type, replay, records) if replay else None
    anchors = None
    if isinstance(reference, str):  # another model's stored writing as the anchor
        anchors = load_generations(dataset, task_type, reference, records)
    solvers: list[Solver] = [
        writer(StoredWritings(replay, generations) if replay and generations is not None else None)
    ]
    if perturb:
        solvers.append(perturb_solver(perturb, perturb_seed))
    return Task(
        dataset=MemoryDataset(
            [_sample(r, anchors, reference) for r in records], name=f"howtobench-{task_type}"
        ),
        solver=solvers,
        scorer=build_scorers(
            scorers,
            judges=judges,
            reference=reference is not False,
            nodes=nodes,
            samples=judge_samples,
            reuse_weights=reuse_weights,
        ),
        metadata={
            "howtobench_task": task_type,
            "dataset": dataset or "hub",
            "replay": replay,
            "genre": genre,
            "reference": reference
            if isinstance(reference, str)
            else ("human" if reference else "none"),
            "perturb": perturb,
        },
        # bounded retries (inspect's default is to retry forever): a dead judge or
        # writer ends the run in about a minute; --max-retries overrides it
        config=GenerateConfig(max_retries=JUDGE_MAX_RETRIES),
        version=1,
    )


def _sample(record: WritingRecord, anchors: dict[str, str] | None, source: bool | str) -> Sample:
    """The record's sample; with anchors, the anchor text replaces the human reference."""
    sample = record_to_sample(record, writer_prompt(record))
    if anchors is not None and sample.metadata is not None:
        sample.metadata.update(anchor=anchors[record.id], anchor_source=str(source))
    return sample


def _register(task_type: str, summary: str) -> Callable[..., Task]:
    """The inspect task `task_type`, taking every parameter of `howtobench_task` but the
    first (the signature is copied, so inspect lists and checks the parameters)."""

    def build(**options: Any) -> Task:
        return howtobench_task(task_type, **options)

    signature = inspect.signature(howtobench_task)
    build.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=list(signature.parameters.values())[1:]
    )
    build.__name__ = build.__qualname__ = "open_writing" if task_type == "open" else task_type
    build.__doc__ = summary + "\n" + PARAMETERS
    return task(name=task_type)(build)


completion = _register(
    "completion", "Level I: write the passage missing from a text (379 instructions)."
)
guide = _register("guide", "Level II: write from an instruction and an outline (456 instructions).")
open_writing = _register(
    "open", "Level III: write from a one-sentence instruction only (467 instructions)."
)
