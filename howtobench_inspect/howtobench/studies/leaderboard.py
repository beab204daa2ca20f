"""Intervals and honest ranks for the leaderboard: a paired bootstrap over instructions.

The paper's Table 4 gives means only, so two writers 0.05 apart look ranked
(docs/studies.md, "Intervals and ranks in the report"). A cell of fewer than
`MIN_INSTRUCTIONS` instructions gets no interval: with so few, the percentile interval is
too narrow (it lacks the t quantile and the factor sqrt(n/(n-1))).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from howtobench.studies.bootstrap import chunks, draws, stratified_draws
from howtobench.studies.logs import Samples, scopes
from howtobench.studies.provenance import provenance
from howtobench.studies.writings import writing_states
from howtobench.vocabulary.genres import CANONICAL_GENRES

__all__ = [
    "ALL",
    "Board",
    "FIELDS",
    "MIN_INSTRUCTIONS",
    "Matrix",
    "Panel",
    "board",
    "no_interval",
    "ranks",
    "resample",
]

ALL = "all"
LEVEL = 0.95
MIN_INSTRUCTIONS = 10
PANEL_METRIC = "tow.overall"  # the one score `by_judge` records per judge
FIELDS = (
    "task",
    "genre",
    "writer",
    "n",
    "instructions",
    "mean",
    "low",
    "high",
    "rank",
    "rank_low",
    "rank_high",
    "p_above_next",
)


@dataclass(frozen=True)
class Panel:
    """Each judge's deviation from a writing's score (writer × instruction × judge; 0
    where the judge gave none) and where a judge scored the writing."""

    judges: tuple[str, ...]
    deviations: np.ndarray
    judged: np.ndarray


@dataclass(frozen=True)
class Matrix:
    """One score per writer (rows) and instruction (columns), NaN where a writer has
    none; each instruction's task (`strata`) and genre; the panel's deviations, if any."""

    writers: tuple[str, ...]
    values: np.ndarray
    strata: np.ndarray
    genres: np.ndarray
    panel: Panel | None = None

    def part(self, writers: Any = slice(None), instructions: Any = slice(None)) -> Matrix:
        """The writers and the instructions chosen (boolean masks; all by default)."""
        panel = self.panel and Panel(
            self.panel.judges,
            self.panel.deviations[writers][:, instructions],
            self.panel.judged[writers][:, instructions],
        )
        return Matrix(
            tuple(np.array(self.writers, dtype=object)[writers]),
            self.values[writers][:, instructions],
            self.strata[instructions],
            self.genres[instructions],
            panel,
        )


@dataclass(frozen=True)
class Board:
    """Every cell's rows (`FIELDS`), how they were computed, and where the scores came from."""

    cells: pd.DataFrame
    method: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=dict)
    # every writer's writings by state, per task (`writings.writing_states`)
    writings: pd.DataFrame = field(default_factory=pd.DataFrame)


def _judge_shift(rng: np.random.Generator, panel: Panel, resamples: int) -> np.ndarray:
    """(resamples × writers × instructions) how far each writing's score moves when the
    resample's judges (drawn with replacement, the same for every writing) judge it."""
    drawn = draws(rng, len(panel.judges), resamples).astype(float)
    moved = np.tensordot(drawn, panel.deviations * panel.judged, axes=([1], [2]))
    weight = np.tensordot(drawn, panel.judged.astype(float), axes=([1], [2]))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weight > 0, moved / weight, 0.0)


def resample(matrix: Matrix, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """(resamples × writers) each writer's mean over the resampled instructions: the
    same draw (stratified by task) for every writer, and the same judges, for a panel.
    NaN for a writer none of whose instructions was drawn."""
    present = np.isfinite(matrix.values)
    filled = np.where(present, matrix.values, 0.0)
    means = []
    for size in chunks(resamples):
        drawn = stratified_draws(rng, matrix.strata, size).astype(float)
        sums = drawn @ filled.T
        if matrix.panel is not None:
            shift = _judge_shift(rng, matrix.panel, size) * present
            sums += np.einsum("bi,bwi->bw", drawn, shift)
        with np.errstate(invalid="ignore", divide="ignore"):
            means.append(sums / (drawn @ present.T))
    return np.concatenate(means) if means else np.empty((0, len(matrix.writers)))


def ranks(means: np.ndarray) -> np.ndarray:
    """Per row: 1 + the number of writers with a higher mean (NaN stays NaN)."""
    higher = (means[:, None, :] > means[:, :, None]).sum(axis=2)
    return np.where(np.isfinite(means), higher + 1.0, np.nan)


def _cell(matrix: Matrix, resamples: int, rng: np.random.Generator) -> pd.DataFrame:
    """The rows of one cell, best first."""
    present = np.isfinite(matrix.values)
    n = present.sum(axis=1)
    keep = n > 0
    cell = matrix.part(writers=keep)
    n = n[keep]
    with np.errstate(invalid="ignore"):
        mean = np.nanmean(cell.values, axis=1)
    instructions = cell.values.shape[1]
    table = pd.DataFrame(
        {
            "writer": cell.writers,
            "n": n,
            "instructions": instructions,
            "mean": mean,
            "rank": ranks(mean[None])[0],
        }
    ).reindex(columns=list(FIELDS[2:]))  # the interval, rank range and P(>next): NaN so far
    sure = n >= MIN_INSTRUCTIONS
    if resamples > 0 and sure.any():  # a writer's n never exceeds the cell's instructions
        means = resample(cell, resamples, rng)
        tail = (1 - LEVEL) / 2 * 100
        with np.errstate(invalid="ignore"):
            low, high = np.nanpercentile(means[:, sure], [tail, 100 - tail], axis=0)
            by_rank = ranks(means)[:, sure]
            rank_low, rank_high = np.nanpercentile(
                by_rank, [tail, 100 - tail], axis=0, method="inverted_cdf"
            )
        table.loc[sure, ["low", "high", "rank_low", "rank_high"]] = np.c_[
            low, high, rank_low, rank_high
        ]
        order = np.lexsort((np.array(cell.writers), -mean))
        for upper, lower in zip(order[:-1], order[1:], strict=True):
            if sure[upper] and sure[lower]:
                both = np.isfinite(means[:, upper]) & np.isfinite(means[:, lower])
                table.loc[upper, "p_above_next"] = float(
                    np.mean(means[both, upper] > means[both, lower])
                )
    return table.sort_values(["rank", "writer"], kind="stable", ignore_index=True)


def _panel(samples: Samples, metric: str, index: pd.MultiIndex, writers: list[str]) -> Panel | None:
    """The panel's deviations per writing, averaged over epochs, or None without a panel."""
    if metric != PANEL_METRIC:
        return None
    frame = samples.frame
    rows = frame[frame["by_judge"].notna() & frame[metric].notna()]
    if rows.empty:
        return None
    judges = pd.DataFrame(list(rows["by_judge"]), index=rows.index, dtype=float)
    names = tuple(sorted(judges.columns))
    writing = [rows["model"], rows["task"], rows["id"]]
    per_writing = judges[list(names)].groupby(writing, sort=False).mean()
    deviations = per_writing.sub(per_writing.mean(axis=1), axis=0)
    cube = np.stack(
        [
            deviations[judge].unstack(["task", "id"]).reindex(index=writers, columns=index)
            for judge in names
        ],
        axis=2,
    )
    judged = np.isfinite(cube)
    return Panel(names, np.where(judged, cube, 0.0), judged)


def matrix(writings: pd.DataFrame, samples: Samples, metric: str, writers: list[str]) -> Matrix:
    """The writer × instruction matrix of `writings` (one row per writing, `metric`
    averaged over epochs), instructions in the tasks' order, then by id."""
    order = scopes(writings["task"])[:-1]
    wide = writings.pivot_table(index="model", columns=["task", "id"], values=metric)
    columns = sorted(wide.columns, key=lambda c: (order.index(c[0]), c[1]))
    index = pd.MultiIndex.from_tuples(columns, names=["task", "id"])
    values = wide.reindex(index=writers, columns=index).to_numpy(float)
    genre = writings.groupby(["task", "id"])["genre"].first().reindex(index)
    return Matrix(
        tuple(writers),
        values,
        np.array([order.index(task) for task, _ in columns]),
        genre.to_numpy(str),
        _panel(samples, metric, index, writers),
    )


def cells(scores: Matrix, tasks: list[str], resamples: int, seed: int) -> pd.DataFrame:
    """Rows for every (task or all) × (genre or all) cell: each has writings, as the tasks
    and genres are those of the writings."""
    rng = np.random.default_rng(seed)
    parts = []
    for k, task in enumerate([*tasks, ALL]):
        in_task = scores.strata == k if task != ALL else np.ones_like(scores.strata, bool)
        found = set(scores.genres[in_task])  # canonical genres first, in their order
        genres = [g for g in CANONICAL_GENRES if g in found] + sorted(found - set(CANONICAL_GENRES))
        for genre in [*genres, ALL]:
            chosen = in_task & ((scores.genres == genre) if genre != ALL else True)
            part = _cell(scores.part(instructions=chosen), resamples, rng)
            parts.append(part.assign(task=task, genre=genre))
    return pd.concat(parts, ignore_index=True)[list(FIELDS)]


def method(resamples: int, seed: int, panel: Panel | None) -> dict[str, Any]:
    """How the intervals were made, as the board states it (each line short enough for
    the terminal's `method` table)."""
    return {
        "interval": f"{LEVEL:.0%} percentile bootstrap over instructions",
        "draws": "with replacement, stratified by task; the same for every writer (paired)",
        "judges": f"the panel's {len(panel.judges)} judges drawn with replacement too"
        if panel is not None
        else "one judge per writing: not resampled",
        "judges_resampled": list(panel.judges) if panel is not None else [],
        "resamples": resamples,
        "seed": seed,
        "level": LEVEL,
        "min_instructions": MIN_INSTRUCTIONS,
        "rank": "1 + writers with a higher mean; range: 2.5th-97.5th percentile",
        "p_above_next": "share of resamples in which the writer is above the next one",
        "n": "the writer's scored writings in the cell (instr.: the cell's instructions)",
    }


def board(
    writings: pd.DataFrame,
    samples: Samples,
    metric: str,
    writers: list[str],
    resamples: int,
    seed: int,
) -> Board:
    """The board of `writings` with intervals, ranks, the method and the provenance."""
    scores = matrix(writings, samples, metric, writers)
    tasks = scopes(writings["task"])[:-1]
    return Board(
        cells(scores, tasks, resamples, seed),
        method(resamples, seed, scores.panel),
        provenance(samples, metric, scores.panel.judges if scores.panel else ()),
        writing_states(samples.frame, metric, writers),
    )


def no_interval(found: Board) -> str:
    """What a cell without an interval says: too few instructions, or `--bootstrap 0`."""
    return "not resampled" if found.method.get("resamples") == 0 else "too few"
