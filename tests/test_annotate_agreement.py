"""Agreement as the studio reports it: pooled over every writing's two ratings, and per
rater against the others (the functions `metaeval` and the admin page share)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from howtobench.studies.ratings import per_rater_agreement, rater_agreement, rating_pairs
from support.kappa import kappa_by_hand

# six writings, each rated by two of three raters; "cy" is the odd one out
RATINGS = [
    ("w1", "ann", 4),
    ("w1", "bo", 4),
    ("w2", "ann", 2),
    ("w2", "bo", 3),
    ("w3", "bo", 5),
    ("w3", "cy", 1),
    ("w4", "cy", 5),
    ("w4", "ann", 2),
    ("w5", "ann", 3),
    ("w5", "bo", 3),
    ("w6", "cy", 2),
    ("w6", "bo", 4),
]


def frame(rows: list[tuple[str, str, int]]) -> pd.DataFrame:
    return pd.DataFrame(
        [{"infer_id": w, "model": "m", "rater": r, "score": float(s)} for w, r, s in rows]
    )


def test_pairs_put_the_rater_whose_name_sorts_first_first() -> None:
    shuffled = frame(RATINGS[::-1])
    pairs = rating_pairs(shuffled).sort_values("infer_id")
    assert list(pairs["rater_a"]) == ["ann", "ann", "bo", "ann", "ann", "bo"]
    assert list(pairs["score_a"]) == [4, 2, 5, 2, 3, 4]
    pd.testing.assert_frame_equal(
        pairs.reset_index(drop=True),
        rating_pairs(frame(RATINGS)).sort_values("infer_id").reset_index(drop=True),
    )


def test_overall_agreement_pools_every_pair() -> None:
    first = [4, 2, 5, 2, 3, 4]
    second = [4, 3, 1, 5, 3, 2]
    labels = [1, 2, 3, 4, 5]
    row = rater_agreement(frame(RATINGS)).iloc[0]
    assert row["rating_pairs"] == 6
    assert row["overall_kappa"] == pytest.approx(kappa_by_hand(first, second, labels, False))
    assert row["overall_quadratic_kappa"] == pytest.approx(
        kappa_by_hand(first, second, labels, True)
    )
    assert row["overall_pearson"] == pytest.approx(np.corrcoef(first, second)[0, 1])
    # the mean over rater pairs needs pairs sharing three writings: only ann and bo do
    assert row["kappa_pairs"] == 1


def test_too_few_pairs_leave_the_overall_figures_blank() -> None:
    row = rater_agreement(frame(RATINGS[:4])).iloc[0]
    assert row["rating_pairs"] == 2
    assert math.isnan(row["overall_kappa"]) and math.isnan(row["overall_pearson"])


def test_each_rater_against_the_others_most_agreeing_first() -> None:
    table = per_rater_agreement(frame(RATINGS))
    assert list(table["rater"])[-1] == "cy"
    by_rater = table.set_index("rater")
    # cy's pairs: (1 vs 5), (5 vs 2), (2 vs 4): differences 4, 3, 2
    assert by_rater.loc["cy", "pairs"] == 3
    assert by_rater.loc["cy", "mean_abs_difference"] == pytest.approx(3.0)
    assert by_rater.loc["cy", "pearson"] == pytest.approx(np.corrcoef([1, 5, 2], [5, 2, 4])[0, 1])
    # ann: w1 (4, 4), w2 (2, 3), w4 (2, 5), w5 (3, 3)
    assert by_rater.loc["ann", "ratings"] == 4
    assert by_rater.loc["ann", "mean_abs_difference"] == pytest.approx(1.0)
    assert by_rater.loc["ann", "quadratic_kappa"] == pytest.approx(
        kappa_by_hand([4, 2, 2, 3], [4, 3, 5, 3], [1, 2, 3, 4, 5], True)
    )
