"""The studies' figures, drawn on matplotlib `Figure` objects (Agg canvas, no pyplot state),
so that plotting works without a display and leaves no global figures behind."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure


def heatmap(matrix: pd.DataFrame, title: str) -> Figure:
    """A square matrix in [-1, 1] with its values written in the cells (figure 4)."""
    size = max(4.0, 0.9 * len(matrix) + 2)
    figure = Figure(figsize=(size + 1, size))
    axes = figure.add_subplot()
    image = axes.imshow(matrix.to_numpy(float), vmin=-1, vmax=1, cmap="RdBu_r")
    labels = [str(c) for c in matrix.columns]
    axes.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
    axes.set_yticks(range(len(matrix.index)), [str(i) for i in matrix.index])
    for (i, j), value in np.ndenumerate(matrix.to_numpy(float)):
        if np.isfinite(value):
            colour = "white" if abs(value) > 0.6 else "black"
            axes.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=9, color=colour)
    figure.colorbar(image, ax=axes)
    axes.set_title(title)
    return figure


def scatter_grid(
    points: pd.DataFrame, pairs: Sequence[tuple[str, str]], hue: str, title: str
) -> Figure:
    """One scatter per (x, y) pair, coloured by `hue`, with the least-squares line over all
    points in bold black (figure 5)."""
    figure = Figure(figsize=(4.2 * len(pairs), 4))
    for k, (x, y) in enumerate(pairs, start=1):
        axes = figure.add_subplot(1, len(pairs), k)
        data = points.dropna(subset=[x, y])
        for name, group in data.groupby(hue, sort=True):
            axes.scatter(group[x], group[y], s=14, alpha=0.7, label=str(name))
        if len(data) >= 2 and data[x].nunique() > 1:
            slope, intercept = np.polyfit(data[x], data[y], 1)
            xs = np.linspace(data[x].min(), data[x].max(), 50)
            axes.plot(xs, slope * xs + intercept, color="black", linewidth=2.5)
        axes.set_xlabel(x)
        axes.set_ylabel(y)
    if len(points):
        figure.axes[0].legend(fontsize=7)
    figure.suptitle(title)
    figure.tight_layout()
    return figure


def weight_boxes(weights: pd.DataFrame, title: str) -> Figure:
    """Horizontal box plots, one per column (a leaf's weight over instructions; figure 3):
    the wider a box, the more the weight varies within the genre."""
    figure = Figure(figsize=(6, 0.5 * weights.shape[1] + 1.5))
    axes = figure.add_subplot()
    columns = list(weights.columns)
    axes.boxplot([weights[c].dropna().to_numpy() for c in columns], orientation="horizontal")
    axes.set_yticks(range(1, len(columns) + 1), columns)
    axes.set_xlabel("negotiated weight")
    axes.set_title(title)
    figure.tight_layout()
    return figure
