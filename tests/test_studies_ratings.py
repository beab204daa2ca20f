"""Ratings files: a score must be a finite number, and a bad one is named by its line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from howtobench.cli import main
from howtobench.studies import StudyError, read_ratings
from howtobench.studies.ratings import rater_agreement

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


def kappa_by_hand(a: list[int], b: list[int], categories: list[int], quadratic: bool) -> float:
    """1 - sum(w * observed) / sum(w * expected) over the confusion matrix, with w the
    squared distance in points (quadratic) or 1 off the diagonal (Cohen's plain kappa)."""
    k = len(categories)
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[categories.index(x), categories.index(y)] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    weights = np.array(
        [[(x - y) ** 2 if quadratic else float(x != y) for y in categories] for x in categories]
    )
    return float(1 - (weights * observed).sum() / (weights * expected).sum())


def two_raters(a: list[float], b: list[float], **more: list[float]) -> pd.DataFrame:
    raters = {"r1": a, "r2": b, **more}
    rows = [
        {"infer_id": f"w{i}", "model": "m", "score": score, "rater": rater}
        for rater, scores in raters.items()
        for i, score in enumerate(scores)
        if score is not None
    ]
    return read_ratings(pd.DataFrame(rows))


def test_cohens_kappa_of_two_raters_worked_by_hand() -> None:
    # five writings, one disagreement (4 vs 5): p_o = 4/5; r1 gives each score once, so
    # p_e = 1/5 whatever r2 gives, and kappa = (0.8 - 0.2) / (1 - 0.2) = 0.75
    agreement = rater_agreement(two_raters([1, 2, 3, 4, 5], [1, 2, 3, 5, 5])).iloc[0]
    assert agreement["mean_pairwise_kappa"] == pytest.approx(0.75)
    # quadratic: observed disagreement 1/5 * 1 point^2; expected: the mean of (i - j)^2
    # over r1 uniform on 1..5 and r2 on 1, 2, 3, 5, 5
    r2 = [1, 2, 3, 5, 5]
    expected = np.mean([(i - j) ** 2 for i in range(1, 6) for j in r2])
    assert agreement["mean_pairwise_quadratic_kappa"] == pytest.approx(1 - (1 / 5) / expected)
    assert agreement["kappa_pairs"] == 1


def test_kappa_counts_in_points_across_a_score_nobody_gave() -> None:
    # nobody gave 3 or 4: a 2-vs-5 disagreement still weighs 9 points^2, not 1 step^2
    r1 = [1, 2, 5, 2, 1, 5, 2, 1]
    r2 = [1, 5, 5, 2, 2, 5, 1, 1]
    agreement = rater_agreement(two_raters(r1, r2)).iloc[0]
    scale = [1, 2, 3, 4, 5]
    assert agreement["mean_pairwise_kappa"] == pytest.approx(kappa_by_hand(r1, r2, scale, False))
    assert agreement["mean_pairwise_quadratic_kappa"] == pytest.approx(
        kappa_by_hand(r1, r2, scale, True)
    )
    # what counting steps between the scores given (1, 2, 5 as 0, 1, 2) would give instead
    steps = {1: 0, 2: 1, 5: 2}
    by_steps = kappa_by_hand([steps[x] for x in r1], [steps[x] for x in r2], [0, 1, 2], True)
    assert agreement["mean_pairwise_quadratic_kappa"] != pytest.approx(by_steps)


def test_kappa_is_the_mean_over_rater_pairs_sharing_three_writings() -> None:
    r1 = [1, 2, 3, 4, 5, 3]
    r2 = [2, 2, 3, 4, 4, 3]
    r3 = [1, 3, 3, 5, 5, 2]
    r4 = [None, None, None, None, 4, 4]  # shares two writings with each: left out
    agreement = rater_agreement(two_raters(r1, r2, r3=r3, r4=r4)).iloc[0]
    scale = [1, 2, 3, 4, 5]
    pairs = [(r1, r2), (r1, r3), (r2, r3)]
    assert agreement["kappa_pairs"] == 3 and agreement["rater_pairs"] == 3
    for name, quadratic in (
        ("mean_pairwise_kappa", False),
        ("mean_pairwise_quadratic_kappa", True),
    ):
        assert agreement[name] == pytest.approx(
            np.mean([kappa_by_hand(a, b, scale, quadratic) for a, b in pairs])
        )


def test_no_kappa_for_scores_that_are_not_whole_numbers() -> None:
    agreement = rater_agreement(two_raters([1.5, 2, 3, 4], [1.5, 2, 3, 3.5])).iloc[0]
    assert agreement["kappa_pairs"] == 0
    assert math.isnan(agreement["mean_pairwise_kappa"])
    assert math.isnan(agreement["mean_pairwise_quadratic_kappa"])
    assert agreement["mean_pairwise_pearson"] == pytest.approx(
        np.corrcoef([1.5, 2, 3, 4], [1.5, 2, 3, 3.5])[0, 1]
    )
