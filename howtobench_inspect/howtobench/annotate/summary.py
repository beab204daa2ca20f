"""What the admin page shows: progress, agreement so far, and what to re-check. Agreement
is the studies' own (`studies.ratings`), so the admin page and `howtobench metaeval` on
the export agree.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from typing import Any

import pandas as pd

from howtobench.annotate.store import Settings, Store
from howtobench.studies.ratings import per_rater_agreement, pooled_agreement, rating_pairs

__all__ = ["summary"]

RECHECK_GAP = 2  # points between two ratings of one writing that call for a re-check


def _plain(value: Any) -> Any:
    """JSON has no NaN: an undefined statistic is null."""
    if isinstance(value, float) and math.isnan(value):
        return None
    return value.item() if hasattr(value, "item") else value


def _rate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    if not rows:
        return {"agreement": None, "per_rater": [], "disagreements": []}
    frame = pd.DataFrame(rows)
    pairs = rating_pairs(frame)
    far = pairs[(pairs["score_a"] - pairs["score_b"]).abs() >= RECHECK_GAP]
    tasks = dict(zip(frame["infer_id"], frame["task"], strict=False))
    return {
        "agreement": {key: _plain(value) for key, value in pooled_agreement(frame).items()},
        "per_rater": json.loads(per_rater_agreement(frame).to_json(orient="records")),
        "disagreements": [
            {
                "infer_id": row.infer_id,
                "task": tasks[row.infer_id],
                "model": row.model,
                "ratings": f"{row.rater_a}: {row.score_a:g}, {row.rater_b}: {row.score_b:g}",
                "gap": float(abs(row.score_a - row.score_b)),
            }
            for row in far.itertuples()
        ],
    }


def _pick(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by_instruction: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_instruction.setdefault(row["infer_id"], []).append(row)
    shared = {key: group for key, group in by_instruction.items() if len(group) >= 2}
    same = [key for key, group in shared.items() if len({row["choice"] for row in group}) == 1]
    choices = Counter(row["choice"] for row in rows)
    return {
        "agreement": {
            "instructions_picked_twice": len(shared),
            "same_choice": len(same) / len(shared) if shared else None,
            "chosen": dict(choices.most_common()),
        },
        "per_rater": [],
        "disagreements": [
            {
                "infer_id": key,
                "task": group[0]["task"],
                "choices": ", ".join(f"{row['rater']}: {row['choice']}" for row in group),
            }
            for key, group in shared.items()
            if key not in same
        ],
    }


def summary(store: Store, settings: Settings) -> dict[str, Any]:
    """The admin page's data (the admin may see model names; raters never get this)."""
    found = _rate(store.ratings()) if settings.kind == "rate" else _pick(store.picks())
    return {"kind": settings.kind, "progress": store.progress(), **found}
