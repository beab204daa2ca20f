"""Intervals and honest ranks for the leaderboard: a paired bootstrap over instructions.

The paper's Table 4 gives means only, so two writers 0.05 apart look ranked. Here every
cell of the board (writer × task × genre, each task's overall, all tasks) gets a 95 %
percentile interval from resampling the cell's instructions with replacement:

- paired: a resample draws the same instructions for every writer, so what makes an
  instruction hard for all writers cancels out of their differences and ranks;
- stratified by task: each task's instructions are drawn among themselves, since the
  benchmark fixes how many each task has (379, 456 and 467 of the 1302);
- with a panel (`-T judges=...`: score metadata `by_judge`, each judge's ToW overall),
  the judges are drawn with replacement too, the same judges for every writing of a
  resample. A writing's score then moves by the drawn judges' mean deviation from the
  panel mean, so a resample that draws every judge once gives the score itself. Only
  the overall is recorded per judge, so only `tow.overall` is resampled over judges.

A cell's mean is the mean over its writings, as in the `leaderboard` table. A writer's
rank is 1 + the number of writers with a higher mean. Its rank range is the 2.5th to
97.5th percentile of its rank over the resamples. For neighbours on the board, the
share of resamples in which the upper one's mean is higher is reported too.

A cell of fewer than `MIN_INSTRUCTIONS` instructions, and a writer with fewer scored
writings than that in a cell, get no interval and no rank range. With so few, the
percentile interval is too narrow: it lacks the t quantile and the factor sqrt(n/(n-1)).
At 10 instructions its 95 % interval still covers about 90 % of the time
(`tests/test_studies_leaderboard.py`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from howtobench.studies.bootstrap import chunks, draws, stratified_draws
from howtobench.studies.logs import Samples, StudyError, read_header, scopes
from howtobench.vocabulary.genres import CANONICAL_GENRES
from howtobench.vocabulary.metadata import TaskKey
from howtobench.writing.state import COMPLETE, CUT, EMPTY, FILTERED, count_states

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

    def rows(self, keep: np.ndarray) -> Matrix:
        """The writers where `keep` is true."""
        panel = self.panel and Panel(
            self.panel.judges, self.panel.deviations[keep], self.panel.judged[keep]
        )
        writers = tuple(w for w, k in zip(self.writers, keep, strict=True) if k)
        return Matrix(writers, self.values[keep], self.strata, self.genres, panel)

    def select(self, columns: np.ndarray) -> Matrix:
        """The instructions where `columns` is true."""
        panel = self.panel and Panel(
            self.panel.judges,
            self.panel.deviations[:, columns],
            self.panel.judged[:, columns],
        )
        return Matrix(
            self.writers,
            self.values[:, columns],
            self.strata[columns],
            self.genres[columns],
            panel,
        )


@dataclass(frozen=True)
class Board:
    """Every cell's rows (`FIELDS`), how they were computed, and where the scores came from."""

    cells: pd.DataFrame
    method: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=dict)
    # per task scope and writer: its writings by state (`writing_states`)
    writings: pd.DataFrame = field(default_factory=pd.DataFrame)


# A writer with at least this share of cut writings in a row is marked in the ranking:
# the seven stored writers whose writings are whole have under 1 %, the three cut ones
# 22-30 % in guide and open; a share of 5 % moves a mean by more than its interval does.
LARGE_CUT_SHARE = 0.05
STATE_COLUMNS = ("writings", COMPLETE, CUT, FILTERED, EMPTY, "reasoning", "artifacts")


def writing_states(frame: pd.DataFrame, writers: list[str]) -> pd.DataFrame:
    """Per task (and all tasks) and writer: its writings by state, those with reasoning
    removed or completion artifacts, and the share cut; from each writing's first
    sample (its state is the same in every epoch and scorer's log). Logs without states
    (task version 6 and earlier) give no rows."""
    columns = ["task", "writer", *STATE_COLUMNS, "cut_share"]
    if "writing_state" not in frame:  # a frame built without the column
        return pd.DataFrame(columns=columns)
    known = frame[frame["writing_state"].notna()].drop_duplicates(["model", "task", "id"])
    rows = []
    for scope in scopes(known["task"]):
        part = known if scope == "all" else known[known["task"] == scope]
        for writer in writers:
            counts = count_states(part.loc[part["model"] == writer, "writing_state"])
            if counts["writings"]:
                row: dict[str, Any] = {"task": scope, "writer": writer}
                row |= {column: counts[column] for column in STATE_COLUMNS}
                row["cut_share"] = counts[CUT] / counts["writings"]
                rows.append(row)
    return pd.DataFrame(rows, columns=columns)


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
    cell = matrix.rows(keep)
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
            "low": np.nan,
            "high": np.nan,
            "rank": ranks(mean[None])[0],
            "rank_low": np.nan,
            "rank_high": np.nan,
            "p_above_next": np.nan,
        }
    )
    sure = n >= MIN_INSTRUCTIONS
    if instructions >= MIN_INSTRUCTIONS and resamples > 0 and sure.any():
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


def _genres(present: Iterable[str]) -> list[str]:
    """Canonical genres first (their order), then any other, as the leaderboard's rows."""
    found = set(present)
    return [g for g in CANONICAL_GENRES if g in found] + sorted(found - set(CANONICAL_GENRES))


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
    judges = judges[list(names)].assign(model=rows["model"], task=rows["task"], id=rows["id"])
    per_writing = judges.groupby(["model", "task", "id"], sort=False)[list(names)].mean()
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
    """Rows for every (task or all) × (genre or all) cell that has writings."""
    rng = np.random.default_rng(seed)
    parts = []
    for k, task in enumerate([*tasks, ALL]):
        in_task = scores.strata == k if task != ALL else np.ones_like(scores.strata, bool)
        for genre in [*_genres(scores.genres[in_task]), ALL]:
            chosen = in_task & ((scores.genres == genre) if genre != ALL else True)
            if chosen.any():
                part = _cell(scores.select(chosen), resamples, rng)
                parts.append(part.assign(task=task, genre=genre))
    board = pd.concat(parts, ignore_index=True)
    return board[list(FIELDS)]


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


def _listed(values: Iterable[Any]) -> list[Any]:
    """The distinct values given (None and NaN left out), sorted."""
    return sorted({v for v in values if v is not None and v == v}, key=str)


def provenance(samples: Samples, metric: str, panel: Panel | None) -> dict[str, Any]:
    """Where the board's scores came from: the runs' task metadata and versions (read
    again from the logs' headers), the judges, the plans and the weights judged with.
    Runs whose header cannot be read again (samples put together in memory, a log
    removed since) are listed under `unread`, their metadata missing."""
    frame = samples.frame
    headers, unread = [], []
    for run in dict.fromkeys(frame["run"]):
        try:
            headers.append(read_header(run))
        except StudyError:
            unread.append(run)
    meta = [h.eval.metadata or {} for h in headers]
    data: dict[str, list[dict[str, Any]]] = {}
    for task_data in (m.get(TaskKey.DATA) or {} for m in meta):
        for task, print_ in task_data.items():
            if print_ not in data.setdefault(task, []):
                data[task].append(print_)
    versions: dict[str, set[int | str]] = {}
    for h in headers:
        versions.setdefault(h.eval.task, set()).add(h.eval.task_version)
    packages: dict[str, set[str]] = {}
    for h in headers:
        for name, version in (h.eval.packages or {}).items():
            packages.setdefault(name, set()).add(version)
    # samples put together by hand may lack the newer score metadata
    prints = frame.reindex(columns=["task", "id", "weights_fingerprint"]).dropna()
    lines = sorted(set(prints["task"] + "/" + prints["id"] + " " + prints["weights_fingerprint"]))
    return {
        "metric": metric,
        "logs": len(headers),
        "unread": unread,
        "judges": _listed(frame["grader"]),
        "panel": list(panel.judges) if panel is not None else [],
        "data": data,
        "tree": _listed(m.get("tree") for m in meta),
        "weights": _listed(m.get("weights") for m in meta),
        "plan": _listed([*(m.get("plan") for m in meta), *frame.get("plan", [])]),
        # one digest over every instruction's weights fingerprint: equal boards were
        # judged with equal weights
        "weights_digest": hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
        if lines
        else None,
        "task_versions": {task: sorted(v) for task, v in sorted(versions.items())},
        "packages": {name: sorted(v) for name, v in sorted(packages.items())},
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
        provenance(samples, metric, scores.panel),
        writing_states(samples.frame, writers),
    )


def no_interval(found: Board) -> str:
    """What a cell without an interval says: too few instructions, or `--bootstrap 0`."""
    return "not resampled" if found.method.get("resamples") == 0 else "too few"


def _interval(row: pd.Series, why: str) -> str:
    if np.isnan(row["low"]):
        return f"{row['mean']:.3f} ({why})"
    return f"{row['mean']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"


def _rank(row: pd.Series) -> str:
    if np.isnan(row["rank_low"]):
        return f"{row['rank']:.0f}"
    return f"{row['rank']:.0f} ({row['rank_low']:.0f}-{row['rank_high']:.0f})"


def ranking(found: Board) -> pd.DataFrame:
    """The terminal's board: each task's overall cell, then all tasks', one writer a
    line with `mean [low, high]`, the rank and its range, P(above the next) and n."""
    overall = found.cells[found.cells["genre"] == ALL]
    return pd.DataFrame(
        {
            "task (instr.)": overall["task"] + " (" + overall["instructions"].astype(str) + ")",
            "rank": overall.apply(_rank, axis=1),
            "writer": overall["writer"] + overall.apply(cut_mark, axis=1, found=found),
            "mean [95% CI]": overall.apply(_interval, axis=1, why=no_interval(found)),
            "P>next": overall["p_above_next"].map(lambda p: "" if np.isnan(p) else f"{p:.2f}"),
            "n": overall["n"].astype(str),
        }
    ).reset_index(drop=True)


def cut_mark(row: pd.Series, found: Board) -> str:
    """What follows a writer's name in a ranking row: ` [cut 27%]` when a large share of
    its writings in the row's task were cut (`LARGE_CUT_SHARE`), else nothing."""
    states = found.writings
    if states.empty:
        return ""
    mine = (states["task"] == row["task"]) & (states["writer"] == row["writer"])
    share = states.loc[mine, "cut_share"]
    if share.empty or share.iloc[0] < LARGE_CUT_SHARE:
        return ""
    return f" [cut {share.iloc[0]:.0%}]"


def settings(found: Board) -> pd.DataFrame:
    """The method as a two-column table (setting, value), for the terminal and the files."""
    shown = {
        **{k: v for k, v in found.method.items() if k != "judges_resampled"},
        "too few": f"fewer than {MIN_INSTRUCTIONS} instructions or writings in the cell: "
        "no interval",
    }
    if found.method["judges_resampled"]:
        shown["judges"] += ": " + ", ".join(found.method["judges_resampled"])
    return pd.DataFrame(
        {"value": [str(v) for v in shown.values()]},
        index=pd.Index(list(shown), name="setting"),
    )


def _json_value(value: Any) -> Any:
    if isinstance(value, float | np.floating):
        return None if np.isnan(value) else float(value)
    if isinstance(value, np.integer):
        return int(value)
    return value


def as_json(found: Board) -> dict[str, Any]:
    """leaderboard.json: the method, the provenance and one row per writer and cell
    (ranks as integers, a missing interval as null)."""
    rows = [
        {key: _json_value(value) for key, value in row.items()}
        for row in found.cells.to_dict(orient="records")
    ]
    for row in rows:
        for key in ("rank", "rank_low", "rank_high"):
            row[key] = None if row[key] is None else int(row[key])
    states = [
        {key: _json_value(value) for key, value in row.items()}
        for row in found.writings.to_dict(orient="records")
    ]
    return {
        "method": found.method,
        "provenance": found.provenance,
        "rows": rows,
        "writings": states,
    }
