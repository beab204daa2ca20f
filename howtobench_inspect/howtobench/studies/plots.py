"""The studies' figures, drawn on matplotlib `Figure` objects (Agg canvas, no pyplot state),
so that plotting works without a display and leaves no global figures behind.

They must stay readable on small data (the demo has 10 items, some genres one instruction):
every figure names the score it shows and what a point is, with n per group, and a
distribution of a few values is drawn as its points, never as a box of one or two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from contextlib import suppress
from functools import cache, wraps
from pathlib import Path
from typing import ParamSpec

import numpy as np
import pandas as pd
from matplotlib import font_manager, rc_context
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

__all__ = ["FEW", "JITTER", "cjk_fallback", "heatmap", "scatter_grid", "strips"]

P = ParamSpec("P")

FEW = 5  # fewer values than this get no box: its quartiles would be the points themselves
PANELS_PER_ROW = 3  # a wider row shrinks to illegible text when a page or viewer fits it
DENSE = 30  # more values than this are drawn small and faint
JITTER = 0.15  # how far apart (in rows) the points of one row spread, so equal ones show


def cjk_fallback(installed: Iterable[str]) -> list[str]:
    """The CJK font among `installed` family names to fall back on (a user's own genre
    names, kept as given, may be Chinese): sans serif first, then simplified Chinese."""
    cjk = {name for name in installed if "CJK" in name}
    return sorted(cjk, key=lambda name: ("Sans" not in name, "SC" not in name, name))[:1]


@cache
def _families() -> list[str]:
    """matplotlib's default family, then a CJK font if one is installed (each glyph comes
    from the first font that has it; naming only installed fonts, nothing warns). CJK fonts
    installed after matplotlib built its font cache are added here: it would not see them."""
    fonts = font_manager.fontManager
    known = {font.fname for font in fonts.ttflist}
    for path in font_manager.findSystemFonts():
        if "CJK" in Path(path).name and path not in known:
            with suppress(OSError, RuntimeError):  # a file FreeType cannot read: no fallback
                fonts.addfont(path)
    return ["sans-serif", *cjk_fallback(font.name for font in fonts.ttflist)]


def _readable_text(draw: Callable[P, Figure]) -> Callable[P, Figure]:
    """Draw with `_families`: a text keeps the fonts it was created with, so the figure
    renders its CJK labels when saved later, outside this context."""

    @wraps(draw)
    def drawn(*args: P.args, **kwargs: P.kwargs) -> Figure:
        with rc_context({"font.family": _families()}):
            return draw(*args, **kwargs)

    return drawn


def _legend_handles(colours: Mapping[str, str]) -> list[Line2D]:
    """One dot per label, so a legend lists every group even where a panel lacks it."""
    return [
        Line2D([], [], marker="o", linestyle="", color=colour, label=label)
        for label, colour in colours.items()
    ]


@_readable_text
def heatmap(matrix: pd.DataFrame, title: str, counts: pd.DataFrame | None = None) -> Figure:
    """A square matrix in [-1, 1] with its values written in the cells (figure 4), and
    under each the number of points it comes from (`counts`): on small data a strong r
    from three writings must not read like one from three hundred. A cell without a
    value (too few points) shows its count in grey."""
    size = max(4.0, 0.9 * len(matrix) + 2)
    figure = Figure(figsize=(size + 1, size), layout="constrained")
    axes = figure.add_subplot()
    values = matrix.to_numpy(float)
    image = axes.imshow(values, vmin=-1, vmax=1, cmap="RdBu_r")
    labels = [str(c) for c in matrix.columns]
    axes.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    axes.set_yticks(range(len(matrix.index)), [str(i) for i in matrix.index])
    for (i, j), value in np.ndenumerate(values):
        n = "" if counts is None else f"n={counts.iloc[i, j]}"
        if np.isfinite(value):
            colour = "white" if abs(value) > 0.6 else "black"
            text = f"{value:.2f}\n{n}".strip()
        else:
            colour, text = "gray", n
        axes.text(j, i, text, ha="center", va="center", fontsize=9, color=colour)
    figure.colorbar(image, ax=axes, label="Pearson r")
    axes.set_title(title)
    return figure


@_readable_text
def scatter_grid(
    points: pd.DataFrame, fits: pd.DataFrame, hue: str, title: str, labels: Mapping[str, str]
) -> Figure:
    """One scatter per row of `fits`, coloured by `hue`, with its least-squares line where
    the study fitted one (figure 5); each title gives r, p and n, so that a steep line
    through five points reads as what it is."""
    columns = min(len(fits), PANELS_PER_ROW)
    rows = -(-len(fits) // columns)
    figure = Figure(figsize=(4.2 * columns + 2, 4 * rows + 0.5), layout="constrained")
    groups = points[hue].value_counts().sort_index()
    colours = {str(name): f"C{k}" for k, name in enumerate(groups.index)}
    for k, fit in enumerate(fits.itertuples(index=False), start=1):
        axes = figure.add_subplot(rows, columns, k)
        data = points.dropna(subset=[fit.x, fit.y])
        for name, group in data.groupby(hue, sort=True):
            axes.scatter(group[fit.x], group[fit.y], s=16, alpha=0.8, color=colours[str(name)])
        if np.isfinite(fit.slope):
            xs = np.linspace(data[fit.x].min(), data[fit.x].max(), 50)
            axes.plot(xs, fit.slope * xs + fit.intercept, color="black", linewidth=2.5)
            axes.set_title(f"r = {fit.pearson:.2f}, p = {fit.pearson_p:.2g}, n = {fit.n}")
        else:
            axes.set_title(f"n = {fit.n}: too few or constant points to fit")
        axes.set_xlabel(labels.get(fit.x, fit.x))
        axes.set_ylabel(labels.get(fit.y, fit.y))
    counted = {f"{name} ({n})": colours[str(name)] for name, n in groups.items()}
    figure.legend(
        handles=_legend_handles(counted), loc="outside right upper", title=f"{hue} (writings)"
    )
    figure.suptitle(title)
    return figure


@_readable_text
def strips(
    values: pd.DataFrame, title: str, xlabel: str, point: str, groups: Mapping[str, str]
) -> Figure:
    """One row per column of `values` (figure 3), first on top: every value a jittered point
    coloured by its column's `groups` entry, a box behind a row of at least `FEW` values,
    and each row's n in the right margin. `point` says what a point is."""
    columns = [str(c) for c in values.columns]
    present = dict.fromkeys(groups[c] for c in columns if c in groups)
    colours = {group: f"C{k}" for k, group in enumerate(present)}
    figure = Figure(figsize=(7, 0.5 * len(columns) + 2.2), layout="constrained")
    axes = figure.add_subplot()
    jitter = np.random.default_rng(0)  # the same PNG on every run
    for row, column in enumerate(columns, start=1):
        data = values[column].dropna().to_numpy(float)
        if len(data) >= FEW:
            axes.boxplot(
                [data],
                positions=[row],
                orientation="horizontal",
                widths=0.6,
                showfliers=False,  # every value is a point already
                manage_ticks=False,
                medianprops={"color": "black"},
            )
        spread = jitter.uniform(-JITTER, JITTER, len(data)) if len(data) > 1 else 0.0
        colour = colours.get(groups.get(column, ""), "gray")
        size, alpha = (8, 0.35) if len(data) > DENSE else (22, 0.8)  # the box shows through
        axes.scatter(data, row + spread, s=size, alpha=alpha, color=colour, zorder=3)
        axes.text(
            1.01,
            row,
            f"n={len(data)}",
            transform=axes.get_yaxis_transform(),
            va="center",
            fontsize=8,
            color="dimgray",
        )
    axes.set_yticks(range(1, len(columns) + 1), columns)
    axes.set_ylim(len(columns) + 0.5, 0.5)
    boxed = (values.notna().sum() >= FEW).any()
    box = f"; box: quartiles, whiskers to 1.5 IQR, where n ≥ {FEW}" if boxed else ""
    axes.set_xlabel(f"{xlabel}\npoint: {point}{box}")
    axes.set_title(title)
    if colours:
        figure.legend(
            handles=_legend_handles(colours), loc="outside lower center", ncols=len(colours)
        )
    return figure
