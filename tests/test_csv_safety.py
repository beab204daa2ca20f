"""CSV files cannot attack the spreadsheet that opens them: a text cell that would be a
formula gets a quote in front, in the studio's export and in the studies' tables; numbers
stay numbers; JSONL keeps the text as it was."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from annotate_support import (
    demo_logs_fixture,  # noqa: F401 (a fixture)
    new_campaign,
    tokens,
)
from starlette.testclient import TestClient

from howtobench.annotate.app import create_app
from howtobench.annotate.export import export, write_rows
from howtobench.studies.ratings import read_ratings
from howtobench.studies.tables import StudyResult, write
from howtobench.vocabulary.csv_safety import safe_frame, safe_text

HYPERLINK = '=HYPERLINK("http://x","y")'
# what a rater may type, and how it reads back from the CSV
ATTACKS = {
    HYPERLINK: "'" + HYPERLINK,
    "+1+cmd|' /C calc'!A0": "'+1+cmd|' /C calc'!A0",
    "-2+3+cmd|' /C calc'!A0": "'-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)*cmd|' /C calc'!A0": "'@SUM(1+1)*cmd|' /C calc'!A0",
    "\t=1+1": "'\t=1+1",
    "\r=1+1": "'\r=1+1",
    "- a list item": "'- a list item",
    "-": "'-",
}
HARMLESS = ["好", "", "a=b", " =1+1", "'=quoted already", "−3 (a Unicode minus)", "3-2"]
PLAIN_NUMBERS = ["-3", "+3", "-0.5", "-.5", "-2e-3", "+1E5", "-3."]


@pytest.mark.parametrize(("given", "written"), ATTACKS.items())
def test_a_cell_that_would_be_a_formula_gets_a_quote(given: str, written: str) -> None:
    assert safe_text(given) == written


@pytest.mark.parametrize("given", [*HARMLESS, *PLAIN_NUMBERS])
def test_other_text_and_plain_numbers_are_left_alone(given: str) -> None:
    # a text cell that is a plain number and nothing else computes to itself: data
    assert safe_text(given) == given


def test_not_quite_numbers_are_neutralised() -> None:
    for given in ("-3 ", "-3\t", "-1-1", "-0x10", "--3", "-3e", "-١٢"):  # Arabic digits too
        assert safe_text(given) == "'" + given


def _rated(db: Path, logs: Path, notes: list[str]) -> Path:
    """A campaign in which ana rated one writing per note, saved through the API."""
    store = new_campaign(db, [logs])
    token = tokens(store)
    headers = {"Authorization": f"Bearer {token['ana']}"}
    with TestClient(create_app(store)) as client:
        items = client.get("/api/assignments", headers=headers).json()["instructions"]
        keys = [w["id"] for item in items for w in item["writings"]]
        assert len(keys) >= len(notes)
        for key, note in zip(keys, notes, strict=False):
            body = {"score": 4, "note": note}
            assert client.put(f"/api/ratings/{key}", json=body, headers=headers).status_code == 200
    store.close()
    return db


def test_the_studio_export_neutralises_notes_and_keeps_scores_numbers(
    demo_logs: Path, tmp_path: Path
) -> None:
    from howtobench.annotate.store import Store

    notes = [*ATTACKS, "plain", "-3"]
    store = Store(_rated(tmp_path / "c.db", demo_logs, notes))
    out = tmp_path / "ratings.csv"
    assert export(store, out) == len(notes)
    raw = out.read_text(encoding="utf-8")
    assert '"\'=HYPERLINK(""http://x"",""y"")"' in raw  # quoted, quotes doubled
    with out.open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    read_back = sorted(row["note"] for row in rows)
    assert read_back == sorted([*ATTACKS.values(), "plain", "-3"])
    assert all(row["score"] == "4" for row in rows)
    # read as QUOTE_NONNUMERIC, a bare field is a number and a quoted one text: the
    # scores are bare, everything else is quoted
    with out.open(encoding="utf-8", newline="") as file:
        header, *typed = list(csv.reader(file, quoting=csv.QUOTE_NONNUMERIC))
    assert all(isinstance(cell, str) for cell in header)
    assert [row[3] for row in typed] == [4.0] * len(notes)
    assert all(isinstance(cell, str) for row in typed for cell in row[:3] + row[4:])
    # the ratings reader (metaeval) still takes the file: the scores are numbers
    assert list(read_ratings(out)["score"]) == [4.0] * len(notes)
    # JSONL keeps every note exactly as the rater typed it
    jsonl = tmp_path / "ratings.jsonl"
    export(store, jsonl)
    kept = [json.loads(line)["note"] for line in jsonl.read_text(encoding="utf-8").splitlines()]
    assert sorted(kept) == sorted(notes)
    store.close()


def test_a_pick_export_neutralises_its_reason_too() -> None:
    rows = [
        {
            "infer_id": "open-1",
            "rater": "@ana",
            "choice": "reference",
            "candidates": ["=a", "reference"],
            "reason": "+better",
        }
    ]
    text = io.StringIO(newline="")
    write_rows(rows, False, text, jsonl=False)
    [row] = list(csv.DictReader(io.StringIO(text.getvalue(), newline="")))
    assert row == {
        "infer_id": "open-1",
        "rater": "'@ana",
        "choice": "reference",
        "candidates": "'=a;reference",
        "reason": "'+better",
    }


def test_a_study_table_neutralises_text_cells_and_keeps_numbers(tmp_path: Path) -> None:
    table = pd.DataFrame(
        {
            "model": [HYPERLINK, "gpt-4o", "-3", "@evil"],
            "score": [-0.5, 1.25, np.nan, -3.0],
            "n": [1, -2, 3, 4],
            "best": [True, False, True, False],
            "mixed": [-1, "=1+1", None, 2.5],
        },
        index=pd.Index(["a", "+b", "c", "d"], name="row"),
    )
    result = StudyResult("study", {"table": table})
    paths = write(result, tmp_path)
    csv_path = tmp_path / "study_table.csv"
    assert csv_path in paths
    read = pd.read_csv(csv_path, index_col="row")
    assert list(read.index) == ["a", "'+b", "c", "d"]
    assert list(read["model"]) == ["'" + HYPERLINK, "gpt-4o", "-3", "'@evil"]
    assert read["score"].dtype == np.float64 and read["n"].dtype == np.int64
    assert read["score"].tolist()[:2] == [-0.5, 1.25] and np.isnan(read["score"].iloc[2])
    assert read["n"].tolist() == [1, -2, 3, 4]
    assert read["best"].tolist() == [True, False, True, False]
    assert read["mixed"].tolist()[:2] == ["-1", "'=1+1"]  # an object column, read as text
    with csv_path.open(encoding="utf-8", newline="") as file:
        header, first, *_ = list(csv.reader(file))
    assert first[:3] == ["a", "'" + HYPERLINK, "-0.5"]
    raw = csv_path.read_text(encoding="utf-8").splitlines()
    assert raw[1].startswith('"a","\'=HYPERLINK(') and ",-0.5,1,True," in raw[1]  # numbers bare
    # the table itself is not changed; the Markdown shows the text as it is
    assert table["model"].iloc[0] == HYPERLINK
    assert HYPERLINK in (tmp_path / "study_table.md").read_text(encoding="utf-8")


def test_headers_and_multi_indexes_are_cells_too() -> None:
    frame = pd.DataFrame(
        [[1.0, "=x"]],
        columns=["-model", "label"],
        index=pd.MultiIndex.from_tuples([("=a", "b")], names=["@k", "j"]),
    )
    safe = safe_frame(frame)
    assert list(safe.columns) == ["'-model", "label"]
    assert list(safe.index) == [("'=a", "b")] and list(safe.index.names) == ["'@k", "j"]
    assert safe.iloc[0, 0] == 1.0 and safe.iloc[0, 1] == "'=x"
    assert frame.iloc[0, 1] == "=x"  # a copy
