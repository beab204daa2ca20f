"""Meta-evaluation (paper section 5.2, Table 3): how well each metric agrees with humans.

On the writings that have both a human score and the metric, at system level (model
means) and sample level, per task and over all; with self-consistency also Table 3's
"worst" and "best of the SC batch" rows (docs/studies.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from howtobench.commandline.constants import DEFAULT_RESAMPLES
from howtobench.studies import bootstrap
from howtobench.studies.correlation import METHODS, MIN_PAIRS, correlate
from howtobench.studies.logs import Samples, as_samples, per_writing, scopes
from howtobench.studies.ratings import (
    check_known,
    human_scores,
    per_rater_agreement,
    rater_agreement,
    read_ratings,
)
from howtobench.studies.tables import StudyResult
from howtobench.studies.weighting import check_one_weighting

__all__ = ["metaeval"]

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
    interval = bootstrap.interval(
        x,
        y,
        (part["task"] + "/" + part["id"]).to_numpy(),
        resamples if points >= MIN_PAIRS else 0,  # too few points: no interval
        seed,
        models=part["model"].to_numpy() if level == "system" else None,
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


def _judge_runs(samples: Samples, metric: str) -> Samples | None:
    """The samples with one metric column per judge sample of `metric` (`<metric> [k]`,
    NaN where a writing lacks it; see `logs.judge_runs`), or None if it was not sampled."""
    if "judge_runs" not in samples.frame:
        return None
    runs = samples.frame["judge_runs"].map(lambda found: (found or {}).get(metric) or [])
    n = max(len(values) for values in runs)
    if n < 2:
        return None
    columns = {
        f"{metric} [{k + 1}]": [values[k] if k < len(values) else np.nan for values in runs]
        for k in range(n)
    }
    frame = samples.frame.assign(**columns)
    return Samples(frame, tuple(columns), samples.log_notes)


def _extremes(
    runs: Samples, metric: str, humans: pd.DataFrame, scope_names: list[str], seed: int
) -> list[dict[str, object]]:
    """Rows `<metric> [worst of N]` and `[best of N]`: per scope, level and method the
    lowest and highest coefficient of the judge samples correlated one at a time."""
    joined = per_writing(runs, runs.metrics).merge(humans, on=["id", "model"], how="inner")
    rows = []
    for scope in scope_names:
        part = joined if scope == "all" else joined[joined["task"] == scope]
        for level in LEVELS:
            cells = [_cell(part.dropna(subset=[run]), run, level, 0, seed) for run in runs.metrics]
            for extreme, pick in (("worst", np.nanargmin), ("best", np.nanargmax)):
                row: dict[str, object] = {
                    "metric": f"{metric} [{extreme} of {len(cells)}]",
                    "scope": scope,
                    "level": level,
                    "n": min(int(cell["n"]) for cell in cells),
                }
                for method in METHODS:
                    found = np.array([cell[method] for cell in cells], dtype=float)
                    chosen = cells[int(pick(found))] if not np.isnan(found).all() else cells[0]
                    row |= {
                        key: chosen[key]
                        for key in (method, f"{method}_p", f"{method}_low", f"{method}_high")
                    }
                rows.append(row)
    return rows


def metaeval(
    logs: Samples | Sequence[str | Path],
    ratings: str | Path | pd.DataFrame,
    metrics: Sequence[str] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> StudyResult:
    """Correlations of every metric (or those named) with the human ratings: tables
    `correlations` (long), `system` and `sample` (Table 3 layout), `raters` and, when the
    ratings name their raters, `per_rater`."""
    samples = as_samples(logs)
    rated = read_ratings(ratings)
    check_known(rated, samples)
    metrics = list(metrics or samples.metrics)
    samples.require(*metrics)
    if any(metric.startswith("tow.") for metric in metrics):
        check_one_weighting(samples.frame)
    writings = per_writing(samples, metrics)
    humans = human_scores(rated)
    joined = writings.merge(humans, on=["id", "model"], how="inner")
    rows: list[dict[str, object]] = []
    names: list[str] = []  # the rows of the tables: each metric, then its SC extremes
    sampled: list[str] = []
    for metric in metrics:
        for scope in scopes(joined["task"]):
            part = joined if scope == "all" else joined[joined["task"] == scope]
            part = part.dropna(subset=[metric])
            for level in LEVELS:
                cell = _cell(part, metric, level, resamples, seed)
                rows.append({"metric": metric, "scope": scope, "level": level, **cell})
        names.append(metric)
        runs = _judge_runs(samples, metric)
        if runs is not None:
            extra = _extremes(runs, metric, humans, scopes(joined["task"]), seed)
            rows += extra
            names += list(dict.fromkeys(str(row["metric"]) for row in extra))
            sampled.append(f"{metric} ({len(runs.metrics)})")
    long = pd.DataFrame(rows)
    long["n"] = long["n"].astype(int)
    tables = {"correlations": long}
    for level in LEVELS:
        wide = long[long["level"] == level].pivot(
            index="metric", columns="scope", values=list(METHODS)
        )
        order = [(m, s) for s in scopes(joined["task"]) for m in METHODS]
        wide = wide[order].reindex(names)
        wide.columns = [f"{scope} {method}" for method, scope in wide.columns]
        tables[level] = wide
    tables["raters"] = rater_agreement(rated)
    if (rated["rater"] != "").any():
        tables["per_rater"] = per_rater_agreement(rated)
    notes = samples.notes()
    if sampled:
        notes.append(
            f"judged with self-consistency: {', '.join(sampled)} judge samples; the rows "
            "[worst of N] and [best of N] give per cell the lowest and highest correlation "
            "of the judge samples taken one at a time (the k-th usable sample of each "
            "writing), without intervals"
        )
    unrated = len(writings) - len(joined)
    if unrated:
        notes.append(f"left out {unrated} writing(s) of the logs that have no human rating")
    if joined["model"].nunique() < MIN_PAIRS:
        notes.append(
            f"system level needs at least {MIN_PAIRS} models; the rated writings come from "
            f"{joined['model'].nunique()}"
        )
    return StudyResult("metaeval", tables, notes=notes)
