"""Robustness to disturbances (paper section 6.2, Table 7): score change per metric.

Each perturbed sample is paired with the clean sample of the same writer, task, sample
id and epoch (the paper disturbs writings of 10 models); a cell is the mean change over
the pairs of all writers. The disturbances only spoil a writing, so a metric whose mean
rises under one is flagged: it rewards the disturbance.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from howtobench.studies.log_files import StudyError
from howtobench.studies.logs import WRITING, Samples, as_samples, per_writing
from howtobench.studies.runs import first_few
from howtobench.studies.tables import StudyResult

__all__ = ["robustness"]

MATCH: list[str] = [*WRITING, "epoch"]  # writer, task, sample id, epoch
Logs = Samples | str | Path | Sequence[str | Path]


def _named(perturb: object) -> bool:
    """A disturbance is named (a missing one may read back as None or NaN)."""
    return isinstance(perturb, str) and bool(perturb.strip())


def _clean_runs(clean: Logs) -> Samples:
    """The clean runs, none of them perturbed."""
    samples = as_samples([clean] if isinstance(clean, str | Path) else clean)
    for run, perturb in samples.frame.groupby("run", sort=False)["perturb"].first().items():
        if _named(perturb):
            raise StudyError(f"{run}: the clean log is itself perturbed (perturb={perturb})")
    return samples


def _pairs(
    log: str, rows: pd.DataFrame, base: pd.DataFrame, metrics: list[str], notes: list[str]
) -> pd.DataFrame:
    """The perturbed run's samples with their clean scores (columns `<metric> clean`); a
    run whose writer has no clean run is matched by task, id and epoch when the clean side
    is one writer's (what this study did before it pooled writers), with a note."""
    writer = rows["model"].iloc[0]
    clean_writers = list(dict.fromkeys(base["model"]))
    if writer not in clean_writers and len(clean_writers) == 1:
        notes.append(
            f"{log} is by {writer}, the clean log by {clean_writers[0]}: matched by task, "
            "sample id and epoch"
        )
        base = base.assign(model=writer)
    matched = rows.merge(base, on=MATCH, suffixes=("", " clean"))
    if matched.empty:
        raise StudyError(
            f"{log}: no sample (writer {writer}, task, sample id and epoch) in common with the "
            f"clean logs (their writers: {first_few(sorted(clean_writers))})"
        )
    if len(matched) < len(rows):
        notes.append(
            f"{log}: {len(rows) - len(matched)} of its {len(rows)} samples have no clean "
            "counterpart and are left out"
        )
    return matched


def paired_changes(
    clean: Samples, perturbed: Samples, metrics: list[str], notes: list[str]
) -> pd.DataFrame:
    """The score change of every perturbed sample paired with its clean one, one row per
    pair and metric: writer, clean, perturbed, disturbance, metric, change (perturbed
    minus clean). The notes get the perturbed samples left unpaired (`_pairs`)."""
    try:  # one row per writer, task, id and epoch: a writing in two clean runs is refused
        base = per_writing(clean, metrics, keys=MATCH)[[*MATCH, *metrics]]
    except StudyError as err:
        raise StudyError(f"clean logs: {err}; give one clean run per writer and task") from err
    parts = []
    for log, rows in perturbed.frame.groupby("run", sort=False):
        disturbance = rows["perturb"].iloc[0]
        if not _named(disturbance):
            raise StudyError(
                f"{log}: no 'perturb' in its task metadata, so it is not a perturbed run"
            )
        matched = _pairs(str(log), rows, base, metrics, notes)
        for metric in metrics:
            pairs = matched[["model", f"{metric} clean", metric]].dropna()
            pairs = pairs.set_axis(["writer", "clean", "perturbed"], axis=1)
            parts.append(pairs.assign(disturbance=disturbance, metric=metric))
    long = pd.concat(parts, ignore_index=True)
    long["change"] = long["perturbed"] - long["clean"]
    return long


def _without(samples: Samples, clean: Samples) -> Samples:
    """The perturbed logs, less the clean runs when a folder holds both."""
    runs = {Path(run).resolve() for run in clean.frame["run"].unique()}
    keep = samples.frame["run"].map(lambda log: Path(log).resolve() not in runs)
    if not keep.any():
        raise StudyError("no perturbed log besides the clean ones")
    return Samples(samples.frame[keep], samples.metrics, samples.log_notes)


def robustness(clean: Logs, perturbed: Samples | Sequence[str | Path]) -> StudyResult:
    """Tables `changes` (Table 7 layout: rows metrics; columns the clean mean, then the
    mean change per disturbance), `detail` (per metric and disturbance: pairs, writers,
    means, share of samples raised) and `raised` (the flagged cells). `clean` is one clean
    log or folder, or several (one run per writer and task)."""
    clean_samples = _clean_runs(clean)
    perturbed_samples = _without(as_samples(perturbed), clean_samples)
    metrics = [m for m in clean_samples.metrics if m in perturbed_samples.metrics]
    if not metrics:
        raise StudyError(
            "the clean and perturbed logs share no metric (clean: "
            f"{', '.join(clean_samples.metrics)}; perturbed: {', '.join(perturbed_samples.metrics)})"
        )
    matching: list[str] = []
    long = paired_changes(clean_samples, perturbed_samples, metrics, matching)
    grouped = long.groupby(["metric", "disturbance"], sort=False)
    detail = grouped.agg(
        pairs=("change", "size"),
        writers=("writer", "nunique"),
        clean_mean=("clean", "mean"),
        perturbed_mean=("perturbed", "mean"),
        mean_change=("change", "mean"),
        raised_share=("change", lambda change: float((change > 0).mean())),
    ).reset_index()
    detail["raised"] = detail["mean_change"] > 0
    disturbances = list(dict.fromkeys(long["disturbance"]))
    changes = detail.pivot(index="metric", columns="disturbance", values="mean_change")
    changes = changes.reindex(index=metrics, columns=disturbances)
    changes.insert(0, "clean", clean_samples.frame[metrics].mean().reindex(metrics))
    changes.columns.name = None
    raised = detail[detail["raised"]].drop(columns="raised").reset_index(drop=True)
    notes = list(dict.fromkeys(clean_samples.notes() + perturbed_samples.notes()))
    notes += matching
    notes += [
        f"RAISED: {r.metric} rises by {r.mean_change:+.3f} under {r.disturbance}"
        for r in raised.itertuples()
    ]
    return StudyResult(
        "robustness", {"changes": changes, "detail": detail, "raised": raised}, notes=notes
    )
