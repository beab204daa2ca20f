"""Inspect logs of our tasks as one tidy table: one row per sample and epoch.

Score values become float columns `<scorer>` or `<scorer>.<key>`; an unscored sample
stays NaN and is counted, so that every study can leave it out and say so. A log and its
eval-retry continuations are one run whose samples count once (`runs`); a sample that
ended in an error is left out, and counted.
"""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from inspect_ai.log import EvalLog, EvalSample

from howtobench.studies.log_files import StudyError, log_files, read_log, runs
from howtobench.studies.runs import Overlap, Run, first_few, grader_model, overlaps, writer_model
from howtobench.vocabulary.metadata import SampleKey, ScoreKey, SelfConsistencyKey, TaskKey, current
from howtobench.vocabulary.words import TASK_PREFIX, TASKS

__all__ = [
    "Samples",
    "WRITING",
    "as_samples",
    "judge_runs",
    "load_samples",
    "per_writing",
    "scopes",
]

# One writing of one model; `epoch` adds the run, `writing` tells texts apart.
WRITING: tuple[str, ...] = ("model", "task", "id")
# Score metadata the studies read, by scorer.
_SCORE_EXTRAS = {
    "tow": (
        ScoreKey.WEIGHTS,
        ScoreKey.BY_JUDGE,
        ScoreKey.CLIPPED,
        ScoreKey.WEIGHTS_FINGERPRINT,
        ScoreKey.PLAN,
        ScoreKey.FORMATTING,
    ),
    "autoplan": (ScoreKey.SHARES,),
}
NO_SCORES = "(no scores)"
# From this many runs on, the logs are read in parallel processes.
_PARALLEL_RUNS = 4
NODES: tuple[str, ...] = ("overall", "content", "format", "impression")


@dataclass(frozen=True)
class Samples:
    """Every sample of a set of logs, with the names of its metric columns.

    `frame` columns: log (the file the sample came from), run (the newest log of its run),
    task, model (the writer), grader, anchor, perturb, id, epoch, genre, input_length,
    output_length, writing (a hash of the text), a float column per metric; objects, None
    where absent: weights, by_judge (panel), clipped (node -> raw value),
    weights_fingerprint, plan (the plan's digest), formatting, reused (not negotiated for
    this writing; all tow), shares (autoplan), perturbation (sample metadata), reuse_weights
    (the run's tow setting), writer_provenance (what made a replayed writer's writings),
    cut_policy (`-T cut`, task version 7 on), unscored (the scorers that left the sample
    unscored), judge_runs (`-T judge_samples=N`: metric -> the N values) and writing_state
    (`SampleKey.WRITING`, task version 7 on). `log_notes` say which logs were merged into a
    run and what the runs lack.
    """

    frame: pd.DataFrame
    metrics: tuple[str, ...]
    log_notes: tuple[str, ...] = ()
    # the samples several runs score with one scorer, read from the logs' headers
    overlaps: tuple[Overlap, ...] = ()

    def require(self, *metrics: str) -> None:
        """Fail clearly when a study needs a metric that no sample has."""
        for metric in metrics:
            if metric not in self.metrics or self.frame[metric].isna().all():
                unscored = self.unscored.get(metric.split(".")[0])
                why = f"; it left {unscored} sample(s) unscored" if unscored else ""
                raise StudyError(
                    f"this study needs the metric '{metric}', which the logs do not have{why} "
                    f"(metrics here: {', '.join(self.metrics) or 'none'})"
                )

    @property
    def unscored(self) -> dict[str, int]:
        """Scorer -> how many samples it left unscored."""
        return dict(Counter(name for names in self.frame["unscored"] for name in names))

    def notes(self) -> list[str]:
        """What every study reports: the runs' notes and the unscored samples left out."""
        notes = list(self.log_notes)
        if self.unscored:
            counts = ", ".join(f"{name}: {n}" for name, n in sorted(self.unscored.items()))
            notes.append(f"left out unscored samples ({counts})")
        return notes


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, bool | int | float) else None


def _is_unscored(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _sample_row(
    sample: EvalSample, base: dict[str, Any], metrics: dict[str, None]
) -> dict[str, Any]:
    """The sample's row; the names of the metric columns it fills are added to `metrics`
    (an ordered set: the columns in the order they first appear)."""
    meta = sample.metadata or {}
    completion = sample.output.completion if sample.output else ""
    row: dict[str, Any] = {
        **base,
        "task": meta.get(SampleKey.TASK) or base["task"],
        "id": str(sample.id),
        "epoch": sample.epoch,
        "genre": meta.get(SampleKey.GENRE) or "others",
        "input_length": meta.get(SampleKey.INPUT_LENGTH),
        "output_length": len(completion),
        "writing": hashlib.sha1(completion.encode("utf-8")).hexdigest()[:12],
        **dict.fromkeys(extra for extras in _SCORE_EXTRAS.values() for extra in extras),
        "perturbation": meta.get(SampleKey.PERTURBATION),
        "unscored": () if sample.scores else (NO_SCORES,),
        "reused": None,
        "judge_runs": None,
        "writing_state": meta.get(SampleKey.WRITING),
    }
    for name, score in (sample.scores or {}).items():
        value = score.value
        runs = judge_runs(name, score.metadata)
        if runs and not _is_unscored(value):
            row["judge_runs"] = {**(row["judge_runs"] or {}), **runs}
        if isinstance(value, dict):
            cells = {f"{name}.{key}": _number(v) for key, v in value.items()}
            row.update(cells)
            metrics.update(dict.fromkeys(cells))
        elif _is_unscored(value):
            row["unscored"] += (name,)
        elif _number(value) is not None:
            row[name] = _number(value)
            metrics[name] = None
        for extra in _SCORE_EXTRAS.get(name, ()):
            row[extra] = (score.metadata or {}).get(extra)
        if name == "tow":
            negotiator = (score.metadata or {}).get(ScoreKey.NEGOTIATOR) or {}
            row["reused"] = negotiator.get(ScoreKey.REUSED)
    return row


def judge_runs(scorer: str, metadata: dict[str, Any] | None) -> dict[str, list[float]]:
    """Metric -> each judge sample's value, from a self-consistent score's metadata
    (dicts for tow, rubric and autoplan, numbers otherwise), padded with NaN to the n
    samples asked for (docs/studies.md, "Worst and best of the SC batch")."""
    record = (metadata or {}).get(ScoreKey.SELF_CONSISTENCY)
    if not isinstance(record, dict) or not record.get(SelfConsistencyKey.VALUES):
        return {}
    runs: dict[str, list[float]] = {}
    for value in record[SelfConsistencyKey.VALUES]:
        found = value if isinstance(value, dict) else {"": value}
        for key, number in found.items():
            metric = f"{scorer}.{key}" if key else scorer
            given = _number(number)
            runs.setdefault(metric, []).append(math.nan if given is None else given)
    n = max(int(record.get(SelfConsistencyKey.N) or 0), *(len(values) for values in runs.values()))
    return {metric: values + [math.nan] * (n - len(values)) for metric, values in runs.items()}


def _ordered(metrics: list[str]) -> list[str]:
    """Each scorer's metrics together (scorers as first seen), the tree's nodes first: a
    completion log, which has no format node, may come first."""
    scorers = list(dict.fromkeys(m.split(".")[0] for m in metrics))

    def rank(metric: str) -> tuple[int, int, int]:
        key = metric.partition(".")[2]
        node = NODES.index(key) if key in NODES else len(NODES)
        return scorers.index(metric.split(".")[0]), node, metrics.index(metric)

    return sorted(metrics, key=rank)


def _reuse_weights(log: EvalLog) -> bool | None:
    """The run's tow `reuse_weights`: the scorer's options, else the task's arguments or
    metadata; None when the log does not say (older logs)."""
    for spec in log.eval.scorers or []:
        if spec.name.split("/")[-1] == "tow" and "reuse_weights" in (spec.options or {}):
            return bool((spec.options or {})["reuse_weights"])
    for source in (log.eval.task_args or {}, log.eval.metadata or {}):
        if isinstance(source.get("reuse_weights"), bool):
            return bool(source["reuse_weights"])
    return None


def load_samples(paths: Sequence[str | Path]) -> Samples:
    """All samples of the logs named (files or folders) as one table, each sample of a
    run once; samples that ended in an error are left out (the run's note counts them)."""
    header_runs = runs(log_files(paths))
    read = _read_runs(header_runs)
    rows = [row for run_rows, _, _ in read for row in run_rows]
    notes = [note for _, run_notes, _ in read for note in run_notes]
    columns = dict.fromkeys(metric for _, _, run_metrics in read for metric in run_metrics)
    if not rows:
        raise StudyError(f"no completed sample in the logs ({'; '.join(notes)})")
    frame = pd.DataFrame(rows)
    metrics = _ordered(list(columns))
    # a float scorer that left every sample unscored still has its (empty) column
    unscored = {name for names in frame["unscored"] for name in names}
    for name in sorted(unscored - set(columns) - {NO_SCORES}):
        if not any(m.startswith(f"{name}.") for m in metrics):
            frame[name] = math.nan
            metrics.append(name)
    for metric in metrics:
        frame[metric] = pd.to_numeric(frame[metric], errors="coerce").astype(float)
    frame["input_length"] = pd.to_numeric(frame["input_length"], errors="coerce")
    return Samples(frame, tuple(metrics), tuple(notes), tuple(overlaps(header_runs)))


RunRows = tuple[list[dict[str, Any]], list[str], dict[str, None]]


def _read_runs(header_runs: list[Run]) -> list[RunRows]:
    """Each run's rows, notes and metric columns, in the runs' order. inspect's reader
    costs about 5 ms per ToW sample in Python, so many runs are read in one process
    per core (forked: the workers need no imports of their own)."""
    workers = min(len(header_runs), os.cpu_count() or 1)
    if workers < 2 or len(header_runs) < _PARALLEL_RUNS:
        return [_run_rows(run) for run in header_runs]
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        return list(pool.map(_run_rows, header_runs))


def _run_rows(header_run: Run) -> RunRows:
    run = Run(tuple((path, read_log(path)) for path, _ in header_run.logs))
    log = run.newest
    base = {
        "run": run.path,
        "task": log.eval.task.removeprefix(TASK_PREFIX),
        "model": writer_model(log),
        "grader": grader_model(log),
        # what the judges compared with (task version 4 names it; `current` reads older)
        "anchor": current(log.eval.metadata).get(TaskKey.ANCHOR),
        "perturb": (log.eval.metadata or {}).get(TaskKey.PERTURB),
        "reuse_weights": _reuse_weights(log),
        "writer_provenance": (log.eval.metadata or {}).get(TaskKey.PROVENANCE),
        "cut_policy": (log.eval.metadata or {}).get(TaskKey.CUT),
    }
    metrics: dict[str, None] = {}
    rows = [
        _sample_row(sample, {**base, "log": path}, metrics)
        for path, sample in run.samples()
        if sample.error is None
    ]
    return rows, run.notes(), metrics


def scopes(tasks: Iterable[str]) -> list[str]:
    """The tasks present in the paper's order (then any other), and `all`."""
    present = list(dict.fromkeys(tasks))
    return [t for t in TASKS if t in present] + [t for t in present if t not in TASKS] + ["all"]


def as_samples(logs: Samples | Sequence[str | Path]) -> Samples:
    """Studies take loaded samples or the paths of logs."""
    return logs if isinstance(logs, Samples) else load_samples(logs)


def per_writing(
    samples: Samples, metrics: Sequence[str], keys: Sequence[str] = WRITING
) -> pd.DataFrame:
    """Metric means over epochs (and over logs that split the scorers) per writing;
    refused, as `howtobench check-logs` fails, where several logs score one writing (it
    would count twice; comparing judges is the `judges` study's job)."""
    for overlap in samples.overlaps:
        if any(m == overlap.scorer or m.startswith(f"{overlap.scorer}.") for m in metrics):
            raise StudyError(overlap.line())
    for metric in metrics:  # the rows too: samples put together by hand carry no overlaps
        scored = samples.frame[samples.frame[metric].notna()]
        twice = scored.duplicated([*WRITING, "epoch"], keep=False)
        if twice.any():
            clash = scored[twice].iloc[0]
            logs = first_few(sorted(set(scored[twice]["log"])))
            raise StudyError(
                f"'{metric}' of model {clash['model']}, sample {clash['id']}, epoch "
                f"{clash['epoch']} is in several logs ({logs}): pass one log per model and "
                "scorer (a copy or an `inspect score` re-scoring of a log is another log; an "
                "eval-retry log is counted with the log it continues), or compare judges "
                "with `howtobench judges`"
            )
    columns = {m: "mean" for m in metrics}
    columns |= {c: "first" for c in ("genre", "input_length") if c not in keys}
    columns["output_length"] = "mean"
    return samples.frame.groupby(list(keys), sort=False).agg(columns).reset_index()
