"""Writers are ranked on one scale only when one set of weights judged them all.

ToW's weights are a property of the instruction: a writer judged with other weights for
it (another plan, or a negotiation that came out otherwise on another host) is on another
scale, so `report` and `metaeval` refuse such logs instead of ranking them.
"""

from __future__ import annotations

import pandas as pd

from howtobench.studies.log_files import StudyError
from howtobench.studies.runs import first_few

__all__ = ["check_one_weighting"]


def check_one_weighting(frame: pd.DataFrame) -> None:
    """Refuse writers judged from different plans, with different weights for one
    instruction or by different formatting rules; logs without fingerprints pass."""
    judged = frame[frame["weights_fingerprint"].notna()]
    if judged.empty:
        return
    # a log from before `-T formatting` was scored by the lenient rule, the only one then
    rule = judged["formatting"].fillna("lenient")
    if rule.nunique() > 1:
        rules = rule.groupby(judged["model"], sort=True).unique()
        named = first_few((f"{model}: {', '.join(sorted(r))}" for model, r in rules.items()), 4)
        raise StudyError(
            f"the logs' ToW scores use different formatting rules ({named}): a leaderboard "
            "compares writers scored by one rule; rescore with one -T formatting="
        )
    plans = judged[judged["plan"].notna()].groupby("plan", sort=False)["log"].first()
    if len(plans) > 1:
        named = first_few((f"{digest[:12]} ({log})" for digest, log in plans.items()), 3)
        raise StudyError(
            f"the logs were scored from {len(plans)} different plans ({named}): a leaderboard "
            "compares writers judged with one plan; report each plan's logs apart"
        )
    per_model = judged.groupby(["task", "id", "model"], sort=False)["weights_fingerprint"].agg(
        lambda prints: ", ".join(sorted(set(prints)))
    )
    clashes = []
    for (task, sample_id), part in per_model.groupby(level=["task", "id"], sort=False):
        if part.nunique() > 1:
            models = "; ".join(f"{model}: {prints}" for (_, _, model), prints in part.items())
            clashes.append(f"{task}/{sample_id} ({models})")
    if clashes:
        raise StudyError(
            f"{len(clashes)} instruction(s) were judged with different weights for different "
            f"writers (weights fingerprints per writer): {first_few(clashes, 3)}; their writers "
            "cannot be ranked on one scale. Negotiate once (howtobench/negotiate), export a "
            "plan (howtobench plan export) and score every writer with -T weights=PLAN.jsonl"
        )
