"""What a study returns, and how its tables and figures reach the terminal and the disk.

CSV files keep full precision, for further analysis, with text cells written safe for a
spreadsheet (`vocabulary.csv_safety`); Markdown and the terminal show three decimals and
each name through `vocabulary.names.shown_name`, so that no two look alike and none is
wider than a screen.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from tabulate import tabulate

from howtobench.vocabulary.csv_safety import write_frame_csv
from howtobench.vocabulary.names import shown_name

__all__ = ["StudyResult", "render", "show", "write"]

# The columns whose text cells are names from the logs (besides a table's index).
NAME_COLUMNS = frozenset({"writer", "model", "judge", "judges", "grader", "anchor", "genre"})


@dataclass
class StudyResult:
    """Named tables and figures of one study, and notes on what was left out."""

    study: str
    tables: dict[str, pd.DataFrame]
    figures: dict[str, Figure] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


def _cell(value: object, column: str, names: set[str]) -> str:
    if isinstance(value, str) and column in names:
        return shown_name(value)
    if isinstance(value, bool | np.bool_):
        return "yes" if value else ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.3g}" if column.endswith("_p") else f"{value:.3f}"
    return "" if value is None else str(value)


def _display(table: pd.DataFrame) -> list[list[str]]:
    indexed = _has_index(table)
    shown = table.reset_index() if indexed else table
    columns = [str(c) for c in shown.columns]
    names = set(columns[: table.index.nlevels] if indexed else ()) | (NAME_COLUMNS & set(columns))
    return [[shown_name(c) for c in columns]] + [
        [_cell(value, column, names) for value, column in zip(row, columns, strict=True)]
        for row in shown.itertuples(index=False)
    ]


def _has_index(table: pd.DataFrame) -> bool:
    return not isinstance(table.index, pd.RangeIndex) or table.index.name is not None


def render(table: pd.DataFrame, fmt: str = "github") -> str:
    """A table as text: `github` is Markdown, `simple` suits the terminal."""
    header, *rows = _display(table)
    return str(tabulate(rows, headers=header, tablefmt=fmt, disable_numparse=True))


def show(result: StudyResult, stream: TextIO) -> None:
    """Every table of a study, then its notes."""
    for name, table in result.tables.items():
        stream.write(f"\n{result.study}: {name}\n\n{render(table, 'simple')}\n")
    for note in result.notes:
        stream.write(f"\nnote: {note}\n")


def write(result: StudyResult, out: Path) -> list[Path]:
    """`<study>_<name>.csv` and `.md` per table, `.png` per figure, and `<study>_notes.txt`
    (what was left out or merged belongs with the numbers)."""
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, table in result.tables.items():
        stem = out / f"{result.study}_{name}"
        write_frame_csv(table, stem.with_suffix(".csv"), index=_has_index(table))
        stem.with_suffix(".md").write_text(render(table) + "\n", encoding="utf-8")
        written += [stem.with_suffix(".csv"), stem.with_suffix(".md")]
    for name, figure in result.figures.items():
        path = out / f"{result.study}_{name}.png"
        figure.savefig(path, dpi=120, bbox_inches="tight")
        written.append(path)
    if result.notes:
        path = out / f"{result.study}_notes.txt"
        path.write_text("".join(f"{note}\n" for note in result.notes), encoding="utf-8")
        written.append(path)
    return written
