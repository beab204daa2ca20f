"""Writings a scorer must not score: what a solver marked unusable, and what is too long.

A solver that could not produce the writing under test (a perturber that refused or
returned nothing) marks the sample with `UNSCORABLE` and the reason instead of letting
the original text be scored as if it were the disturbed one; every scorer of the
package, the overlap ones included, leaves such a sample unscored with that reason.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import Score
from inspect_ai.solver import TaskState

from howtobench.judge.inputs import JudgeInput

UNSCORABLE = "unscorable"  # sample metadata: why the writing under test is not usable


def unscorable(state: TaskState) -> str | None:
    """Why a solver marked this sample's writing unusable, if it did."""
    reason = state.metadata.get(UNSCORABLE)
    return str(reason) if reason else None


def unjudgeable(
    state: TaskState, judge_input: JudgeInput, metadata: dict[str, Any]
) -> Score | None:
    """An unscored score when the writing must not go to a judge, else None."""
    reason = unscorable(state) or judge_input.too_long
    return None if reason is None else Score.unscored(reason=reason, metadata=metadata)
