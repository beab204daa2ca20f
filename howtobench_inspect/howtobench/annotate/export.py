"""A campaign's results as a file: ratings for `howtobench metaeval`, or picks.

A note or a reason is typed by a person and opened by another in a spreadsheet, so the
CSV is written safe (`vocabulary.csv_safety`); the JSONL keeps every text as it was saved.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any, TextIO

from howtobench.annotate.store import Store
from howtobench.dataset.records import jsonl_text
from howtobench.studies.log_files import StudyError
from howtobench.vocabulary.csv_safety import QUOTING, safe_row

__all__ = ["export", "write_rows"]

RATING_COLUMNS: tuple[str, ...] = ("infer_id", "model", "rater", "score", "errors", "note")
PICK_COLUMNS: tuple[str, ...] = ("infer_id", "rater", "choice", "candidates", "reason")
LISTS = ("errors", "candidates")
SUFFIXES = (".csv", ".jsonl")


def write_rows(rows: list[dict[str, Any]], rating: bool, file: TextIO, jsonl: bool) -> None:
    """Ratings (`rating`) or picks, as CSV or JSONL, to an open text file."""
    columns = RATING_COLUMNS if rating else PICK_COLUMNS
    kept = [{key: row[key] for key in columns} for row in rows]
    if jsonl:
        file.write(jsonl_text(kept))
        return
    writer = csv.DictWriter(file, fieldnames=columns, quoting=QUOTING)
    writer.writeheader()
    for row in kept:
        writer.writerow(safe_row({k: ";".join(v) if k in LISTS else v for k, v in row.items()}))


def export(store: Store, out: Path) -> int:
    """Write the campaign's ratings (or picks) to `out` and return how many rows; the
    file is written beside it first and then moved, so a reader never sees half of it."""
    if out.suffix.lower() not in SUFFIXES:
        raise StudyError(f"--out {out}: give a .csv or a .jsonl file")
    rating = store.settings().kind == "rate"
    rows = store.ratings() if rating else store.picks()
    partial = out.with_name(f".{out.name}.partial")
    try:
        with partial.open("w", encoding="utf-8", newline="") as file:
            write_rows(rows, rating, file, jsonl=out.suffix.lower() == ".jsonl")
        os.replace(partial, out)
    except OSError as err:
        partial.unlink(missing_ok=True)
        raise StudyError(f"--out {out}: cannot write it: {err.strerror or err}") from err
    return len(rows)
