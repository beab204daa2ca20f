"""Fluctuation of the aggregation across repeated judge runs (paper section 5.3).

For each sample judged in N epochs t = 1..N (in epoch order), and each share k (a ToW
leaf weight w_k, or an autoplan sub-score share l_k = s_k / S):

    delta_k = sum_{t=2..N} |l_k(t) - l_k(1)|
    sigma_k = sqrt( sum_{t=1..N} (l_k(t) - mu_k)^2 ),   mu_k = mean of l_k over the N runs

exactly as in the paper (sigma is not divided by N). A sample's delta and sigma are the
means over its keys (a key missing from a run counts as share 0 there); a table cell is
the mean over samples. Epochs without shares, and samples left with fewer than two, are
left out and counted. Samples whose weights were reused by design (δ = σ = 0) are
counted in `reused_weights`, and a note says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from howtobench.studies.log_files import StudyError
from howtobench.studies.logs import Samples, as_samples, scopes
from howtobench.studies.runs import first_few
from howtobench.studies.tables import StudyResult
from howtobench.vocabulary.metadata import ScoreKey

__all__ = ["consistency", "fluctuation"]

SOURCES: dict[str, str] = {"tow": ScoreKey.WEIGHTS, "autoplan": ScoreKey.SHARES}


def fluctuation(runs: Sequence[dict[str, float]]) -> pd.DataFrame:
    """delta and sigma per key (rows) of one sample's runs, in run order."""
    keys = list(dict.fromkeys(k for run in runs for k in run))
    shares = np.array([[float(run.get(k, 0.0)) for k in keys] for run in runs])
    delta = np.abs(shares[1:] - shares[0]).sum(axis=0)
    sigma = np.sqrt(((shares - shares.mean(axis=0)) ** 2).sum(axis=0))
    return pd.DataFrame({"delta": delta, "sigma": sigma}, index=pd.Index(keys, name="key"))


def _reused(rows: pd.DataFrame) -> bool:
    """The sample's weights were reused across epochs by the run's setting (or, in a log
    that does not record the setting, by the negotiator's own account)."""
    setting = rows["reuse_weights"].iloc[0]
    if isinstance(setting, bool | np.bool_):
        return bool(setting)
    return bool(rows["reused"].map(lambda reused: reused is True).any())


def consistency(logs: Samples | Sequence[str | Path]) -> StudyResult:
    """Tables `summary` (per source and task: samples, epochs, mean delta and sigma) and
    `keys` (per source and key)."""
    samples = as_samples(logs)
    frame = samples.frame
    epochs = frame.groupby(["run", "id"], sort=False)["epoch"].nunique()
    single = epochs[epochs < 2]
    if len(single):
        raise StudyError(
            f"consistency needs repeated judge runs (--epochs 2 or more); {len(single)} "
            f"sample(s) have one epoch: {first_few(f'{Path(log).name}: {i}' for log, i in single.index)}"
        )
    summary, per_key, notes = [], [], samples.notes()
    for source, column in SOURCES.items():
        present = frame[frame[column].notna()]
        if present.empty:
            continue
        missing = len(frame) - len(present)
        per_sample = [
            fluctuation(list(rows[column]))
            .assign(
                task=rows["task"].iloc[0],
                sample=f"{run}:{sample_id}",
                runs=len(rows),
                reused=source == "tow" and _reused(rows),
            )
            .reset_index()
            for (run, sample_id), rows in present.sort_values("epoch").groupby(["run", "id"])
            if len(rows) > 1
        ]
        left_out = present.groupby(["run", "id"]).ngroups - len(per_sample)
        if missing or left_out:
            notes.append(
                f"{source}: left out {missing} epoch(s) without {column} and "
                f"{left_out} sample(s) with fewer than two epochs left"
            )
        if not per_sample:
            continue
        keyed = pd.concat(per_sample, ignore_index=True)
        by_sample = keyed.groupby(["sample", "task", "runs", "reused"], as_index=False)[
            ["delta", "sigma"]
        ].mean()
        reused = int(by_sample["reused"].sum())
        if reused:
            notes.append(
                f"tow: {reused} of {len(by_sample)} sample(s) reuse their instruction's weights "
                "across epochs (the scorer's default reuse_weights=true negotiates once per "
                "instruction): their delta = sigma = 0 of the weights is by design, not a "
                "finding; run with -T reuse_weights=false to measure the negotiator's fluctuation"
            )
        for scope in scopes(by_sample["task"]):
            part = by_sample if scope == "all" else by_sample[by_sample["task"] == scope]
            runs = sorted(set(part["runs"]))
            summary.append(
                {
                    "source": source,
                    "task": scope,
                    "samples": len(part),
                    "epochs": str(runs[0]) if len(runs) == 1 else f"{runs[0]}-{runs[-1]}",
                    "delta": part["delta"].mean(),
                    "sigma": part["sigma"].mean(),
                    "reused_weights": int(part["reused"].sum()) if source == "tow" else None,
                }
            )
        means = keyed.groupby("key", sort=False)[["delta", "sigma"]].mean()
        counts = keyed.groupby("key", sort=False)["sample"].nunique()
        per_key.append(means.assign(samples=counts).reset_index().assign(source=source))
    if not summary:
        raise StudyError(
            "consistency needs ToW weights (tow score metadata 'weights') or autoplan shares "
            "(autoplan score metadata 'shares'); the logs have neither"
        )
    keys = pd.concat(per_key, ignore_index=True)[["source", "key", "samples", "delta", "sigma"]]
    return StudyResult("consistency", {"summary": pd.DataFrame(summary), "keys": keys}, notes=notes)
