"""Length against score (paper section 6.1, Table 6 and figure 5).

Per task: Pearson between input and output length, and of each with each score, with
p-values (** p < 0.05, * p < 0.1, as in the paper) and the least-squares line. A point
is one distinct writing, its score the mean over the epochs that judged it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from howtobench.commandline.constants import DEFAULT_SCORES
from howtobench.studies.correlation import MIN_PAIRS
from howtobench.studies.logs import WRITING, Samples, as_samples, per_writing, scopes
from howtobench.studies.plots import scatter_grid
from howtobench.studies.tables import StudyResult

__all__ = ["lengths"]

LENGTHS: tuple[str, str] = ("input_length", "output_length")
LENGTH_LABELS: dict[str, str] = {  # a score's axis keeps its own name, e.g. tow.overall
    "input_length": "input length (characters of instruction and grounding)",
    "output_length": "output length (characters of the writing)",
}


def stars(p: float) -> str:
    return "**" if p < 0.05 else "*" if p < 0.1 else ""


def _line(points: pd.DataFrame, x: str, y: str) -> dict[str, float]:
    data = points[[x, y]].dropna()
    fit = {"pearson": np.nan, "pearson_p": np.nan, "slope": np.nan, "intercept": np.nan}
    if len(data) >= MIN_PAIRS and data[x].nunique() > 1 and data[y].nunique() > 1:
        line = stats.linregress(data[x], data[y])
        fit = {
            "pearson": float(line.rvalue),
            "pearson_p": float(line.pvalue),
            "slope": float(line.slope),
            "intercept": float(line.intercept),
        }
    return {"n": len(data), **fit}


def lengths(
    logs: Samples | Sequence[str | Path], scores: Sequence[str] = DEFAULT_SCORES
) -> StudyResult:
    """Tables `correlations` (long: task, x, y, n, pearson, p, slope, intercept) and `table`
    (Table 6 layout: rows tasks, cells r with stars); one figure per task."""
    samples = as_samples(logs)
    scores = list(scores)
    samples.require(*scores)
    points = per_writing(samples, scores, keys=[*WRITING, "writing"])
    pairs = [LENGTHS] + [(x, y) for x in LENGTHS for y in scores]
    rows, figures = [], {}
    for task in scopes(points["task"])[:-1]:  # per task only: lengths differ by task
        part = points[points["task"] == task]
        fits = [{"task": task, "x": x, "y": y, **_line(part, x, y)} for x, y in pairs]
        rows += fits
        title = f"{task}: length against score, one point per writing ({len(part)} writings)"
        figures[task] = scatter_grid(part, pd.DataFrame(fits), "model", title, LENGTH_LABELS)
    long = pd.DataFrame(rows)
    long["n"] = long["n"].astype(int)
    labels = long["x"].str.removesuffix("_length") + " ~ " + long["y"].str.removesuffix("_length")
    cells = [
        "" if np.isnan(r) else f"{r:.2f}{stars(p)}"
        for r, p in zip(long["pearson"], long["pearson_p"], strict=True)
    ]
    layout = pd.DataFrame({"task": long["task"], "pair": labels, "cell": cells}).pivot(
        index="task", columns="pair", values="cell"
    )
    layout = layout.reindex(
        index=list(dict.fromkeys(long["task"])), columns=list(dict.fromkeys(labels))
    )
    layout.columns.name = None
    return StudyResult("lengths", {"correlations": long, "table": layout}, figures, samples.notes())
