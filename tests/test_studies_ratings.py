"""Ratings files: a score must be a finite number, and a bad one is named by its line."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from howtobench.cli import main
from howtobench.studies import StudyError, read_ratings
from howtobench.studies.ratings import cohen_kappa, rater_agreement
from support.kappa import kappa_by_hand

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


def test_cohen_kappa_plain_linear_and_quadratic_worked_by_hand() -> None:
    """The kappa function itself (scikit-learn's `cohen_kappa_score`, whose semantics it
    keeps, is no dependency): three items, one rated 2 by the first rater and 3 by the
    second. Margins: p = (1/3, 1/3, 1/3), q = (1/3, 0, 2/3)."""
    a, b, labels = [1, 2, 3], [1, 3, 3], [1, 2, 3]
    # plain: p_o = 2/3, p_e = sum p_i q_i = 1/9 + 0 + 2/9 = 1/3; (2/3 - 1/3) / (1 - 1/3)
    assert cohen_kappa(a, b, labels) == pytest.approx(0.5)
    # linear: observed 1/3 * 1; expected sum p_i q_j |i - j| = (4/3 + 1 + 2/3) / 3 = 1
    assert cohen_kappa(a, b, labels, weights="linear") == pytest.approx(2 / 3)
    # quadratic: observed 1/3 * 1; expected sum p_i q_j (i - j)^2 = (8/3 + 1 + 4/3) / 3
    assert cohen_kappa(a, b, labels, weights="quadratic") == pytest.approx(1 - (1 / 3) / (5 / 3))
    # without labels: the labels given, sorted (here the same three)
    assert cohen_kappa(a, b) == pytest.approx(0.5)


def test_cohen_kappa_gives_scikit_learns_documented_example() -> None:
    """The example of scikit-learn's `cohen_kappa_score` docstring (1.9: 0.6875), and its
    weighted forms as scikit-learn 1.9.1 gives them, worked by hand here too. Labels
    sorted: negative, neutral, positive; the one disagreement (positive vs negative) is
    two positions apart; margins p = (2/5, 1/5, 2/5), q = (3/5, 1/5, 1/5)."""
    y1 = ["negative", "positive", "negative", "neutral", "positive"]
    y2 = ["negative", "positive", "negative", "neutral", "negative"]
    # plain: p_o = 4/5, p_e = (6 + 1 + 2) / 25 = 0.36; (0.8 - 0.36) / 0.64
    assert cohen_kappa(y1, y2) == pytest.approx(0.6875)
    # linear: observed 2/5; expected 0.24 + 0.16 + 0.56 = 0.96
    assert cohen_kappa(y1, y2, weights="linear") == pytest.approx(0.5833333333333333)
    # quadratic: observed 4/5; expected 0.4 + 0.16 + 1.04 = 1.6
    assert cohen_kappa(y1, y2, weights="quadratic") == pytest.approx(0.5)


def test_cohen_kappa_is_nan_where_it_is_undefined_and_refuses_unknown_weights() -> None:
    # one and the same label only: no disagreement to expect
    assert math.isnan(cohen_kappa([3, 3, 3], [3, 3, 3], labels=[1, 2, 3]))
    # a pair with a label outside `labels` is left out (as scikit-learn's): one label left
    assert math.isnan(cohen_kappa([1, 1, 2], [1, 1, 3], labels=[1, 2]))
    assert math.isnan(cohen_kappa([4], [5], labels=[1, 2]))  # no pair left
    with pytest.raises(ValueError, match="weights='squared'"):
        cohen_kappa([1, 2], [1, 2], weights="squared")


@pytest.mark.parametrize("seed", range(5))
def test_cohen_kappa_matches_the_textbook_loop(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a, b = (list(map(int, rng.integers(1, 6, size=40))) for _ in range(2))
    scale = [1, 2, 3, 4, 5]
    assert cohen_kappa(a, b, scale) == pytest.approx(kappa_by_hand(a, b, scale, False))
    assert cohen_kappa(a, b, scale, weights="quadratic") == pytest.approx(
        kappa_by_hand(a, b, scale, True)
    )


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
