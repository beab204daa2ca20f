"""What the check's eval runs on: writings stored in the data, replayed by a replay model
(`replay/<writer>`), so that no writer is called and every call is the judge's."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai import Task, task_with
from inspect_ai.solver import generate

from howtobench.dataset import DataSource, open_source
from howtobench.judge_check.swap import SWAP, swap
from howtobench.tasks import completion, guide, open_writing
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.metadata import TaskKey
from howtobench.vocabulary.parameter_values import ParameterError
from howtobench.vocabulary.words import TASKS
from howtobench.writing.damages import LOWERING
from howtobench.writing.writer import final_writing

__all__ = [
    "CHECKED",
    "RETEST_EPOCHS",
    "SEED",
    "build_tasks",
    "check_tasks",
    "default_replay",
    "present_tasks",
]

SEED = 0  # the `--quality` copies' `perturb_seed`: the same copies on every check
# The originals' epochs with `--quality`: the first is compared, the second is the retest,
# asked anew at the judge's temperature (the epoch is in each question's scope in the reply
# store, `judge.sampling.judge_scope`); the weights are not (`reuse_weights`).
RETEST_EPOCHS = 2
CHECKED = (*LOWERING, SWAP)  # what each original is set against, each ruled on alone

_BUILDERS = {"completion": completion, "guide": guide, "open": open_writing}


def present_tasks(dataset: str, tasks: Sequence[str]) -> list[str]:
    """The tasks among `tasks` that the data has records of (a data folder or JSONL file
    need not hold all three); none is a `UserError`."""
    unknown = [t for t in tasks if t not in TASKS]
    if unknown or not tasks:
        raise UserError(
            f"--tasks: unknown task {', '.join(unknown) or '(none)'} "
            f"(give a comma list of {', '.join(TASKS)})"
        )
    source = open_source(dataset)
    if not source.stores_writings:  # before the hub is asked for data that could not be used
        raise UserError(
            "--dataset hub has no stored writings to replay: give demo, a data folder "
            "(<task>/inferences/<model>.jsonl) or a JSONL file with 'generations'"
        )
    kept = [task for task in tasks if task in source.tasks()]
    if not kept:
        raise UserError(f"--dataset {dataset}: no records of {', '.join(tasks)}")
    return kept


def default_replay(dataset: str, tasks: Sequence[str]) -> str:
    """The stored writer the check replays of the `present_tasks`: the first model (by
    name) with a writing stored for every record of every task run."""
    source = open_source(dataset)
    stored = [set(source.models(task)) for task in tasks]
    candidates = sorted(set.intersection(*stored)) if stored else []
    model = next((m for m in candidates if all(_stores_all(source, t, m) for t in tasks)), None)
    if model is None:
        raise UserError(
            f"--dataset {dataset}: no model has stored writings for every task run "
            f"({', '.join(tasks)}): give --replay MODEL or --tasks"
        )
    return model


def _stores_all(source: DataSource, task: str, model: str) -> bool:
    stored = source.generations(task, model)
    return all(record.id in stored for record in source.records(task))


def build_tasks(dataset: str, replay: str, tasks: Sequence[str], **parameters: Any) -> list[Task]:
    """The ToW tasks of the check, to be run with the model `replay/<replay>`; a writing the
    writer lacks is the source's error (built from Python, a task cannot know its model)."""
    source = open_source(dataset)
    for task in tasks:
        source.generations_for(task, replay, source.records(task))
    return [_BUILDERS[task](dataset=dataset, **parameters) for task in tasks]


def check_tasks(
    dataset: str, replay: str, tasks: Sequence[str], weights: str, quality: bool
) -> list[Task]:
    """The check's tasks; with `quality`, per task its originals in `RETEST_EPOCHS` epochs,
    a copy per damage and the swap, one after the other, so that a check that runs out of
    time has whole pairs."""
    try:
        originals = build_tasks(dataset, replay, tasks, weights=weights)
        damaged = [
            build_tasks(dataset, replay, tasks, perturb=d, perturb_seed=SEED, weights=weights)
            for d in (LOWERING if quality else ())
        ]
    except ParameterError as error:
        if error.name != "weights":
            raise
        raise UserError(f"--weights: {str(error).removeprefix('-T weights: ')}") from None
    if not quality:
        return originals
    swapped = [
        _swapped(t, dataset, replay) for t in build_tasks(dataset, replay, tasks, weights=weights)
    ]
    originals = [task_with(t, epochs=RETEST_EPOCHS) for t in originals]
    return [each for group in zip(originals, *damaged, swapped, strict=True) for each in group]


def _swapped(task: Task, dataset: str, replay: str) -> Task:
    """`task` with each writing swapped for another instruction's, named as a damage."""
    metadata = task.metadata or {}  # a writing task's always holds these keys
    solvers = [
        generate(),
        swap(dataset, metadata[TaskKey.HOWTOBENCH_TASK], replay),
        final_writing(metadata[TaskKey.CUT], metadata[TaskKey.ARTIFACTS]),
    ]
    return task_with(task, solver=solvers, metadata={**metadata, TaskKey.PERTURB: SWAP})
