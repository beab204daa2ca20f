"""Custom metrics run the way an eval runs them: each sample's score in each epoch, inspect's
epoch reducer, then the metrics. A metric sees the score the reducer leaves (the default
`mean` turns a dict of ints into floats, `mode` keeps a name), not the one the scorer
returned, so a metric tested on hand-built `SampleScore`s can pass while the eval reports
another number. inspect-evals-lint (IETS008) looks for a test of each `@metric` that
imports this module."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Epochs, Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.scorer import Metric, Score, Scorer, Target, Value, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from support.evals import run_eval

Epoch = Value | Score
"""A sample's score in one epoch: a value, or a whole `Score` (an unscored one, say)."""


@solver
def as_given() -> Solver:
    """No writer: the scores are given."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return state

    return solve


def _replaying(metrics: Sequence[Metric], table: Mapping[str, Sequence[Epoch]]) -> Scorer:
    @scorer(name="given_epochs", metrics=list(metrics))
    def given_epochs() -> Scorer:
        async def score(state: TaskState, target: Target) -> Score:
            given = table[str(state.sample_id)][state.epoch - 1]
            return given if isinstance(given, Score) else Score(value=given)

        return score

    return given_epochs()


def run_metrics(
    metrics: Sequence[Metric],
    epochs: Mapping[str, Sequence[Epoch]],
    log_dir: Path,
    *,
    reducer: str = "mean",
    metadata: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """The metrics' values, named as the log names them, after a real eval in which each
    sample (`epochs`' keys, with `metadata` as its sample metadata) is scored with its
    score in each epoch and the epochs are folded by `reducer`."""
    counts = {len(scores) for scores in epochs.values()}
    assert len(counts) == 1 and 0 not in counts, f"one number of epochs for all: {counts}"
    samples = [
        Sample(id=sample_id, input="-", metadata=dict((metadata or {}).get(sample_id, {})))
        for sample_id in epochs
    ]
    task = Task(
        dataset=MemoryDataset(samples),
        solver=as_given(),
        scorer=_replaying(metrics, epochs),
        epochs=Epochs(counts.pop(), reducer),
    )
    [log] = run_eval(task, log_dir)
    assert log.results is not None
    return {name: m.value for s in log.results.scores for name, m in s.metrics.items()}


def assert_agreeing_epochs_change_nothing(
    metrics: Sequence[Metric],
    scores: Mapping[str, Epoch],
    log_dir: Path,
    *,
    reducer: str = "mean",
    epochs: int = 3,
    metadata: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Each sample's score repeated over `epochs` equal epochs gives the metrics of one
    epoch under `reducer`; returns them."""
    once = {k: [v] for k, v in scores.items()}
    repeated = {k: [v] * epochs for k, v in scores.items()}
    one = run_metrics(metrics, once, log_dir / "once", reducer=reducer, metadata=metadata)
    many = run_metrics(metrics, repeated, log_dir / "many", reducer=reducer, metadata=metadata)
    assert one and many == one, f"{epochs} equal epochs under {reducer}: {many} != {one}"
    return one
