"""CSV cells that cannot attack the spreadsheet that opens them (CSV or formula injection).

The package writes text it does not control into CSV files (a rater's note, a model name),
and a spreadsheet reads a cell starting with `=` as a formula that can send the sheet's
data away; so, as OWASP advises, such cells get a quote in front (docs/large-runs.md).
Our one departure: a text cell that is a plain decimal number (`"-3"`) is left alone, since
no reference or function fits in it and a quote would turn a number into text.
"""

from __future__ import annotations

import csv
import re
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:  # imported where a table is written: the studio's export needs no pandas
    import pandas as pd

__all__ = [
    "QUOTING",
    "safe_frame",
    "safe_row",
    "safe_text",
    "write_frame_csv",
]

# The first characters that make a spreadsheet read a cell as a formula (OWASP: = + - @,
# tab, carriage return; ASVS 1.2.10 adds NUL).
_TRIGGERS = ("=", "+", "-", "@", "\t", "\r", "\0")
# Every text cell quoted, numbers bare (csv's and pandas' `quoting`).
QUOTING: Final = csv.QUOTE_NONNUMERIC
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)


def safe_text(value: str) -> str:
    """`value` with a single quote in front if a spreadsheet would read it as a formula."""
    if value.startswith(_TRIGGERS) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def safe_cell(value: Any) -> Any:
    """A text cell made safe (`safe_text`); anything else (numbers, None) as it is."""
    return safe_text(value) if isinstance(value, str) else value


def safe_row(row: dict[str, Any]) -> dict[str, Any]:
    """A `csv.DictWriter` row with every text cell made safe."""
    return {key: safe_cell(value) for key, value in row.items()}


def _safe_index(index: pd.Index) -> pd.Index:
    import pandas as pd

    if isinstance(index, pd.MultiIndex):
        levels = [_safe_index(level) for level in index.levels]
        names = [safe_cell(name) for name in index.names]
        return index.set_levels(levels).set_names(names)
    if pd.api.types.is_numeric_dtype(index.dtype):
        return index.rename(safe_cell(index.name))
    return index.map(safe_cell).rename(safe_cell(index.name))


def safe_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of `frame` whose text cells, header and index labels are made safe; numeric
    and boolean columns are not looked at, so their dtype and values stay as they are."""
    import pandas as pd

    safe = frame.copy()
    for position in range(safe.shape[1]):
        column = safe.iloc[:, position]
        if not pd.api.types.is_numeric_dtype(column.dtype):  # booleans are numeric too
            safe.isetitem(position, column.map(safe_cell))
    safe.columns = _safe_index(safe.columns)
    safe.index = _safe_index(safe.index)
    return safe


def write_frame_csv(frame: pd.DataFrame, path: Any, *, index: bool) -> None:
    """`frame.to_csv(path)` with the cells made safe and every text cell quoted."""
    safe_frame(frame).to_csv(path, index=index, quoting=QUOTING)
