"""`judge-check --against LOGS`: does this judge agree with a judge you trust, whose ToW
logs of the same stored writings are the reference? Reported, not ruled on: how close is
close enough depends on the reference. The check replays one writer, so no ranking of
systems is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from howtobench.studies.correlation import MIN_PAIRS, correlate
from howtobench.studies.log_files import StudyError
from howtobench.studies.logs import WRITING, Samples, as_samples, per_writing
from howtobench.studies.runs import first_few
from howtobench.vocabulary.rounding import rounded

__all__ = ["Agreement", "agree", "agreement_json", "read_reference", "render_agreement"]

METRIC = "tow.overall"


@dataclass(frozen=True)
class Reference:
    """The reference judge's scores, one per writing (`model`, `task`, `id`, `score`)."""

    judges: list[str]  # the reference logs' graders
    scores: pd.DataFrame


@dataclass(frozen=True)
class Agreement:
    """This judge against the reference, over the writings both scored."""

    judges: list[str]
    writings: int
    pearson: float | None
    pearson_p: float | None
    kendall: float | None
    kendall_p: float | None
    mean_difference: float | None  # this judge minus the reference


def read_reference(paths: Sequence[str], writer: str, tasks: Sequence[str]) -> Reference:
    """The reference's scores of `writer`'s writings of `tasks`; read before the check
    asks anything, so a log that cannot serve is a one-line `StudyError` (status 2)."""
    try:
        samples = as_samples(paths)
        samples.require(METRIC)
    except StudyError as error:
        raise StudyError(f"--against: {error}") from None
    frame = samples.frame
    clean = _undamaged(frame)
    clean = clean[(clean["model"] == writer) & clean["task"].isin(tasks)]
    if clean[METRIC].notna().sum() == 0:
        writers = sorted(set(frame["model"]))
        raise StudyError(
            f"--against: no undamaged writing of {writer} ({', '.join(tasks)}) "
            f"is scored there (its writers: {first_few(writers)}): give the --replay and "
            "--tasks of that run"
        )
    return Reference(sorted(set(clean["grader"])), _scores(Samples(clean, samples.metrics)))


def agree(logs: Sequence[str | Path], reference: Reference) -> Agreement:
    """The check's own scores of its originals against the reference's."""
    samples = as_samples(logs)
    ours = _scores(Samples(_undamaged(samples.frame), samples.metrics))
    both = ours.merge(reference.scores, on=list(WRITING), suffixes=("", " reference"))
    x, y = both["score"].to_numpy(float), both["score reference"].to_numpy(float)
    found = correlate(x, y)
    return Agreement(
        reference.judges,
        len(both),
        _number(found["pearson"]),
        _number(found["pearson_p"]),
        _number(found["kendall"]),
        _number(found["kendall_p"]),
        rounded(float(np.mean(x - y))) if len(both) else None,
    )


def _undamaged(frame: pd.DataFrame) -> pd.DataFrame:
    """The samples of runs without `perturb` (a missing one reads back as None or NaN)."""
    return frame[frame["perturb"].map(lambda p: not (isinstance(p, str) and p.strip()))]


def _scores(samples: Samples) -> pd.DataFrame:
    if METRIC not in samples.metrics:
        return pd.DataFrame(columns=[*WRITING, "score"])
    table = per_writing(samples, [METRIC]).dropna(subset=[METRIC])
    return table[[*WRITING, METRIC]].rename(columns={METRIC: "score"})


def _number(value: float) -> float | None:
    return None if np.isnan(value) else rounded(float(value))


def render_agreement(agreement: Agreement) -> str:
    """One line for the report."""
    who = ", ".join(agreement.judges)
    if agreement.pearson is None or agreement.kendall is None:
        return (
            f"agreement with {who}: {agreement.writings} writings in common, too few or "
            f"too alike to correlate (at least {MIN_PAIRS}, with different scores)"
        )
    return (
        f"agreement with {who} over {agreement.writings} writings: Pearson "
        f"{agreement.pearson:.2f}, Kendall {agreement.kendall:.2f}; this judge "
        f"{agreement.mean_difference or 0:+.2f} on average"
    )


def agreement_json(agreement: Agreement) -> dict[str, Any]:
    found = asdict(agreement)
    return {"reference": found.pop("judges"), "metric": METRIC, **found}
