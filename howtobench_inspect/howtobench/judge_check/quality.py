"""`judge-check --quality`: does the judge see quality, not only answer in the right shape?

A judge that answers valid JSON with random scores passes the usability check. Without
human labels, the one thing known about a writing's quality is that damaging it makes it
worse. The check judges each sampled writing, a copy of it under each damage
(`DAMAGES`: the tasks' own `perturb=`, seeded), and the original once more as a second
epoch (`RETEST_EPOCHS`): the epoch is part of every question's scope in the reply store
(`judge.sampling.judge_scope`), so the store cannot answer the retest and the judge is
asked again at its own temperature. The negotiated weights are one answer per
instruction and are not asked again (`reuse_weights`, as in a real run).

The damages are the paper's first two (section 6.2, Table 7: ToW with GPT-4o scores a
writing 0.36 lower when up to 3 paragraphs or sentences are dropped, 0.49 when up to 3
are repeated) and `shuffle`, the sentences of each paragraph put in another order. Drop
shortens a writing and repeat is caught by spotting a repeated sentence, so a judge that
reads length and punishes repetition sees both without reading anything else; shuffle
keeps every character, and only a judge that follows the line of thought sees it. The
paper's third damage, transfer into another genre, needs a rewriting model and is left
to the robustness study.

What it reports, from the logs alone (`measure`), pairing each damaged copy with its
original (`judged.compare`: on what the judge decided, the rule-scored `formatting` leaf
held at the original's score and its own change shown apart):

- discrimination per damage: the share of (writing, damaged copy) pairs in which the
  original got the higher `overall`, a tie counting half, with a 95% Wilson score
  interval (z from `statistics.NormalDist`); pooled over the damages too, for reading
  only (the two copies of a writing are not independent pairs);
- the mean change of `overall`, `content`, `format`, `impression` and of each rule leaf
  (damaged minus original) beside the paper's GPT-4o figures (`PAPER_GPT4O`, which
  include the rule);
- the retest: the mean absolute difference of `overall` between the two judgings of
  each original, and the SD of one judging (`sqrt(mean(d^2) / 2)`, d the difference).

The rule (`RULE`), for each damage on its own, since a pool hides a damage at chance:
its discrimination's interval lies above 0.5, and the retest's mean absolute difference
is smaller than its mean effect (minus its mean change of `overall`). A damage without a
scored pair, or a check without a retest, is "not known", which is no pass. A copy the
damage left unchanged (a text of one sentence) is not a pair and is counted apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist, fmean
from typing import Literal

from inspect_ai import Task, task_with
from inspect_ai.log import EvalLog

from howtobench.judge_check.judged import (
    NODES,
    Comparison,
    Judging,
    compare,
    judgings,
    why_unscored,
)
from howtobench.judge_check.text import many
from howtobench.judge_check.writings import build_tasks
from howtobench.vocabulary.metadata import TaskKey
from howtobench.vocabulary.rounding import rounded

DAMAGES: tuple[str, ...] = ("drop", "repeat", "shuffle")
SEED = 0  # the tasks' `perturb_seed`: the same copies on every check
RETEST_EPOCHS = 2  # the originals' epochs: the first is compared, the second is the retest
CONFIDENCE = 0.95
# Table 7 of the paper, ToW with GPT-4o: mean change, damaged minus initial writing
PAPER_GPT4O: dict[str, dict[str, float]] = {
    "drop": {"overall": -0.36, "content": -0.34, "format": -0.58, "impression": -0.24},
    "repeat": {"overall": -0.49, "content": -0.48, "format": -0.81, "impression": -0.30},
}
RULE = (
    "for each damage: its discrimination's 95% Wilson interval lies above 0.5, and the "
    "retest's mean absolute difference of overall is smaller than its mean effect on it; "
    "read on the judge's leaves and nodes (rule leaves held at the original's score)"
)
_TIE = 1e-9  # score values are rounded (howtobench.vocabulary.rounding): closer than this is a tie


def quality_tasks(dataset: str, writer: str, tasks: Sequence[str], **parameters: str) -> list[Task]:
    """Per task, its originals in `RETEST_EPOCHS` epochs and then a copy per damage: the
    tasks run one after the other, so a check that runs out of time has whole pairs.
    `parameters` are the tasks' own (`weights=`)."""
    originals = [
        task_with(t, epochs=RETEST_EPOCHS)
        for t in build_tasks(dataset, writer, tasks, **parameters)
    ]
    damaged = [
        build_tasks(dataset, writer, tasks, perturb=damage, perturb_seed=SEED, **parameters)
        for damage in DAMAGES
    ]
    return [each for group in zip(originals, *damaged, strict=True) for each in group]


@dataclass(frozen=True)
class Discrimination:
    """How often the original beat its damaged copies under one damage (or pooled)."""

    damage: str  # drop, repeat, shuffle, or "pooled"
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

    writings: int
    mean_abs_difference: float | None
    sd: float | None  # of one judging: sqrt(mean(d^2) / 2)


State = Literal["sees", "fails", "not known"]
RULING_STATES: tuple[State, ...] = ("sees", "fails", "not known")


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
        """Every damage's pairs together: reported, not ruled on."""
        return Discrimination(
            "pooled",
            [c for d in self.damages for c in d.comparisons],
            sum(d.unchanged for d in self.damages),
            sum(d.unscored for d in self.damages),
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
        found = []
        if interval[0] <= 0.5:
            found.append(f"discrimination {d.described()} not above 0.5")
        spread = self.retest.mean_abs_difference
        if effect <= 0:
            found.append(f"overall rose by {-effect:.2f}" if effect else "overall did not move")
        elif spread is not None and spread >= effect:
            found.append(f"retest spread {spread:.2f} not below its effect {effect:.2f}")
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
        rulings = self.rulings
        by = {state: [r for r in rulings if r.state == state] for state in RULING_STATES}
        seen = [_said(r) for r in by["sees"]]
        if by["fails"]:
            line = f"quality: does not see {_names(by['fails'])}: " + "; ".join(
                _said(r) for r in by["fails"]
            )
            if by["not known"]:
                line += "; not known for " + "; ".join(
                    f"{r.damage} ({r.reasons[0]})" for r in by["not known"]
                )
            if seen:
                line += f"; sees {', '.join(seen)}"
        elif by["not known"]:
            if not self.pooled.pairs:
                line = f"quality: not known, nothing was measured: {by['not known'][0].reasons[0]}"
            else:
                line = "quality: not known: " + "; ".join(
                    f"{r.damage}: {r.reasons[0]}" for r in by["not known"]
                )
                line += f"; sees {', '.join(seen)}" if seen else ""
        else:
            smallest = min(d.effect or 0 for d in self.damages)
            line = (
                f"quality: sees each damage: {', '.join(seen)}; retest "
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


def pairs_for_width(half_width: float, share: float = 0.5, confidence: float = CONFIDENCE) -> int:
    """The fewest pairs whose Wilson interval around `share` is at most ±`half_width`."""
    n = 1
    while True:
        low, high = wilson(share, n, confidence)
        if (high - low) / 2 <= half_width:
            return n
        n += 1


def measure(logs: Sequence[EvalLog]) -> Quality:
    """The quality verdict from the check's logs (the originals' and the copies'), read
    with their samples."""
    found = judgings(logs)
    originals = {(j.task, j.id, j.epoch): j for j in found if j.damage is None}
    damages = []
    uniform: set[tuple[str, str]] = set()
    for damage in DAMAGES:
        copies = [j for j in found if j.damage == damage]
        compared, unchanged, unscored = [], 0, 0
        for copy in copies:
            original = originals.get((copy.task, copy.id, copy.epoch))
            if not copy.changed:
                unchanged += 1
            elif original is None or (comparison := compare(original, copy)) is None:
                unscored += 1
            else:
                compared.append(comparison)
                if comparison.uniform:
                    uniform.add(copy.instruction)
        damages.append(Discrimination(damage, compared, unchanged, unscored))
    retest = _retest(originals)
    uniform |= retest[1]
    weights = {str((log.eval.metadata or {}).get(TaskKey.WEIGHTS, "negotiated")) for log in logs}
    return Quality(
        damages,
        retest[0],
        weights=", ".join(sorted(weights)) or "negotiated",
        instructions=len({j.instruction for j in found}),
        uniform_instructions=len(uniform),
        why_unscored=why_unscored(found) if found else "no writing was judged",
    )


def _retest(originals: dict[tuple[str, str, int], Judging]) -> tuple[Retest, set[tuple[str, str]]]:
    """The originals' first epoch against their second, and the instructions read with
    equal weights."""
    differences, uniform = [], set()
    for (task, sample, epoch), first in originals.items():
        second = originals.get((task, sample, RETEST_EPOCHS))
        if epoch != 1 or second is None or (comparison := compare(first, second)) is None:
            continue
        differences.append(comparison.changes["overall"])
        if comparison.uniform:
            uniform.add(first.instruction)
    if not differences:
        return Retest(0, None, None), uniform
    return (
        Retest(
            len(differences),
            rounded(fmean(abs(d) for d in differences)),
            rounded(math.sqrt(fmean(d * d for d in differences) / 2)),
        ),
        uniform,
    )
