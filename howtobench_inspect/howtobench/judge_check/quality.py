"""`judge-check --quality`: does the judge see quality, not only answer in the right shape?

Without human labels, the one thing known about a writing's quality is that damaging it
makes it worse; so each copy is paired with its original on what the judge decided, and the
rule (`RULE`) holds for each damage on its own, since a pool hides a damage at chance
(docs/judges.md, "Is this judge good enough?").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import count
from statistics import NormalDist, fmean
from typing import Literal, get_args

from inspect_ai.log import EvalLog

from howtobench.judge_check.judged import (
    NODES,
    Comparison,
    Judging,
    compare,
    judgings,
    why_unscored,
)
from howtobench.judge_check.swap import SWAP
from howtobench.judge_check.text import many
from howtobench.judge_check.writings import CHECKED, RETEST_EPOCHS
from howtobench.vocabulary.metadata import TaskKey
from howtobench.vocabulary.rounding import rounded

__all__ = ["CONFIDENCE", "FEWEST", "RULE", "Discrimination", "Quality", "measure", "wilson"]

CONFIDENCE = 0.95
RULE = (
    "for each damage and the swap: its discrimination's 95% Wilson interval lies above "
    "0.5, and the retest's mean absolute difference of overall is smaller than its mean "
    "effect on it; read on the judge's leaves and nodes (rule leaves held at the "
    "original's score)"
)
_TIE = 1e-9  # score values are rounded (howtobench.vocabulary.rounding): closer than this is a tie


@dataclass(frozen=True)
class Discrimination:
    """How often the original beat its damaged copies under one damage (or pooled)."""

    damage: str  # its name (`writings.CHECKED`), or "pooled"
    comparisons: list[Comparison]  # the scored pairs
    unchanged: int = 0  # copies the damage left as they were: not pairs
    unscored: int = 0  # changed copies without a usable verdict on every leaf, either side

    @property
    def pairs(self) -> int:
        return len(self.comparisons)

    @property
    def higher(self) -> int:
        return sum(1 for c in self.comparisons if c.changes["overall"] < -_TIE)

    @property
    def ties(self) -> int:
        return sum(1 for c in self.comparisons if abs(c.changes["overall"]) <= _TIE)

    @property
    def share(self) -> float | None:
        return (self.higher + self.ties / 2) / self.pairs if self.pairs else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.share, self.pairs) if self.share is not None else None

    @property
    def changes(self) -> dict[str, float | None]:
        """Node (and rule leaf) -> the mean change, damaged minus original."""
        keys = dict.fromkeys(k for c in self.comparisons for k in [*c.changes, *c.rules])
        means: dict[str, float | None] = {node: None for node in NODES}
        for key in keys:
            values = [c.changes.get(key, c.rules.get(key)) for c in self.comparisons]
            given = [v for v in values if v is not None]
            means[key] = rounded(fmean(given)) if given else None
        return means

    @property
    def effect(self) -> float | None:
        """How much the damage lowers `overall` on average (negative: it raises it)."""
        change = self.changes["overall"]
        return None if change is None else -change

    def described(self) -> str:
        """`0.75 (0.62-0.85, 52 pairs)`."""
        low, high = self.interval or (math.nan, math.nan)
        return f"{self.share:.2f} ({low:.2f}-{high:.2f}, {many(self.pairs, 'pair')})"


@dataclass(frozen=True)
class Retest:
    """The originals judged twice: how far apart the two scores of `overall` are."""

    differences: list[float]  # of overall, second judging minus first, one per original

    @property
    def writings(self) -> int:
        return len(self.differences)

    @property
    def mean_abs_difference(self) -> float | None:
        return rounded(fmean(map(abs, self.differences))) if self.differences else None

    @property
    def sd(self) -> float | None:
        """Of one judging: sqrt(mean(d^2) / 2)."""
        d = self.differences
        return rounded(math.sqrt(fmean(x * x for x in d) / 2)) if d else None


State = Literal["sees", "fails", "too few pairs", "not known"]


@dataclass(frozen=True)
class Ruling:
    """One damage's verdict, and why."""

    damage: str
    state: State
    reasons: list[str]


@dataclass
class Quality:
    """The quality verdict and what it rests on."""

    damages: list[Discrimination]
    retest: Retest
    weights: str = "negotiated"  # how the check's tasks weighted: negotiated, uniform, plan
    instructions: int = 0
    uniform_instructions: int = 0  # read with equal weights: the negotiator gave none
    why_unscored: str = ""  # the leaf most often without a verdict (`judged.why_unscored`)

    @property
    def pooled(self) -> Discrimination:
        """Every damage's pairs together (not the swap's): reported, not ruled on."""
        damaged = [d for d in self.damages if d.damage != SWAP]
        return Discrimination(
            "pooled",
            [c for d in damaged for c in d.comparisons],
            sum(d.unchanged for d in damaged),
            sum(d.unscored for d in damaged),
        )

    @property
    def rulings(self) -> list[Ruling]:
        return [self._ruling(d) for d in self.damages]

    def _ruling(self, d: Discrimination) -> Ruling:
        interval, effect = d.interval, d.effect
        if interval is None or effect is None:
            why = (
                f"the damage left every copy unchanged ({d.unchanged})"
                if d.unchanged and not d.unscored
                else f"no pair had a verdict on every leaf on both sides ({self.why_unscored})"
                if d.unscored
                else "no copy was judged"
            )
            return Ruling(d.damage, "not known", [why])
        if d.pairs < FEWEST:
            return Ruling(d.damage, "too few pairs", [many(d.pairs, "pair")])
        found = []
        if interval[0] <= 0.5:
            found.append(f"discrimination {d.described()} not above 0.5")
        spread = self.retest.mean_abs_difference
        if effect <= 0:
            found.append(f"overall rose by {-effect:.2f}" if effect else "overall did not move")
        elif spread is not None and spread >= effect:
            found.append(f"retest spread {spread:.2f} not below its effect {effect:.2f}")
        if found and d.damage == SWAP:
            found.append(
                "a writing was not told from another instruction's: the judge may score "
                "text it recognises, not how it answers the instruction"
            )
        if found:
            return Ruling(d.damage, "fails", found)
        if spread is None:
            return Ruling(d.damage, "not known", ["no original was judged twice (no retest)"])
        return Ruling(d.damage, "sees", [f"discrimination {d.described()}"])

    @property
    def passes(self) -> bool:
        return all(r.state == "sees" for r in self.rulings)

    @property
    def failures(self) -> list[str]:
        """Why the judge does not see quality, one line per damage; empty when it does."""
        return [f"{r.damage}: {'; '.join(r.reasons)}" for r in self.rulings if r.state != "sees"]

    @property
    def verdict(self) -> str:
        """One line: the verdict, damage by damage, and how the pairs were weighted."""
        by = {state: [r for r in self.rulings if r.state == state] for state in get_args(State)}
        failed, unknown = by["fails"], [f"{r.damage} ({r.reasons[0]})" for r in by["not known"]]
        few = by["too few pairs"]
        seen = [_said(r) for r in by["sees"]]
        if unknown and not failed and not any(d.pairs for d in self.damages):
            line = f"quality: not known, nothing was measured: {by['not known'][0].reasons[0]}"
        elif failed or unknown or few:
            parts = []
            if failed:
                parts.append(f"does not see {_names(failed)}: " + "; ".join(map(_said, failed)))
            if few:
                parts.append(
                    f"too few pairs for {', '.join(_said(r) for r in few)}: even an original "
                    f"that won every pair passes from {FEWEST} pairs on; give more writings "
                    "(--limit)"
                )
            if unknown:
                parts.append(f"not known for {'; '.join(unknown)}")
            if seen:
                parts.append(f"sees {', '.join(seen)}")
            line = "quality: " + "; ".join(parts)
        else:
            smallest = min(d.effect or 0 for d in self.damages)
            line = (
                f"quality: sees each damage and the swap: {', '.join(seen)}; retest "
                f"{self.retest.mean_abs_difference:.2f} below the smallest effect {smallest:.2f}"
            )
        return line + (f"; {self.weighting}" if self.uniform_instructions else "")

    @property
    def weighting(self) -> str:
        """Said when some pairs were read with equal weights for want of negotiated ones."""
        return (
            f"read with uniform weights for {self.uniform_instructions} of "
            f"{many(self.instructions, 'instruction')}: the negotiator gave no usable weights"
        )


def _said(ruling: Ruling) -> str:
    """`drop 0.50 (0.32-0.68, 26 pairs) not above 0.5, overall did not move`."""
    reasons = ", ".join(ruling.reasons)
    return f"{ruling.damage} {reasons.removeprefix('discrimination ')}"


def _names(rulings: list[Ruling]) -> str:
    names = [r.damage for r in rulings]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def wilson(share: float, n: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval of a proportion `share` of `n` (ties counted half make
    the count of successes fractional, which the formula takes as it is)."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    scale = 1 + z * z / n
    centre = (share + z * z / (2 * n)) / scale
    half = z / scale * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


FEWEST = next(n for n in count(1) if wilson(1.0, n)[0] > 0.5)
"""The fewest pairs on which a judge can pass: below them, even an original that won every
pair has a Wilson interval reaching 0.5 (4 at 95%)."""


def measure(logs: Sequence[EvalLog]) -> Quality:
    """The quality verdict from the check's logs, read with their samples."""
    found = judgings(logs)
    originals = {(j.task, j.id, j.epoch): j for j in found if j.damage is None}
    uniform: set[tuple[str, str]] = set()  # the instructions read with equal weights

    def compared(first: Judging | None, second: Judging) -> Comparison | None:
        comparison = None if first is None else compare(first, second)
        if comparison is not None and comparison.uniform:
            uniform.add(second.instruction)
        return comparison

    damages = []
    for damage in CHECKED:
        copies = [j for j in found if j.damage == damage]
        pairs = [compared(originals.get((c.task, c.id, c.epoch)), c) for c in copies if c.changed]
        scored = [p for p in pairs if p is not None]
        damages.append(
            Discrimination(damage, scored, len(copies) - len(pairs), len(pairs) - len(scored))
        )
    retests = [
        compared(first, second)
        for (task, sample, epoch), first in originals.items()
        if epoch == 1 and (second := originals.get((task, sample, RETEST_EPOCHS)))
    ]
    weights = {str((log.eval.metadata or {}).get(TaskKey.WEIGHTS, "negotiated")) for log in logs}
    return Quality(
        damages,
        Retest([c.changes["overall"] for c in retests if c is not None]),
        weights=", ".join(sorted(weights)) or "negotiated",
        instructions=len({j.instruction for j in found}),
        uniform_instructions=len(uniform),
        why_unscored=why_unscored(found) if found else "no writing was judged",
    )
