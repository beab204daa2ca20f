"""The leaderboard (paper Table 4), per-node means, and the negotiated weights per genre
(figures 3 and 6).

A model's cell is the mean of the metric over its writings in the row (task, canonical
genre, or All), each writing first averaged over epochs, as inspect's epoch reducer
does. Columns are the models by their All mean, best first, after `average` (the mean
of the model cells, the paper's AVG).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from howtobench.genres import CANONICAL_GENRES
from howtobench.studies.logs import Samples, as_samples, per_writing, scopes
from howtobench.studies.plots import weight_boxes
from howtobench.studies.tables import StudyResult

ALL = "All"


def _rows(writings: pd.DataFrame) -> list[tuple[str, pd.Series]]:
    """(label, mask): the tasks, then the genres (canonical order, then any other), then All."""
    tasks = scopes(writings["task"])[:-1]
    present = set(writings["genre"])
    genres = [g for g in CANONICAL_GENRES if g in present] + sorted(present - set(CANONICAL_GENRES))
    return (
        [(t, writings["task"] == t) for t in tasks]
        + [(g, writings["genre"] == g) for g in genres]
        + [(ALL, pd.Series(True, index=writings.index))]
    )


def _board(writings: pd.DataFrame, metric: str, how: str) -> pd.DataFrame:
    rows = {
        label: writings[mask].groupby("model", sort=False)[metric].agg(how)
        for label, mask in _rows(writings)
    }
    board = pd.DataFrame(rows).T
    board.index.name = "row"
    return board


def _weight_figures(samples: Samples) -> dict[str, Figure]:
    """One box plot per genre of each leaf's weight over the genre's instructions (the
    weights of an instruction averaged over the models and epochs that repeat them)."""
    rows = samples.frame[samples.frame["weights"].notna()]
    if rows.empty:
        return {}
    weights = pd.DataFrame(list(rows["weights"]), index=rows.index).assign(
        task=rows["task"], id=rows["id"], genre=rows["genre"]
    )
    leaves = [c for c in weights.columns if c not in ("task", "id", "genre")]
    per_instruction = weights.groupby(["task", "id", "genre"], sort=False)[leaves].mean()
    figures = {}
    for genre, part in per_instruction.groupby(level="genre", sort=True):
        title = f"{genre}: negotiated weights ({len(part)} instructions)"
        name = re.sub(r"[^\w.-]+", "_", str(genre))
        figures[f"weights_{name}"] = weight_boxes(part[leaves].dropna(axis=1, how="all"), title)
    return figures


def report(logs: Samples | Sequence[str | Path], metric: str = "tow.overall") -> StudyResult:
    """Tables `leaderboard` (Table 4 layout), `counts` (scored writings per cell) and
    `nodes` (mean of every key of the metric's scorer per task and model); figures
    `weights_<genre>`."""
    samples = as_samples(logs)
    samples.require(metric)
    scorer = metric.split(".")[0]
    keys = [m for m in samples.metrics if m.startswith(f"{scorer}.")] or [metric]
    writings = per_writing(samples, keys).dropna(subset=[metric])
    board = _board(writings, metric, "mean")
    models = board.loc[ALL].sort_values(ascending=False, kind="stable").index.tolist()
    board = board[models]
    board.insert(0, "average", board.mean(axis=1))
    counts = _board(writings, metric, "count").reindex(columns=models).fillna(0).astype(int)
    nodes = []
    for scope in scopes(writings["task"]):
        part = writings if scope == "all" else writings[writings["task"] == scope]
        means = part.groupby("model")[keys].mean().T.reindex(columns=models)
        nodes.append(means.dropna(how="all").assign(task=scope).rename_axis("score").reset_index())
    node_table = pd.concat(nodes, ignore_index=True).set_index(["task", "score"])
    node_table.columns.name = None
    notes = samples.unscored_note()
    figures = _weight_figures(samples)
    if not figures:
        notes.append("no ToW weights in the logs: no weight plots")
    return StudyResult(
        "report", {"leaderboard": board, "counts": counts, "nodes": node_table}, figures, notes
    )
