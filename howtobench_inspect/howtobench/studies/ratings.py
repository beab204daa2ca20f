"""Human ratings: reading them, averaging raters per writing, and how well raters agree.

A ratings file is CSV or JSONL (by its suffix) with the columns `infer_id`, `model`,
`score` and optionally `rater`, one row per rating. Each rating keeps the line it was
read from, so that a bad one is named by its line; a score must be a finite number
(NaN, infinities, text and empty cells are refused: a mean over them is no mean).
"""

from __future__ import annotations

import csv
import itertools
import math
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from howtobench.dataset import DataError, read_jsonl
from howtobench.studies.correlation import MIN_PAIRS
from howtobench.studies.logs import Samples, StudyError, first_few

REQUIRED: tuple[str, ...] = ("infer_id", "model", "score")


def read_ratings(source: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Ratings with string ids and models, float scores and a `rater` column ("" if none)."""
    if isinstance(source, pd.DataFrame):
        frame = source.reset_index(drop=True)
        return _checked(frame, "ratings", [f"row {i}" for i in range(1, len(frame) + 1)])
    path = Path(source)
    if not path.is_file():
        raise StudyError(f"{path}: ratings file not found")
    if path.suffix.lower() in (".jsonl", ".json"):
        try:
            numbered = list(read_jsonl(path))
        except DataError as err:
            raise StudyError(str(err)) from err
        columns = list(dict.fromkeys(key for _, obj in numbered for key in obj))
        # None, not NaN, for a field a record lacks: it reads as "missing"
        rows = [[obj.get(key) for key in columns] for _, obj in numbered]
        frame = pd.DataFrame(rows, columns=columns, dtype=object)
        return _checked(frame, str(path), [f"line {line}" for line, _ in numbered])
    try:
        with path.open(encoding="utf-8-sig", newline="") as f:
            reader = csv.DictReader(f, skipinitialspace=True)
            lines = [(reader.line_num, row) for row in reader]
            fields = list(reader.fieldnames or [])
    except (UnicodeDecodeError, csv.Error) as err:
        raise StudyError(f"{path}: cannot read the ratings as UTF-8 CSV ({err})") from err
    frame = pd.DataFrame([row for _, row in lines], columns=fields, dtype=object)
    return _checked(frame, str(path), [f"line {line}" for line, _ in lines])


def _score(value: Any) -> float | None:
    """The value as a finite float, or None."""
    if isinstance(value, bool) or value is None:
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _checked(frame: pd.DataFrame, source: str, where: list[str]) -> pd.DataFrame:
    """The ratings, or a `StudyError` naming the first bad line (`where[i]` is row i's)."""
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise StudyError(
            f"{source}: missing column(s) {', '.join(missing)} (a ratings file needs "
            f"infer_id, model, score and optionally rater; found: {', '.join(map(str, frame.columns))})"
        )
    if frame.empty:
        raise StudyError(f"{source}: no ratings in it")
    scores = [_score(value) for value in frame["score"]]
    bad = [i for i, score in enumerate(scores) if score is None]
    if bad:
        value = frame["score"].iloc[bad[0]]
        blank = value is None or (isinstance(value, str) and not value.strip())  # cell empty
        shown = repr(value) if isinstance(value, str) else str(value)
        what = "is missing" if blank else f"{shown} is not a finite number"
        more = f" (also {first_few(where[i] for i in bad[1:])})" if len(bad) > 1 else ""
        raise StudyError(f"{source}, {where[bad[0]]}, field 'score': {what}; give a number{more}")
    ids = frame[["infer_id", "model"]].map(lambda v: bool(pd.isna(v)) or not str(v).strip())
    empty = [where[i] for i in np.flatnonzero(ids.any(axis=1).to_numpy())]
    if empty:
        raise StudyError(f"{source}: infer_id or model missing on {first_few(empty)}")
    rater = frame["rater"].fillna("").astype(str) if "rater" in frame else ""
    return pd.DataFrame(
        {
            "infer_id": frame["infer_id"].astype(str).str.strip(),
            "model": frame["model"].astype(str).str.strip(),
            "score": np.array(scores, dtype=float),
            "rater": rater,
        }
    )


def check_known(ratings: pd.DataFrame, samples: Samples) -> None:
    """Every rated (infer_id, model) must be a writing of some log."""
    known = set(zip(samples.frame["id"], samples.frame["model"], strict=True))
    rated = ratings[["infer_id", "model"]].drop_duplicates()
    unknown = [(i, m) for i, m in rated.itertuples(index=False) if (i, m) not in known]
    if unknown:
        models = sorted(set(samples.frame["model"]))
        raise StudyError(
            f"{len(unknown)} rated (infer_id, model) pair(s) are in no log: "
            f"{first_few(f'({i}, {m})' for i, m in unknown)}; models in the logs: {', '.join(models)}"
        )


def human_scores(ratings: pd.DataFrame) -> pd.DataFrame:
    """One human score per writing: the mean over its raters (columns id, model, human)."""
    means = ratings.groupby(["infer_id", "model"], sort=False)["score"].mean()
    return means.rename("human").reset_index().rename(columns={"infer_id": "id"})


# Weighted kappa's weights: quadratic, so that a two-point disagreement on the 1-5 scale
# costs four times a one-point one; with them kappa approaches the intraclass
# correlation (Fleiss and Cohen 1973), comparable with the Pearson the paper reports
# beside its kappa (section 5.2: kappa 0.71, Pearson 0.87), and it is the usual choice
# for ordinal quality scores.
KAPPA_WEIGHTS = "quadratic"


def _kappas(a: pd.Series, b: pd.Series, labels: list[float]) -> tuple[float, float]:
    """Cohen's kappa and its quadratic-weighted form between two raters' scores."""
    # imported here: scikit-learn's metrics take a second to import, which every other
    # study would pay for
    from sklearn.metrics import cohen_kappa_score

    # both raters giving one and the same score only: kappa is undefined, and NaN (left
    # out of the mean) rather than a warning
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (
            float(cohen_kappa_score(a, b, labels=labels)),
            float(cohen_kappa_score(a, b, labels=labels, weights=KAPPA_WEIGHTS)),
        )


def rater_agreement(ratings: pd.DataFrame) -> pd.DataFrame:
    """Simple agreement statistics, one row.

    - rater pairs / mean pairwise Pearson: Pearson between two raters over the writings
      both rated, for every pair of raters sharing at least three writings (with
      variation), averaged with equal weight per pair;
    - mean pairwise kappa / weighted kappa: Cohen's kappa (paper section 5.2) and its
      quadratic-weighted form (see `KAPPA_WEIGHTS`), per pair of raters sharing at least
      three writings, averaged alike. The categories are every whole number from the
      lowest score given to the highest (so that a weight is the distance in points,
      even across a score nobody gave); with scores that are not whole numbers kappa
      has no categories and is NaN;
    - mean |difference| and exact agreement: over every two ratings of the same writing.
    """
    by_writing = ratings.groupby(["infer_id", "model"], sort=False)["score"]
    diffs = [
        abs(a - b)
        for scores in by_writing
        for a, b in itertools.combinations(scores[1].to_numpy(), 2)
    ]
    raters = sorted(r for r in ratings["rater"].unique() if r)
    table = ratings[ratings["rater"] != ""].pivot_table(
        index=["infer_id", "model"], columns="rater", values="score", aggfunc="mean"
    )
    whole = bool((ratings["score"] == ratings["score"].round()).all())
    labels = (
        [float(v) for v in range(int(ratings["score"].min()), int(ratings["score"].max()) + 1)]
        if whole
        else []
    )
    pearsons: list[float] = []
    kappas: list[tuple[float, float]] = []
    for a, b in itertools.combinations(raters, 2):
        both = table[[a, b]].dropna()
        if len(both) < MIN_PAIRS:
            continue
        if both[a].std() > 0 and both[b].std() > 0:
            pearsons.append(float(np.corrcoef(both[a], both[b])[0, 1]))
        # a rater's mean of two ratings of one writing may fall between categories
        if labels and (both == both.round()).all().all():
            kappas.append(_kappas(both[a], both[b], labels))
    kappas = [k for k in kappas if not np.isnan(k[0])]
    counts = by_writing.size()
    return pd.DataFrame(
        {
            "raters": [len(raters)],
            "ratings": [len(ratings)],
            "writings": [len(counts)],
            "writings_rated_twice_or_more": [int((counts >= 2).sum())],
            "rater_pairs": [len(pearsons)],
            "mean_pairwise_pearson": [float(np.mean(pearsons)) if pearsons else np.nan],
            "kappa_pairs": [len(kappas)],
            "mean_pairwise_kappa": [float(np.mean([k for k, _ in kappas])) if kappas else np.nan],
            f"mean_pairwise_{KAPPA_WEIGHTS}_kappa": [
                float(np.mean([w for _, w in kappas])) if kappas else np.nan
            ],
            "mean_abs_difference": [float(np.mean(diffs)) if diffs else np.nan],
            "exact_agreement": [float(np.mean([d == 0 for d in diffs])) if diffs else np.nan],
        }
    )
