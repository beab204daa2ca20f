"""Human ratings: reading them, averaging raters per writing, and how well raters agree.

The file's format is docs/studies.md's; other columns (the rating studio's export adds
`errors` and `note`) are read past. Each rating keeps the line it was read from, so that
a bad one is named by it; a score that is no finite number is refused: a mean over it is
no mean.
"""

from __future__ import annotations

import csv
import itertools
import math
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from howtobench.dataset.records import DataError, read_jsonl
from howtobench.studies.correlation import MIN_PAIRS
from howtobench.studies.log_files import StudyError
from howtobench.studies.logs import Samples
from howtobench.studies.runs import first_few

__all__ = [
    "check_known",
    "cohen_kappa",
    "human_scores",
    "per_rater_agreement",
    "pooled_agreement",
    "rater_agreement",
    "rating_pairs",
    "read_ratings",
]

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
        lines = [(line, {key: obj.get(key) for key in columns}) for line, obj in numbered]
    else:
        try:
            with path.open(encoding="utf-8-sig", newline="") as f:
                reader = csv.DictReader(f, skipinitialspace=True)
                lines = [(reader.line_num, row) for row in reader]
                columns = list(reader.fieldnames or [])
        except (UnicodeDecodeError, csv.Error) as err:
            raise StudyError(f"{path}: cannot read the ratings as UTF-8 CSV ({err})") from err
    frame = pd.DataFrame([row for _, row in lines], columns=columns, dtype=object)
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
    if missing and "choice" in frame.columns:
        raise StudyError(
            f"{source}: the choices of a pick campaign (column choice), not ratings; "
            "correlations need the scores of a rate campaign"
        )
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
PER_RATER: tuple[str, ...] = (
    "rater",
    "ratings",
    "pairs",
    "mean_abs_difference",
    "pearson",
    "kappa",
    f"{KAPPA_WEIGHTS}_kappa",
)


def cohen_kappa(
    a: Sequence[Hashable] | np.ndarray,
    b: Sequence[Hashable] | np.ndarray,
    labels: Sequence[Hashable] | None = None,
    weights: str | None = None,
) -> float:
    """Cohen's kappa between two raters' labels of the same items, as scikit-learn's
    `cohen_kappa_score` computes it (scikit-learn is no dependency), with `weights` None,
    `"linear"` or `"quadratic"`; a pair with a label outside `labels` is left out. NaN where
    kappa is undefined: no pair left, or no disagreement to expect.
    """
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights={weights!r}: None, 'linear' or 'quadratic'")
    chosen = sorted(set(a) | set(b)) if labels is None else list(labels)
    position = {label: i for i, label in enumerate(chosen)}
    observed = np.zeros((len(chosen), len(chosen)))
    for x, y in zip(a, b, strict=True):
        if x in position and y in position:
            observed[position[x], position[y]] += 1
    if not observed.any():
        return math.nan
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    steps = np.arange(len(chosen))
    distance = np.abs(np.subtract.outer(steps, steps)).astype(float)
    weight = {None: distance > 0, "linear": distance, "quadratic": distance**2}[weights]
    disagreement = float((weight * expected).sum())
    if disagreement == 0:
        return math.nan
    return 1 - float((weight * observed).sum()) / disagreement


def _categories(scores: pd.Series) -> list[float]:
    """Kappa's categories: every whole number from the lowest score to the highest, so
    that a weight is the distance in points even across a score nobody gave; none (no
    kappa) when a score is not a whole number."""
    if not (scores == scores.round()).all():
        return []
    return [float(v) for v in range(int(scores.min()), int(scores.max()) + 1)]


def _statistics(a: np.ndarray, b: np.ndarray, labels: list[float]) -> tuple[float, float, float]:
    """Pearson, Cohen's kappa and quadratic-weighted kappa between two columns of scores
    of the same writings, each NaN where it is undefined: fewer than three writings, a
    column without variation (Pearson), a score between categories (kappa; a rater's
    mean of two ratings of one writing may fall there)."""
    if len(a) < MIN_PAIRS:
        return math.nan, math.nan, math.nan
    pearson = float(np.corrcoef(a, b)[0, 1]) if a.std() > 0 and b.std() > 0 else math.nan
    whole = bool(labels) and bool((a == a.round()).all() and (b == b.round()).all())
    if not whole:
        return pearson, math.nan, math.nan
    return pearson, cohen_kappa(a, b, labels), cohen_kappa(a, b, labels, weights=KAPPA_WEIGHTS)


def rating_pairs(ratings: pd.DataFrame) -> pd.DataFrame:
    """Every two ratings of one writing, one row each, the first by the rater whose name
    sorts first (unnamed ratings in the order given), so that the pooled statistics do not
    depend on the file's order."""
    columns = ["infer_id", "model", "rater", "score"]
    ordered = ratings[columns].sort_values("rater", kind="stable").reset_index(drop=True)
    ordered["rank"] = ordered.groupby(["infer_id", "model"], sort=False).cumcount()
    both = ordered.merge(ordered, on=["infer_id", "model"], suffixes=("_a", "_b"))
    both = both[both["rank_a"] < both["rank_b"]]
    both = both.sort_values(["infer_id", "model", "rank_a", "rank_b"], kind="stable")
    kept = ["infer_id", "model", "rater_a", "score_a", "rater_b", "score_b"]
    return both[kept].astype({"score_a": float, "score_b": float}).reset_index(drop=True)


def pooled_agreement(ratings: pd.DataFrame) -> dict[str, float]:
    """Agreement over every writing's two ratings pooled (`rating_pairs`), as the paper
    reports one figure for a campaign in which every instruction has its own two raters
    and two raters share few writings."""
    pairs = rating_pairs(ratings)
    first, second = pairs["score_a"].to_numpy(), pairs["score_b"].to_numpy()
    diffs = np.abs(first - second)
    pearson, kappa, weighted = _statistics(first, second, _categories(ratings["score"]))
    return {
        "rating_pairs": len(pairs),
        "pearson": pearson,
        "kappa": kappa,
        f"{KAPPA_WEIGHTS}_kappa": weighted,
        "mean_abs_difference": float(diffs.mean()) if len(diffs) else math.nan,
        "exact_agreement": float((diffs == 0).mean()) if len(diffs) else math.nan,
    }


def rater_agreement(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row: Pearson, Cohen's kappa and its quadratic form averaged over every pair of
    raters sharing at least three writings, and over all ratings pooled (`pooled_agreement`)."""
    named = ratings[ratings["rater"] != ""]  # a rater's ratings of one writing averaged
    table = named.pivot_table(
        index=["infer_id", "model"], columns="rater", values="score", aggfunc="mean"
    ).to_numpy(dtype=float)
    rated = ~np.isnan(table)
    labels = _categories(ratings["score"])
    found = []
    for a, b in itertools.combinations(range(table.shape[1]), 2):
        both = rated[:, a] & rated[:, b]
        if both.sum() >= MIN_PAIRS:
            found.append(_statistics(table[both, a], table[both, b], labels))
    pearsons = [p for p, _, _ in found if not math.isnan(p)]
    kappas = [(k, w) for _, k, w in found if not math.isnan(k)]
    pooled = pooled_agreement(ratings)
    counts = ratings.groupby(["infer_id", "model"], sort=False).size()
    return pd.DataFrame(
        {
            "raters": [int((ratings["rater"].unique() != "").sum())],
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
            "rating_pairs": [pooled["rating_pairs"]],
            "overall_pearson": [pooled["pearson"]],
            "overall_kappa": [pooled["kappa"]],
            f"overall_{KAPPA_WEIGHTS}_kappa": [pooled[f"{KAPPA_WEIGHTS}_kappa"]],
            "mean_abs_difference": [pooled["mean_abs_difference"]],
            "exact_agreement": [pooled["exact_agreement"]],
        }
    )


def per_rater_agreement(ratings: pd.DataFrame) -> pd.DataFrame:
    """Each named rater against whoever else rated the same writings (pairs: ratings of
    theirs that another rating shares a writing with), most agreeing first: the paper had
    the raters who agreed best with the others re-check every rating (section 5.2)."""
    pairs = rating_pairs(ratings[ratings["rater"] != ""])
    mine = pd.concat(
        [
            pairs.rename(columns={"rater_a": "rater", "score_a": "own", "score_b": "other"}),
            pairs.rename(columns={"rater_b": "rater", "score_b": "own", "score_a": "other"}),
        ]
    )
    labels = _categories(ratings["score"])
    rows = []
    for rater, count in ratings[ratings["rater"] != ""].groupby("rater").size().items():
        own = mine[mine["rater"] == rater]
        pearson, kappa, weighted = _statistics(
            own["own"].to_numpy(), own["other"].to_numpy(), labels
        )
        rows.append(
            {
                "rater": rater,
                "ratings": int(count),
                "pairs": len(own),
                "mean_abs_difference": float((own["own"] - own["other"]).abs().mean()),
                "pearson": pearson,
                "kappa": kappa,
                f"{KAPPA_WEIGHTS}_kappa": weighted,
            }
        )
    table = pd.DataFrame(rows, columns=list(PER_RATER))
    return table.sort_values(
        [f"{KAPPA_WEIGHTS}_kappa", "mean_abs_difference"], ascending=[False, True]
    ).reset_index(drop=True)
