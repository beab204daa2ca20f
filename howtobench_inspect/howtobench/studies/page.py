"""`report.html`: the report as one self-contained page that opens from disk, offline.

Everything is inline (the template's styles, SVG interval bars, base64 PNG figures),
there is no script, and the Content-Security-Policy allows no request but `data:`
images. Every text from the logs is HTML-escaped and shown through `vocabulary.names`,
since a writer's name is whatever a run called it.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable, Iterator
from html import escape
from pathlib import Path
from string import Template

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from howtobench.studies.leaderboard import ALL, MIN_INSTRUCTIONS, Board, no_interval
from howtobench.studies.writings import COUNTS, LARGE_CUT_SHARE, marks, no_mean, unranked
from howtobench.vocabulary.names import html_name, shown_name

__all__ = ["page"]

TEMPLATE = Path(__file__).with_name("templates") / "report.html"
BAR = (260, 18)  # width and height of one interval bar, in pixels
HEAT = colormaps["viridis"]
NODES = ("content", "format", "impression")


def _number(value: float, digits: int = 3) -> str:
    return "" if np.isnan(value) else f"{value:.{digits}f}"


def _bar(row: pd.Series, low: float, high: float) -> str:
    """The row's interval as a line with its mean as a dot, on the scale [low, high]."""
    width, height = BAR
    span = high - low or 1.0

    def x(value: float) -> float:
        return round(4 + (value - low) / span * (width - 8), 1)

    middle = height / 2
    label = f"mean {row['mean']:.3f}"
    if np.isnan(row["low"]):
        dot = f'<circle cx="{x(row["mean"])}" cy="{middle}" r="4" fill="none" stroke="#8a94a3"/>'
        return f'<svg width="{width}" height="{height}" role="img" aria-label="{label}">{dot}</svg>'
    label += f", 95% interval {row['low']:.3f} to {row['high']:.3f}"
    return (
        f'<svg width="{width}" height="{height}" role="img" aria-label="{label}">'
        f'<line x1="{x(row["low"])}" x2="{x(row["high"])}" y1="{middle}" y2="{middle}" '
        'stroke="#3f6fb5" stroke-width="6" stroke-linecap="round" opacity="0.45"/>'
        f'<circle cx="{x(row["mean"])}" cy="{middle}" r="4.5" fill="#1f3f75"/></svg>'
    )


def _rank(row: pd.Series) -> str:
    if np.isnan(row["rank_low"]):
        return f"{row['rank']:.0f}"
    return f"{row['rank']:.0f} <span class=key>({row['rank_low']:.0f}&ndash;{row['rank_high']:.0f})</span>"


def _scope_table(rows: pd.DataFrame, why: str, states: pd.DataFrame) -> str:
    """One cell's board, then the writers without a mean in the cell's task, with why."""
    low = np.nanmin(np.r_[rows["low"], rows["mean"]])
    high = np.nanmax(np.r_[rows["high"], rows["mean"]])
    lines = [
        "<table><thead><tr><th>rank (range)</th><th>writer</th><th class=num>mean</th>"
        f"<th>95% interval <span class=key>{low:.2f} &ndash; {high:.2f}</span></th>"
        "<th class=num>[low, high]</th><th class=num>P(&gt;next)</th><th class=num>n</th>"
        "</tr></thead><tbody>"
    ]
    for _, row in rows.iterrows():
        interval = (
            f'<td class="num few">{why}</td>'
            if np.isnan(row["low"])
            else f"<td class=num>[{row['low']:.3f}, {row['high']:.3f}]</td>"
        )
        lines.append(
            f"<tr><td>{_rank(row)}</td><td>{_marked(row['writer'], row['task'], states)}</td>"
            f"<td class=num>{row['mean']:.3f}</td><td class=bar>{_bar(row, low, high)}</td>"
            f"{interval}<td class=num>{_number(row['p_above_next'], 2)}</td>"
            f"<td class=num>{row['n']}</td></tr>"
        )
    task = rows["task"].iloc[0]
    for _, row in unranked(states).iterrows():
        if row["task"] == task:
            lines.append(
                f"<tr><td>&ndash;</td><td>{_marked(row['writer'], task, states)}</td>"
                f'<td class="few" colspan=4>{escape(no_mean(row))}</td><td class=num>0</td></tr>'
            )
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _marked(writer: str, task: str, states: pd.DataFrame) -> str:
    """A writer's name with its marks, as in the text ranking (`writings.marks`)."""
    mark = marks(states, task, writer)
    return html_name(writer) + (f" <span class=cut>{escape(mark.strip())}</span>" if mark else "")


def _boards(board: Board) -> str:
    """All tasks' board first, then each task's."""
    overall = board.cells[board.cells["genre"] == ALL]
    tasks = [ALL, *(t for t in dict.fromkeys(overall["task"]) if t != ALL)]
    parts = []
    for task in tasks:
        rows = overall[overall["task"] == task]
        title = "All tasks" if task == ALL else f"Task: {task}"
        parts.append(
            f"<h3>{escape(title)} <span class=key>({rows['instructions'].iloc[0]} "
            f"instructions)</span></h3>\n{_scope_table(rows, no_interval(board), board.writings)}"
        )
    return "\n".join(parts)


def _heatmap(board: Board, writers: list[str]) -> str:
    """Writers (board order) × genres (over all tasks), coloured by the mean."""
    cells = board.cells[(board.cells["task"] == ALL) & (board.cells["genre"] != ALL)]
    genres = list(dict.fromkeys(cells["genre"]))
    by_cell = cells.set_index(["writer", "genre"])
    low, high = cells["mean"].min(), cells["mean"].max()
    head = "".join(f"<th class=num>{html_name(g)}</th>" for g in genres)

    def cells_of(writer: str) -> Iterator[str]:
        for genre in genres:
            if (writer, genre) not in by_cell.index:
                yield "<td></td>"
                continue
            cell = by_cell.loc[(writer, genre)]
            share = 0.5 if high == low else (cell["mean"] - low) / (high - low)
            colour = HEAT(share)
            luminance = np.dot(colour[:3], (0.299, 0.587, 0.114))
            light = " light" if luminance > 0.6 else ""
            few = " few" if np.isnan(cell["low"]) else ""
            interval = (
                f" (fewer than {MIN_INSTRUCTIONS} instructions: no interval)"
                if few
                else f" [{cell['low']:.3f}, {cell['high']:.3f}]"
            )
            tip = f"{shown_name(writer, None)}, {shown_name(genre, None)}: {cell['mean']:.3f}"
            tip += f"{interval}, n={cell['n']}"
            yield (
                f'<td class="num{light}{few}" style="background:{to_hex(colour)}" '
                f'title="{escape(tip)}">{cell["mean"]:.2f}</td>'
            )

    return _writer_table("heat", head, writers, cells_of)


def _nodes(nodes: pd.DataFrame, metric: str, writers: list[str]) -> str:
    """Each writer's mean per ToW node over all tasks, as bars on a shared scale."""
    scorer = metric.split(".")[0]
    shown = [f"{scorer}.{n}" for n in NODES if ("all", f"{scorer}.{n}") in nodes.index]
    if not shown:
        return f"<p class=key>The metric {escape(metric)} has no nodes.</p>"
    part = nodes.loc[[("all", score) for score in shown]]
    high = float(np.nanmax(part.to_numpy(float))) or 1.0
    head = "".join(f"<th>{escape(score)}</th>" for score in shown)

    def cells_of(writer: str) -> Iterator[str]:
        for score in shown:
            value = part.loc[("all", score)].get(writer, np.nan)
            width = 0 if np.isnan(value) else round(value / high * 120)
            yield (
                f'<td><div class=node><span class=fill style="width:{width}px"></span>'
                f"<span>{_number(value)}</span></div></td>"
            )

    return _writer_table("", head, writers, cells_of)


def _writer_table(
    kind: str, head: str, writers: list[str], cells_of: Callable[[str], Iterator[str]]
) -> str:
    """A table of one row per writer: its name, then the cells `cells_of(writer)` gives."""
    table = f"<table class={kind}>" if kind else "<table>"
    lines = [f"{table}<thead><tr><th>writer</th>{head}</tr></thead><tbody>"]
    for writer in writers:
        lines.append(f"<tr><td>{html_name(writer)}</td>{''.join(cells_of(writer))}</tr>")
    lines.append("</tbody></table>")
    return "\n".join(lines)


def _weights(figures: dict[str, Figure]) -> str:
    """The weight figures as inline PNGs; their constrained layout already fits them, so
    no tight box (which draws a figure once more)."""
    if not figures:
        return "<p class=key>No ToW weights in the logs.</p>"
    images = []
    for name, figure in figures.items():
        buffer = io.BytesIO()
        figure.savefig(buffer, format="png", dpi=100)
        png = base64.b64encode(buffer.getvalue()).decode("ascii")
        images.append(f'<img alt="{escape(name)}" src="data:image/png;base64,{png}">')
    return "\n".join(images)


def _writings(board: Board) -> str:
    """The writings table (`writings.writing_states`): each writer's writings per task."""
    states = board.writings
    if states.empty:
        return "<p class=key>The logs record no writing states (task version 6 or earlier).</p>"
    head = "".join(
        f"<th{' class=num' if name not in ('task', 'writer', 'cut by') else ''}>{escape(name)}</th>"
        for name in ("task", "writer", *COUNTS, "cut share", "stripped share", "cut by")
    )
    rows = []
    for _, row in states.iterrows():
        cells = [f"<td>{escape(row['task'])}</td><td>{html_name(row['writer'])}</td>"]
        cells += [f"<td class=num>{row[name]}</td>" for name in COUNTS]
        for share in (row["cut_share"], row["stripped_share"]):
            marked = " style='font-weight:600'" if share >= LARGE_CUT_SHARE else ""
            cells.append(f"<td class=num{marked}>{share:.0%}</td>")
        cells.append(f"<td>{escape(row['cut_by'])}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(rows)}</table>"


def page(
    board: Board,
    nodes: pd.DataFrame,
    figures: dict[str, Figure],
    notes: list[str],
) -> str:
    """The HTML of the report page."""
    overall = board.cells[(board.cells["task"] == ALL) & (board.cells["genre"] == ALL)]
    writers = overall["writer"].tolist()
    metric = board.provenance.get("metric", "")
    without = set(unranked(board.writings)["writer"]) if not board.writings.empty else set()
    summary = (
        f"{len(writers)} writers"
        + (f" and {len(without)} without a mean" if without else "")
        + f", {overall['instructions'].iloc[0]} instructions, "
        f"{board.provenance.get('logs', 0)} runs; judges: "
        + ", ".join(
            shown_name(judge)
            for judge in [*board.provenance.get("judges", []), *board.provenance.get("panel", [])]
        )
    )
    method = board.method
    panel = method["judges_resampled"]
    judges = method["judges"] + (f" ({', '.join(panel)})" if panel else "")
    key = (
        f"{method['interval']}, {method['draws']}; {judges}. "
        f"{method['resamples']} resamples, seed {method['seed']}. "
        f"Rank: {method['rank']}. P(>next): {method['p_above_next']}. n: {method['n']}. "
        f"Cells with fewer than {MIN_INSTRUCTIONS} instructions (or writings) get no "
        "interval: too few."
    )
    notes_html = (
        "<ul class=notes>" + "".join(f"<li>{escape(note)}</li>" for note in notes) + "</ul>"
        if notes
        else "<p class=key>None.</p>"
    )
    return Template(TEMPLATE.read_text(encoding="utf-8")).substitute(
        title=escape(f"HoWToBench report: {metric}"),
        summary=escape(summary),
        method=escape(key),
        metric=escape(metric),
        few=MIN_INSTRUCTIONS,
        boards=_boards(board),
        writings=_writings(board),
        large_cut=f"{LARGE_CUT_SHARE:.0%}",
        heatmap=_heatmap(board, writers),
        nodes=_nodes(nodes, metric, writers),
        weights=_weights(figures),
        provenance="\n".join(
            f"<dt>{escape(key)}</dt><dd>{escape(json.dumps(value, ensure_ascii=False))}</dd>"
            for key, value in board.provenance.items()
        ),
        notes=notes_html,
    )
