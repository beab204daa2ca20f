"""The leaderboard (paper Table 4), per-node means, and the negotiated weights per genre
(figures 3 and 6).

A model's cell is the mean of the metric over its writings in the row (task, canonical
genre, or All), each writing first averaged over epochs, as inspect's epoch reducer does.
Table `ranking` is the board people should read, with intervals and ranks from a paired
bootstrap over instructions (`studies.leaderboard`; the page: `studies.page`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from howtobench.commandline.constants import DEFAULT_RESAMPLES
from howtobench.studies import leaderboard
from howtobench.studies.leaderboard import MIN_INSTRUCTIONS, Board, no_interval
from howtobench.studies.log_files import StudyError
from howtobench.studies.logs import Samples, as_samples, per_writing, scopes
from howtobench.studies.page import page
from howtobench.studies.plots import strips
from howtobench.studies.runs import first_few
from howtobench.studies.tables import StudyResult
from howtobench.studies.weighting import check_one_weighting
from howtobench.studies.writings import (
    LARGE_CUT_SHARE,
    cut_note,
    marks,
    no_mean,
    stripped_note,
    unranked,
)
from howtobench.tree.spec import LEAVES

__all__ = ["publish", "ranking", "report"]

ALL = "All"


@dataclass
class Report(StudyResult):
    """The report's tables and figures, and its board with intervals (for the files
    `publish` writes beside them)."""

    board: Board = field(kw_only=True)


def _table4(cells: pd.DataFrame, value: str, models: list[str]) -> pd.DataFrame:
    """The board's `value` in Table 4's layout: a row per task, per genre (over all tasks),
    then All; a column per model."""
    every = leaderboard.ALL
    picked = cells[(cells["genre"] == every) | (cells["task"] == every)]
    label = picked["task"].where(picked["task"] != every, picked["genre"]).replace(every, ALL)
    table = picked.assign(row=label).pivot(index="row", columns="writer", values=value)
    table.columns.name = None
    return table.reindex(index=list(dict.fromkeys(label)), columns=models)


def _weight_figures(samples: Samples) -> dict[str, Figure]:
    """One figure per genre of each leaf's weight over the genre's instructions (the
    weights of an instruction averaged over the models and epochs that repeat them), a
    leaf coloured by the ToW node its weight feeds, whose leaf weights sum to 1."""
    rows = samples.frame[samples.frame["weights"].notna()]
    if rows.empty:
        return {}
    weights = pd.DataFrame(list(rows["weights"]), index=rows.index)
    per_instruction = weights.groupby([rows["task"], rows["id"], rows["genre"]], sort=False).mean()
    figures = {}
    nodes = {leaf.id: f"tow.{leaf.node} leaves" for leaf in LEAVES}
    for genre, part in per_instruction.groupby(level="genre", sort=True):
        n = len(part)
        title = f"{genre}: ToW negotiated leaf weights, {n} instruction{'' if n == 1 else 's'}"
        name = re.sub(r"[^\w.-]+", "_", str(genre))
        figures[f"weights_{name}"] = strips(
            part.dropna(axis=1, how="all"),
            title,
            xlabel="negotiated weight (a node's leaf weights sum to 1)",
            point="one instruction (mean over writers and epochs)",
            groups=nodes,
        )
    return figures


def _clipped(frame: pd.DataFrame) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """Per task and model: tow-scored samples, those with a node clipped, and which nodes."""
    if "tow.overall" not in frame:
        return {}, []
    scored = frame[frame["tow.overall"].notna()]
    hit = scored["clipped"].map(lambda clipped: isinstance(clipped, dict) and bool(clipped))
    if not hit.any():
        return {}, []
    rows = []
    for (task, model), part in scored.groupby(["task", "model"], sort=False):
        nodes = Counter(node for clipped in part["clipped"][hit[part.index]] for node in clipped)
        rows.append(
            {
                "task": task,
                "model": model,
                "samples": len(part),
                "clipped": int(hit[part.index].sum()),
                "nodes": ", ".join(f"{node}: {n}" for node, n in nodes.most_common()),
            }
        )
    nodes = Counter(node for clipped in scored["clipped"][hit] for node in clipped)
    note = (
        f"{int(hit.sum())} of {len(scored)} tow-scored samples had a raw aggregate outside "
        f"its scale, clipped by the scorer ({', '.join(f'{k}: {n}' for k, n in nodes.most_common())}): "
        "see table 'clipped'"
    )
    return {"clipped": pd.DataFrame(rows)}, [note]


def report(
    logs: Samples | Sequence[str | Path],
    metric: str = "tow.overall",
    bootstrap: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Report:
    """Tables `ranking`, `method`, `leaderboard` (Table 4), `counts`, `nodes` (the mean of
    every key of the metric's scorer), `writings` and, when there is something to show,
    `clipped`; figures `weights_<genre>` (docs/studies.md)."""
    samples = as_samples(logs)
    samples.require(metric)
    check_one_weighting(samples.frame)
    scorer = metric.split(".")[0]
    keys = [m for m in samples.metrics if m.startswith(f"{scorer}.")] or [metric]
    # in a fixed order, so that the means do not depend on the order the logs were read
    # in (a run split over workers must equal the one-process run to the last digit)
    writings = (
        per_writing(samples, keys)
        .dropna(subset=[metric])
        .sort_values(["model", "task", "id"], kind="stable", ignore_index=True)
    )
    means = writings.groupby("model", sort=False)[metric].mean()
    models = means.sort_values(ascending=False, kind="stable").index.tolist()
    ranked = leaderboard.board(writings, samples, metric, models, bootstrap, seed)
    board = _table4(ranked.cells, "mean", models)
    board.insert(0, "average", board.mean(axis=1))
    counts = _table4(ranked.cells, "n", models).fillna(0).astype(int)
    nodes = []
    for scope in scopes(writings["task"]):
        part = writings if scope == "all" else writings[writings["task"] == scope]
        means = part.groupby("model")[keys].mean().T.reindex(columns=models)
        nodes.append(means.dropna(how="all").assign(task=scope).rename_axis("score").reset_index())
    node_table = pd.concat(nodes, ignore_index=True).set_index(["task", "score"])
    node_table.columns.name = None
    notes = samples.notes()
    if ranked.provenance["unread"]:
        notes.append(
            f"the headers of {len(ranked.provenance['unread'])} run(s) could not be read "
            f"again ({first_few(ranked.provenance['unread'], 3)}): their task metadata is "
            "missing from the provenance"
        )
    tables = {
        "ranking": ranking(ranked),
        "method": settings(ranked),
        "leaderboard": board,
        "counts": counts,
        "nodes": node_table,
    }
    if not ranked.writings.empty:
        tables["writings"] = ranked.writings.set_index(["task", "writer"])
        overall = ranked.writings[ranked.writings["task"] == "all"]
        cut = overall[overall["cut_share"] >= LARGE_CUT_SHARE]
        notes += [cut_note(row) for _, row in cut.iterrows()]
        stripped = overall[overall["stripped_share"] >= LARGE_CUT_SHARE]
        notes += [stripped_note(row) for _, row in stripped.iterrows()]
    found, said = _clipped(samples.frame)
    tables |= found
    notes += said
    figures = _weight_figures(samples)
    if not figures:
        notes.append("no ToW weights in the logs: no weight plots")
    return Report("report", tables, figures, notes, board=ranked)


def publish(result: Report, out: Path) -> list[Path]:
    """`leaderboard.json` (every cell, the method, the provenance) and `report.html`
    (the page) in `out`."""
    json_path, html_path = out / "leaderboard.json", out / "report.html"
    try:
        out.mkdir(parents=True, exist_ok=True)
        json_path.write_text(
            json.dumps(as_json(result.board), indent=1, ensure_ascii=False, allow_nan=False) + "\n",
            encoding="utf-8",
        )
        html = page(result.board, result.tables["nodes"], result.figures, result.notes)
        html_path.write_text(html, encoding="utf-8")
    except OSError as err:
        raise StudyError(f"cannot write to {out}: {err}") from err
    return [json_path, html_path]


def _interval(row: pd.Series, why: str) -> str:
    if np.isnan(row["low"]):
        return f"{row['mean']:.3f} ({why})"
    return f"{row['mean']:.3f} [{row['low']:.3f}, {row['high']:.3f}]"


def _rank(row: pd.Series) -> str:
    if np.isnan(row["rank_low"]):
        return f"{row['rank']:.0f}"
    return f"{row['rank']:.0f} ({row['rank_low']:.0f}-{row['rank_high']:.0f})"


def ranking(found: Board) -> pd.DataFrame:
    """The terminal's board: each task's overall cell, then all tasks', a writer a line;
    after each task's writers, those without a mean there, with why (`writings.no_mean`)."""
    overall = found.cells[found.cells["genre"] == leaderboard.ALL]
    states = found.writings
    ranked = pd.DataFrame(
        {
            "task": overall["task"],
            "task (instr.)": overall["task"] + " (" + overall["instructions"].astype(str) + ")",
            "rank": overall.apply(_rank, axis=1),
            "writer": overall.apply(
                lambda r: r["writer"] + marks(states, r["task"], r["writer"]), axis=1
            ),
            "mean [95% CI]": overall.apply(_interval, axis=1, why=no_interval(found)),
            "P>next": overall["p_above_next"].map(lambda p: "" if np.isnan(p) else f"{p:.2f}"),
            "n": overall["n"].astype(str),
        }
    )
    instructions = dict(zip(overall["task"], overall["instructions"], strict=False))
    lines = [
        {
            "task": row["task"],
            "task (instr.)": f"{row['task']} ({instructions.get(row['task'], row['writings'])})",
            "rank": "-",
            "writer": row["writer"] + marks(states, row["task"], row["writer"]),
            "mean [95% CI]": no_mean(row),
            "P>next": "",
            "n": "0",
        }
        for _, row in unranked(states).iterrows()
    ]
    rows = pd.concat([ranked, pd.DataFrame(lines, columns=ranked.columns)], ignore_index=True)
    order = {task: k for k, task in enumerate(scopes(rows["task"]))}
    rows = rows.sort_values("task", key=lambda t: t.map(order), kind="stable")
    return rows.drop(columns="task").reset_index(drop=True)


def settings(found: Board) -> pd.DataFrame:
    """The method as a two-column table (setting, value), for the terminal and the files."""
    shown = {
        **{k: v for k, v in found.method.items() if k != "judges_resampled"},
        "too few": f"fewer than {MIN_INSTRUCTIONS} instructions or writings in the cell: "
        "no interval",
    }
    if found.method["judges_resampled"]:
        shown["judges"] += ": " + ", ".join(found.method["judges_resampled"])
    return pd.Series(shown, name="value").astype(str).rename_axis("setting").to_frame()


def _json_rows(table: pd.DataFrame) -> list[dict[Any, Any]]:
    """The rows as Python values (pandas' `to_dict` unboxes numpy's), a missing one null."""
    return list(table.astype(object).where(table.notna(), None).to_dict("records"))


def as_json(found: Board) -> dict[str, Any]:
    """leaderboard.json: the method, the provenance and one row per writer and cell
    (ranks as integers, a missing interval as null)."""
    rows = _json_rows(found.cells)
    for row in rows:
        for key in ("rank", "rank_low", "rank_high"):
            row[key] = None if row[key] is None else int(row[key])
    return {
        "method": found.method,
        "provenance": found.provenance,
        "rows": rows,
        "writings": _json_rows(found.writings),
    }
