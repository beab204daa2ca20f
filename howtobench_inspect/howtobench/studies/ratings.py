"""Human ratings: reading them, averaging raters per writing, and how well raters agree.

A ratings file is CSV or JSONL (by its suffix) with the columns `infer_id`, `model`,
`score` and optionally `rater`, one row per rating.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from howtobench.studies.correlation import MIN_PAIRS
from howtobench.studies.logs import Samples, StudyError, first_few

REQUIRED: tuple[str, ...] = ("infer_id", "model", "score")


def read_ratings(source: str | Path | pd.DataFrame) -> pd.DataFrame:
    """Ratings with string ids and models, float scores and a `rater` column ("" if none)."""
    if isinstance(source, pd.DataFrame):
        return _checked(source.copy(), "ratings", first_line=1)
    path = Path(source)
    if not path.is_file():
        raise StudyError(f"{path}: ratings file not found")
    jsonl = path.suffix.lower() in (".jsonl", ".json")
    try:
        if jsonl:
            frame = pd.read_json(path, lines=True, dtype=False)
        else:
            frame = pd.read_csv(path, dtype=str, skipinitialspace=True)
    except (ValueError, pd.errors.ParserError) as err:
        raise StudyError(f"{path}: cannot read the ratings ({err})") from err
    return _checked(frame, str(path), first_line=1 if jsonl else 2)


def _checked(frame: pd.DataFrame, source: str, first_line: int) -> pd.DataFrame:
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise StudyError(
            f"{source}: missing column(s) {', '.join(missing)} (a ratings file needs "
            f"infer_id, model, score and optionally rater; found: {', '.join(map(str, frame.columns))})"
        )
    if frame.empty:
        raise StudyError(f"{source}: no ratings in it")
    scores = pd.to_numeric(frame["score"], errors="coerce")
    bad = [first_line + i for i in np.flatnonzero(scores.isna())]
    if bad:
        raise StudyError(f"{source}: score missing or not a number on line(s) {first_few(bad)}")
    empty = [
        first_line + i for i in np.flatnonzero(frame[["infer_id", "model"]].isna().any(axis=1))
    ]
    if empty:
        raise StudyError(f"{source}: infer_id or model missing on line(s) {first_few(empty)}")
    rater = frame["rater"].fillna("").astype(str) if "rater" in frame else ""
    return pd.DataFrame(
        {
            "infer_id": frame["infer_id"].astype(str).str.strip(),
            "model": frame["model"].astype(str).str.strip(),
            "score": scores.astype(float),
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


def rater_agreement(ratings: pd.DataFrame) -> pd.DataFrame:
    """Simple agreement statistics, one row.

    - rater pairs / mean pairwise Pearson: Pearson between two raters over the writings
      both rated, for every pair of raters sharing at least three writings (with
      variation), averaged with equal weight per pair;
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
    pearsons = []
    for a, b in itertools.combinations(raters, 2):
        both = table[[a, b]].dropna()
        if len(both) >= MIN_PAIRS and both[a].std() > 0 and both[b].std() > 0:
            pearsons.append(float(np.corrcoef(both[a], both[b])[0, 1]))
    counts = by_writing.size()
    return pd.DataFrame(
        {
            "raters": [len(raters)],
            "ratings": [len(ratings)],
            "writings": [len(counts)],
            "writings_rated_twice_or_more": [int((counts >= 2).sum())],
            "rater_pairs": [len(pearsons)],
            "mean_pairwise_pearson": [float(np.mean(pearsons)) if pearsons else np.nan],
            "mean_abs_difference": [float(np.mean(diffs)) if diffs else np.nan],
            "exact_agreement": [float(np.mean([d == 0 for d in diffs])) if diffs else np.nan],
        }
    )
