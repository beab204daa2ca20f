"""Ratings files: a score must be a finite number, and a bad one is named by its line."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from study_logs import writers_logs_fixture  # noqa: F401 (fixtures)

from howtobench.cli import main
from howtobench.studies import StudyError, read_ratings

HEADER = "infer_id,model,score,rater\n"
GOOD = "demo_open_1,w-a,4,r1\n"


@pytest.mark.parametrize(
    ("cell", "what"),
    [
        ("nan", "'nan' is not a finite number"),
        ("NaN", "'NaN' is not a finite number"),
        ("inf", "'inf' is not a finite number"),
        ("-Infinity", "'-Infinity' is not a finite number"),
        ("1e999", "'1e999' is not a finite number"),
        ("", "is missing"),
        ("  ", "is missing"),
        ("four", "'four' is not a finite number"),
    ],
)
def test_a_csv_score_that_is_not_a_finite_number(tmp_path: Path, cell: str, what: str) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text(HEADER + GOOD + f"demo_open_2,w-a,{cell},r1\n" + GOOD, encoding="utf-8")
    with pytest.raises(StudyError) as info:
        read_ratings(path)
    assert str(info.value) == f"{path}, line 3, field 'score': {what}; give a number"


@pytest.mark.parametrize(
    ("value", "what"),
    [
        ("NaN", "nan is not a finite number"),
        ("Infinity", "inf is not a finite number"),
        ('"nan"', "'nan' is not a finite number"),
        ('"inf"', "'inf' is not a finite number"),
        ("null", "is missing"),
        ('""', "is missing"),
        ("true", "True is not a finite number"),
    ],
)
def test_a_jsonl_score_that_is_not_a_finite_number(tmp_path: Path, value: str, what: str) -> None:
    path = tmp_path / "ratings.jsonl"
    good = '{"infer_id": "demo_open_1", "model": "w-a", "score": 4}\n'
    bad = f'{{"infer_id": "demo_open_2", "model": "w-a", "score": {value}}}\n'
    path.write_text(good + "\n" + bad, encoding="utf-8")
    with pytest.raises(StudyError) as info:
        read_ratings(path)
    assert str(info.value) == f"{path}, line 3, field 'score': {what}; give a number"


def test_a_missing_score_field_and_several_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "ratings.jsonl"
    path.write_text(
        '{"infer_id": "a", "model": "m", "score": 1}\n'
        '{"infer_id": "b", "model": "m"}\n'
        '{"infer_id": "c", "model": "m", "score": "inf"}\n',
        encoding="utf-8",
    )
    with pytest.raises(StudyError) as info:
        read_ratings(path)
    assert str(info.value) == (
        f"{path}, line 2, field 'score': is missing; give a number (also line 3)"
    )


def test_lines_are_counted_in_the_file_as_written(tmp_path: Path) -> None:
    """A byte order mark, CRLF line ends and blank lines do not shift the line named."""
    path = tmp_path / "ratings.csv"
    rows = ["\ufeff" + HEADER, GOOD, "\n", GOOD, "demo_open_3,w-a,inf,r2\n"]
    path.write_bytes("".join(rows).replace("\n", "\r\n").encode("utf-8"))
    with pytest.raises(StudyError, match=r"ratings.csv, line 5, field 'score': 'inf'"):
        read_ratings(path)
    path.write_bytes("".join(rows[:-1]).replace("\n", "\r\n").encode("utf-8"))
    ratings = read_ratings(path)
    assert ratings["score"].tolist() == [4.0, 4.0] and set(ratings["rater"]) == {"r1"}


def test_a_table_of_ratings_names_the_row(tmp_path: Path) -> None:
    table = pd.DataFrame({"infer_id": ["a", "b"], "model": ["m", "m"], "score": [1.0, math.inf]})
    with pytest.raises(StudyError, match=r"^ratings, row 2, field 'score': inf is not a finite"):
        read_ratings(table)


def test_the_command_refuses_them_in_one_line(
    writers_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text(HEADER + GOOD + "demo_open_2,w-b,nan,r1\n", encoding="utf-8")
    assert main(["metaeval", str(writers_logs), "--ratings", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"howtobench metaeval: error: {path}, line 3, field 'score': 'nan' is not a finite "
        "number; give a number\n"
    )
