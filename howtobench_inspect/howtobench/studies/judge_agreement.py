"""Agreement between judges (paper appendix B.1, figure 4): a Pearson matrix and heatmap.

Scores are averaged over epochs per writing, and each pair of judges is correlated over
the writings both scored (at least three), as the paper concatenates the writings of all
models; with ratings, `human` is one more judge.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from howtobench.studies.correlation import MIN_PAIRS
from howtobench.studies.log_files import StudyError
from howtobench.studies.logs import WRITING, Samples, as_samples
from howtobench.studies.plots import heatmap
from howtobench.studies.ratings import check_known, human_scores, read_ratings
from howtobench.studies.runs import first_few
from howtobench.studies.tables import StudyResult

__all__ = ["judges"]

HUMAN = "human"


def judge_scores(samples: Samples, metric: str = "tow.overall") -> pd.DataFrame:
    """Long table: judge, log, model, task, id, epoch, score."""
    parts = []
    for log, rows in samples.frame.groupby("run", sort=False):
        panel = rows[rows["by_judge"].notna()]
        if len(panel):
            pairs = panel["by_judge"].map(lambda judges: list(judges.items())).explode().dropna()
            long = panel.loc[pairs.index, [*WRITING, "epoch"]]  # a row per judge of a writing
            long["judge"] = [judge for judge, _ in pairs]
            long["score"] = [float(value) for _, value in pairs]
        else:
            if metric not in rows or rows[metric].isna().all():
                raise StudyError(
                    f"{log}: no judge panel (by_judge) and no '{metric}' score to compare"
                )
            long = rows[[*WRITING, "epoch"]].assign(judge=rows["grader"], score=rows[metric])
        parts.append(long.assign(log=log).dropna(subset=["score"]))
    scores = pd.concat(parts, ignore_index=True)
    twice = scores.duplicated(["judge", *WRITING, "epoch"], keep=False)
    if twice.any():
        clash = scores[twice]
        raise StudyError(
            f"judge {clash['judge'].iloc[0]} scored the same writings in several logs "
            f"({first_few(sorted(set(clash['log'])))}): pass each judge's run once"
        )
    return scores


def judges(
    logs: Samples | Sequence[str | Path],
    ratings: str | Path | pd.DataFrame | None = None,
    metric: str = "tow.overall",
) -> StudyResult:
    """Tables `pearson` (judge × judge) and `overlap` (writings each pair shares); figure
    `heatmap`."""
    samples = as_samples(logs)
    long = judge_scores(samples, metric)
    wide = long.pivot_table(index=list(WRITING), columns="judge", values="score", aggfunc="mean")
    wide.columns.name = None
    if ratings is not None:
        rated = read_ratings(ratings)
        check_known(rated, samples)
        human = human_scores(rated).set_index(["id", "model"])["human"]
        keys = pd.MultiIndex.from_arrays([wide.index.get_level_values(k) for k in ("id", "model")])
        wide[HUMAN] = human.reindex(keys).to_numpy()
    if wide.shape[1] < 2:
        raise StudyError(
            f"only one judge ({', '.join(wide.columns)}): give logs of a judge panel, logs of "
            "the same writings judged by different grader models, or --ratings"
        )
    present = wide.notna().astype(int)
    overlap = present.T @ present
    if (overlap.to_numpy()[~np.eye(len(overlap), dtype=bool)] < MIN_PAIRS).all():
        raise StudyError(
            f"no two judges share {MIN_PAIRS} or more writings "
            f"(judges: {', '.join(wide.columns)}): the logs must judge the same writings"
        )
    pearson = wide.corr(method="pearson", min_periods=MIN_PAIRS)
    pearson.index.name = overlap.index.name = "judge"
    # what is correlated: each judge's ToW overall in a log with a panel, else the metric
    panel = samples.frame.groupby("run", sort=False)["by_judge"].agg(lambda j: j.notna().any())
    compared = " and ".join(dict.fromkeys("tow.overall" if found else metric for found in panel))
    title = f"Pearson r between judges of {compared}, per writing"
    if ratings is not None:
        title += f"\n{HUMAN}: the mean of a writing's human ratings"
    return StudyResult(
        "judges",
        {"pearson": pearson, "overlap": overlap},
        {"heatmap": heatmap(pearson, title, overlap)},
        samples.notes(),
    )
