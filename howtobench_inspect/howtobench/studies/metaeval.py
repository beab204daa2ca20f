"""Meta-evaluation (paper section 5.2, Table 3): how well each metric agrees with humans.

Per metric and scope (each task, and all tasks together), on the writings that have both
a human score (the mean of their raters) and the metric (mean over epochs):
- system level: one point per model, its mean metric against its mean human score over
  those writings;
- sample level: one point per writing.
Each with Pearson, Kendall tau-b and Spearman, two-sided p-values, and a percentile
bootstrap interval from resampling instructions (all writings of an instruction together)
with a fixed seed, recomputing the model means at system level.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from howtobench.studies import bootstrap
from howtobench.studies.correlation import METHODS, MIN_PAIRS, correlate
from howtobench.studies.logs import Samples, as_samples, per_writing, scopes
from howtobench.studies.ratings import check_known, human_scores, rater_agreement, read_ratings
from howtobench.studies.tables import StudyResult

LEVELS: tuple[str, ...] = ("system", "sample")


def _cell(
    part: pd.DataFrame, metric: str, level: str, resamples: int, seed: int
) -> dict[str, float]:
    x, y = part[metric].to_numpy(float), part["human"].to_numpy(float)
    if level == "sample":
        points, observed = len(part), correlate(x, y)
    else:
        means = part.groupby("model", sort=False)[[metric, "human"]].mean()
        points, observed = len(means), correlate(means[metric], means["human"])
    interval = (
        bootstrap.interval(
            x,
            y,
            (part["task"] + "/" + part["id"]).to_numpy(),
            resamples,
            seed,
            models=part["model"].to_numpy() if level == "system" else None,
        )
        if points >= MIN_PAIRS
        else np.full((3, 2), np.nan)
    )
    cell: dict[str, float] = {"n": points}
    for j, method in enumerate(METHODS):
        cell |= {
            method: observed[method],
            f"{method}_p": observed[f"{method}_p"],
            f"{method}_low": interval[j, 0],
            f"{method}_high": interval[j, 1],
        }
    return cell


def metaeval(
    logs: Samples | Sequence[str | Path],
    ratings: str | Path | pd.DataFrame,
    metrics: Sequence[str] | None = None,
    resamples: int = 1000,
    seed: int = 0,
) -> StudyResult:
    """Correlations of every metric (or those named) with the human ratings.

    Tables: `correlations` (long: metric, scope, level, n, and per method the coefficient,
    p-value and interval), `system` and `sample` (Table 3 layout: rows metrics, columns
    scope and method) and `raters` (agreement, see `rater_agreement`).
    """
    samples = as_samples(logs)
    rated = read_ratings(ratings)
    check_known(rated, samples)
    metrics = list(metrics or samples.metrics)
    samples.require(*metrics)
    writings = per_writing(samples, metrics)
    joined = writings.merge(human_scores(rated), on=["id", "model"], how="inner")
    rows = []
    for metric in metrics:
        for scope in scopes(joined["task"]):
            part = joined if scope == "all" else joined[joined["task"] == scope]
            part = part.dropna(subset=[metric])
            for level in LEVELS:
                cell = _cell(part, metric, level, resamples, seed)
                rows.append({"metric": metric, "scope": scope, "level": level, **cell})
    long = pd.DataFrame(rows)
    long["n"] = long["n"].astype(int)
    tables = {"correlations": long}
    for level in LEVELS:
        wide = long[long["level"] == level].pivot(
            index="metric", columns="scope", values=list(METHODS)
        )
        order = [(m, s) for s in scopes(joined["task"]) for m in METHODS]
        wide = wide[order].reindex(metrics)
        wide.columns = [f"{scope} {method}" for method, scope in wide.columns]
        tables[level] = wide
    tables["raters"] = rater_agreement(rated)
    notes = samples.notes()
    unrated = len(writings) - len(joined)
    if unrated:
        notes.append(f"left out {unrated} writing(s) of the logs that have no human rating")
    if joined["model"].nunique() < MIN_PAIRS:
        notes.append(
            f"system level needs at least {MIN_PAIRS} models; the rated writings come from "
            f"{joined['model'].nunique()}"
        )
    return StudyResult("metaeval", tables, notes=notes)
