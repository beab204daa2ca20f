"""Robustness to disturbances (paper section 6.2, Table 7): score change per metric.

A perturbed log judges disturbed versions of the clean log's writings; its task
metadata `perturb` names the disturbance (drop, repeat, transfer:letter, inject, ...).
Samples are matched by sample id and epoch; a cell is the mean over matched samples
(both scored) of perturbed minus clean score, pooled over the perturbed logs of the same
disturbance. The disturbances only spoil a writing, so a metric whose mean rises under
one is flagged: it rewards the disturbance.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from howtobench.studies.logs import Samples, StudyError, as_samples
from howtobench.studies.tables import StudyResult

MATCH: list[str] = ["id", "epoch"]


def _other_writers(clean: Samples, perturbed: Samples) -> list[str]:
    """A note per perturbed log whose writer differs from the clean log's: its samples are
    matched by id all the same, which is right only if it disturbs the same writings."""
    writer = clean.frame["model"].iloc[0]
    models = perturbed.frame.groupby("run", sort=False)["model"].first()
    return [
        f"{log} is by {model}, the clean log by {writer}: matched by sample id and epoch"
        for log, model in models.items()
        if model != writer
    ]


def _named(perturb: object) -> bool:
    """A disturbance is named (a missing one may read back as None or NaN)."""
    return isinstance(perturb, str) and bool(perturb.strip())


def _clean_log(clean: Samples | str | Path) -> Samples:
    samples = clean if isinstance(clean, Samples) else as_samples([clean])
    logs = samples.frame["run"].unique()
    if len(logs) != 1:
        raise StudyError(
            f"give exactly one clean run (a log, with its eval-retry logs if any), not {len(logs)}"
        )
    perturb = samples.frame["perturb"].iloc[0]
    if _named(perturb):
        raise StudyError(f"{logs[0]}: the clean log is itself perturbed (perturb={perturb})")
    return samples


def _changes(clean: Samples, perturbed: Samples, metrics: list[str]) -> pd.DataFrame:
    """Long table: disturbance, metric, clean, perturbed, change (one row per matched pair)."""
    base = clean.frame[[*MATCH, *metrics]]
    parts = []
    for log, rows in perturbed.frame.groupby("run", sort=False):
        disturbance = rows["perturb"].iloc[0]
        if not _named(disturbance):
            raise StudyError(
                f"{log}: no 'perturb' in its task metadata, so it is not a perturbed run"
            )
        matched = rows.merge(base, on=MATCH, suffixes=("", " clean"))
        if matched.empty:
            raise StudyError(
                f"{log}: no sample (id and epoch) in common with the clean log "
                f"{clean.frame['log'].iloc[0]}"
            )
        for metric in metrics:
            pairs = matched[[metric, f"{metric} clean"]].dropna()
            parts.append(
                pd.DataFrame(
                    {
                        "disturbance": disturbance,
                        "metric": metric,
                        "clean": pairs[f"{metric} clean"],
                        "perturbed": pairs[metric],
                    }
                )
            )
    long = pd.concat(parts, ignore_index=True)
    long["change"] = long["perturbed"] - long["clean"]
    return long


def _without(samples: Samples, clean_log: str) -> Samples:
    """The perturbed logs, less the clean run when a folder holds both."""
    clean = Path(clean_log).resolve()
    keep = samples.frame["run"].map(lambda log: Path(log).resolve() != clean)
    if not keep.any():
        raise StudyError("no perturbed log besides the clean one")
    return Samples(samples.frame[keep], samples.metrics, samples.log_notes)


def robustness(
    clean: Samples | str | Path, perturbed: Samples | Sequence[str | Path]
) -> StudyResult:
    """Tables `changes` (Table 7 layout: rows metrics; columns the clean mean, then the
    mean change per disturbance), `detail` (per metric and disturbance: pairs, means,
    share of samples raised) and `raised` (the flagged cells)."""
    clean_samples = _clean_log(clean)
    perturbed_samples = _without(as_samples(perturbed), clean_samples.frame["run"].iloc[0])
    metrics = [m for m in clean_samples.metrics if m in perturbed_samples.metrics]
    if not metrics:
        raise StudyError(
            "the clean and perturbed logs share no metric (clean: "
            f"{', '.join(clean_samples.metrics)}; perturbed: {', '.join(perturbed_samples.metrics)})"
        )
    long = _changes(clean_samples, perturbed_samples, metrics)
    grouped = long.groupby(["metric", "disturbance"], sort=False)
    detail = grouped.agg(
        pairs=("change", "size"),
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
    notes += _other_writers(clean_samples, perturbed_samples)
    notes += [
        f"RAISED: {r.metric} rises by {r.mean_change:+.3f} under {r.disturbance}"
        for r in raised.itertuples()
    ]
    return StudyResult(
        "robustness", {"changes": changes, "detail": detail, "raised": raised}, notes=notes
    )
