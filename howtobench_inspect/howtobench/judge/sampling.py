"""Self-consistency for any judge scorer: n samples of the judge per writing, reduced by mean.

Each sample runs the scorer's whole judging once, with its own index in a context
variable, so its generate-cache key differs (`cache_policy`) and a repeated run still
reuses every sample. The spread (population standard deviation per score key) and every
sample's value are recorded in the metadata.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from statistics import fmean, pstdev
from typing import Any

from inspect_ai.model import CachePolicy
from inspect_ai.scorer import Score
from inspect_ai.util import collect

SAMPLE_INDEX: ContextVar[int] = ContextVar("judge_sample", default=0)


def cache_policy(cache: bool, per_epoch: bool = True) -> CachePolicy | bool:
    """The generate cache of one judge question (no expiry; one entry per judge sample)."""
    if not cache:
        return False
    index = SAMPLE_INDEX.get()
    scopes = {"judge_sample": str(index)} if index else {}
    return CachePolicy(expiry=None, per_epoch=per_epoch, scopes=scopes)


def default_temperature(samples: int, temperature: float | None) -> float:
    """0 (deterministic) for one judge sample; sampling needs spread, so 0.7 for several."""
    if temperature is not None:
        return temperature
    return 0.0 if samples <= 1 else 0.7


def _values(score: Score) -> dict[str, float] | None:
    value = score.value
    if isinstance(value, dict):
        return {k: float(v) for k, v in value.items()}
    if isinstance(value, int | float) and not math.isnan(value):
        return {"": float(value)}
    return None


async def self_consistent(samples: int, judge: Callable[[], Awaitable[Score]]) -> Score:
    """`judge()` run `samples` times concurrently; the mean of the scored runs."""
    if samples <= 1:
        return await judge()

    async def one(index: int) -> Score:
        token = SAMPLE_INDEX.set(index)
        try:
            return await judge()
        finally:
            SAMPLE_INDEX.reset(token)

    scores = await collect(*(one(i) for i in range(samples)))
    scored = [(s, v) for s in scores if (v := _values(s)) is not None]
    reasons = [str(s.reason) for s in scores if _values(s) is None]
    record: dict[str, Any] = {
        "n": samples,
        "scored": len(scored),
        "values": [s.value for s, _ in scored],
        "unscored_reasons": reasons,
    }
    if not scored:
        return Score.unscored(
            reason=f"no judge sample of {samples} was usable: {reasons[0]}",
            metadata={**(scores[0].metadata or {}), "self_consistency": record},
        )
    keys = list(scored[0][1])
    mean = {k: fmean(v[k] for _, v in scored) for k in keys}
    record["std"] = {k: pstdev([v[k] for _, v in scored]) for k in keys}
    record["samples_metadata"] = [s.metadata for s, _ in scored[1:]]
    first = scored[0][0]
    return Score(
        value=mean[""] if keys == [""] else mean,
        explanation=f"mean of {len(scored)} of {samples} judge samples; the first:\n{first.explanation}",
        metadata={**(first.metadata or {}), "self_consistency": record},
    )
