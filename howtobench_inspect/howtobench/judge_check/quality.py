"""`judge-check --quality`: does the judge see quality, not only answer in the right shape?

A judge that answers valid JSON with random scores passes the usability check. Without
human labels, the one thing known about a writing's quality is that damaging it makes it
worse: the paper (section 6.2, Table 7) drops up to 3 paragraphs or sentences, or
repeats up to 3, and ToW with GPT-4o then scores the writing 0.36 (drop) and 0.49
(repeat) lower. So the check judges each sampled writing, a `drop` and a `repeat` copy
of it (`howtobench.perturb`, seeded, the tasks' own `perturb=`), and the original once
more as a second epoch (`RETEST_EPOCHS`): the epoch is part of every question's scope
in the reply store (`judge.sampling.judge_scope`), so the store cannot answer the retest
and the judge is asked again at its own temperature. The negotiated weights are one
answer per instruction and are not asked again (`reuse_weights`, as in a real run).

What it reports, from the logs alone (`measure`), pairing each damaged copy with its
original as the robustness study does (`studies.perturbation_effects`):

- discrimination: the share of (writing, damaged copy) pairs in which the original got
  the higher ToW `overall`, a tie counting half, with a 95% Wilson score interval (z
  from `statistics.NormalDist`), per damage and over both. The two copies of a writing
  are counted as separate pairs, so the pooled interval is a little narrower than it
  should be;
- the mean change of `overall`, `content`, `format`, `impression` (damaged minus
  original) beside the paper's GPT-4o figures (`PAPER_GPT4O`);
- the retest: the mean absolute difference of `overall` between the two judgings of
  each original, and the SD of one judging (`sqrt(mean(d^2) / 2)`, d the difference).

The rule (`RULE`): the judge sees quality when the discrimination's interval lies above
0.5 and the retest's mean absolute difference is smaller than the damage's mean effect
(minus the pooled mean change of `overall`): telling a writing from its damaged copy
must not be chance, and must be more than the noise of asking twice. A copy that the
damage left unchanged (a text of one sentence) is not a pair and is counted apart.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

import pandas as pd
from inspect_ai import Task, task_with

from howtobench.judge_check.text import WIDTH
from howtobench.judge_check.writings import build_tasks
from howtobench.rounding import rounded
from howtobench.studies.logs import Samples, StudyError, as_samples
from howtobench.studies.perturbation_effects import paired_changes

PERTURBATIONS: tuple[str, ...] = ("drop", "repeat")  # the paper's Table 7, its first two
SEED = 0  # the tasks' `perturb_seed`: the same copies on every check
RETEST_EPOCHS = 2  # the originals' epochs: the first is compared, the second is the retest
NODES: tuple[str, ...] = ("overall", "content", "format", "impression")
CONFIDENCE = 0.95
# Table 7 of the paper, ToW with GPT-4o: mean change, damaged minus initial writing
PAPER_GPT4O: dict[str, dict[str, float]] = {
    "drop": {"overall": -0.36, "content": -0.34, "format": -0.58, "impression": -0.24},
    "repeat": {"overall": -0.49, "content": -0.48, "format": -0.81, "impression": -0.30},
}
RULE = (
    "the discrimination's 95% Wilson interval lies above 0.5, and the retest's mean "
    "absolute difference of overall is smaller than the damage's mean effect on it"
)
_TIE = 1e-9  # score values are rounded (howtobench.rounding): closer than this is a tie


def quality_tasks(dataset: str, writer: str, tasks: Sequence[str]) -> list[Task]:
    """Per task, its originals in `RETEST_EPOCHS` epochs and then a copy per damage: the
    tasks run one after the other, so a check that runs out of time has whole pairs."""
    originals = [task_with(t, epochs=RETEST_EPOCHS) for t in build_tasks(dataset, writer, tasks)]
    damaged = [
        build_tasks(dataset, writer, tasks, perturb=damage, perturb_seed=SEED)
        for damage in PERTURBATIONS
    ]
    return [each for group in zip(originals, *damaged, strict=True) for each in group]


@dataclass(frozen=True)
class Discrimination:
    """How often the original beat its damaged copies (one damage, or both)."""

    damage: str  # drop, repeat, or "both"
    pairs: int  # scored pairs
    higher: int  # the original scored higher
    ties: int
    changes: dict[str, float | None]  # node -> mean change, damaged minus original

    @property
    def share(self) -> float | None:
        return (self.higher + self.ties / 2) / self.pairs if self.pairs else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.share, self.pairs) if self.share is not None else None

    @property
    def effect(self) -> float | None:
        """How much the damage lowers `overall` on average (negative: it raises it)."""
        change = self.changes.get("overall")
        return None if change is None else -change


@dataclass(frozen=True)
class Retest:
    """The originals judged twice: how far apart the two scores of `overall` are."""

    writings: int
    mean_abs_difference: float | None
    sd: float | None  # of one judging: sqrt(mean(d^2) / 2)


@dataclass
class Quality:
    """The quality verdict and what it rests on."""

    damages: list[Discrimination]
    both: Discrimination
    retest: Retest
    unchanged: int = 0  # copies the damage left as they were: not pairs
    unscored: int = 0  # damaged copies without a scored pair (either side unscored)
    notes: list[str] = field(default_factory=list)

    @property
    def passes(self) -> bool:
        return not self.failures

    @property
    def failures(self) -> list[str]:
        """Why the judge does not see quality, by the rule; empty when it does."""
        interval, effect = self.both.interval, self.both.effect
        spread = self.retest.mean_abs_difference
        if interval is None or effect is None:
            return ["no (writing, damaged copy) pair was scored on both sides"]
        found = []
        if interval[0] <= 0.5:
            found.append(f"discrimination {self._discrimination()} not above 0.5")
        if effect <= 0:
            found.append(f"the damage did not lower overall (mean change {-effect:+.2f})")
        elif spread is None:
            found.append("no original was scored twice, so there is no retest")
        elif spread >= effect:
            found.append(f"retest spread {spread:.2f} not below the damage's effect {effect:.2f}")
        return found

    @property
    def verdict(self) -> str:
        """One line: the verdict and its numbers."""
        failures = self.failures
        if failures:
            return f"quality: does not see damage: {'; '.join(failures)}"
        return (
            f"quality: sees damage: discrimination {self._discrimination()} > 0.5; retest "
            f"{_number(self.retest.mean_abs_difference)} < effect {_number(self.both.effect)}"
        )

    def _discrimination(self) -> str:
        return f"{_share(self.both)} ({_interval(self.both.interval)}, {self.both.pairs} pairs)"


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


def measure(logs: Sequence[str | Path]) -> Quality:
    """The quality verdict from the check's logs (the originals' and the copies')."""
    try:
        samples = as_samples(logs)
    except StudyError as error:
        return _quality(_no_pairs(), Retest(0, None, None), [f"nothing to compare: {error}"])
    frame = samples.frame
    damaged = frame["perturb"].isin(PERTURBATIONS)
    clean = Samples(frame[~damaged], samples.metrics)
    copies = frame[damaged]
    changed = copies["perturbation"].map(_changed).astype(bool)
    metrics = [f"tow.{node}" for node in NODES if f"tow.{node}" in samples.metrics]
    notes: list[str] = []
    long = _no_pairs()
    if "tow.overall" in metrics and changed.any() and not clean.frame.empty:
        try:
            long = paired_changes(clean, Samples(copies[changed], samples.metrics), metrics, notes)
        except StudyError as error:
            notes.append(str(error))
    quality = _quality(long, _retest(clean.frame), notes)
    quality.unchanged = int((~changed).sum())
    quality.unscored = int(changed.sum()) - quality.both.pairs
    return quality


def _no_pairs() -> pd.DataFrame:
    """The robustness study's long table (`paired_changes`) with no pair in it."""
    return pd.DataFrame(columns=["disturbance", "metric", "change"])


def _quality(long: pd.DataFrame, retest: Retest, notes: list[str]) -> Quality:
    damages = [_discrimination(long[long["disturbance"] == d], d) for d in PERTURBATIONS]
    return Quality(damages, _discrimination(long, "both"), retest, notes=notes)


def _changed(perturbation: object) -> bool:
    """Whether the damage changed the copy (`perturb` records a note when it could not:
    a text of one unit has nothing to drop or repeat)."""
    return isinstance(perturbation, Mapping) and not perturbation.get("note")


def _discrimination(long: pd.DataFrame, damage: str) -> Discrimination:
    overall = long.loc[long["metric"] == "tow.overall", "change"].astype(float)
    changes: dict[str, float | None] = {}
    for node in NODES:
        values = long.loc[long["metric"] == f"tow.{node}", "change"].astype(float)
        changes[node] = rounded(float(values.mean())) if len(values) else None
    return Discrimination(
        damage,
        pairs=len(overall),
        higher=int((overall < -_TIE).sum()),
        ties=int((overall.abs() <= _TIE).sum()),
        changes=changes,
    )


def _retest(clean: pd.DataFrame) -> Retest:
    """The originals' first epoch against their second: `overall` per writing."""
    if clean.empty or "tow.overall" not in clean:
        return Retest(0, None, None)
    wide = clean.pivot_table(
        index=["model", "task", "id"], columns="epoch", values="tow.overall", aggfunc="first"
    )
    if not {1, RETEST_EPOCHS} <= set(wide.columns):
        return Retest(0, None, None)
    difference = (wide[RETEST_EPOCHS] - wide[1]).dropna()
    if difference.empty:
        return Retest(0, None, None)
    return Retest(
        len(difference),
        rounded(float(difference.abs().mean())),
        rounded(math.sqrt(float((difference**2).mean()) / 2)),
    )


def _share(d: Discrimination) -> str:
    return "-" if d.share is None else f"{d.share:.2f}"


def _interval(interval: tuple[float, float] | None) -> str:
    return "-" if interval is None else f"{interval[0]:.2f}-{interval[1]:.2f}"


def _number(value: float | None, sign: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.2f}" if sign else f"{value:.2f}"


def render_quality(quality: Quality) -> list[str]:
    """The quality block of the report, at most `WIDTH` columns, its verdict last."""
    lines = [
        f"quality: each writing against damaged copies (seed {SEED}), ToW overall; a tie "
        "counts half",
        f"{'damage':<8}{'pairs':>6}{'orig. higher':>14}{'95% Wilson':>12}"
        + "".join(f"{'Δ' + node:>12}" for node in NODES),
    ]
    for d in [*quality.damages, quality.both]:
        lines.append(
            f"{d.damage:<8}{d.pairs:>6}{_share(d):>14}{_interval(d.interval):>12}"
            + "".join(f"{_number(d.changes[node], sign=True):>12}" for node in NODES)
        )
        if d.damage in PAPER_GPT4O:
            lines.append(
                f"{'  paper, GPT-4o (Table 7)':<40}"
                + "".join(f"{PAPER_GPT4O[d.damage][node]:>+12.2f}" for node in NODES)
            )
    if quality.unchanged or quality.unscored:
        lines.append(
            f"left out: {quality.unchanged} copies the damage left unchanged, "
            f"{quality.unscored} without a score on both sides"
        )
    retest = quality.retest
    lines.append(
        f"retest: {retest.writings} originals judged again: overall moved "
        f"{_number(retest.mean_abs_difference)} on average (SD of one judging {_number(retest.sd)})"
    )
    lines += [f"  note: {note}" for note in quality.notes]
    return [
        wrapped
        for line in [*lines, quality.verdict]
        for wrapped in textwrap.wrap(line, WIDTH, subsequent_indent="    ", break_on_hyphens=False)
    ]


def quality_json(quality: Quality) -> dict[str, Any]:
    """The `quality` object of `--json`."""

    def discrimination(d: Discrimination) -> dict[str, Any]:
        interval = d.interval
        return {
            "pairs": d.pairs,
            "original_higher": d.higher,
            "ties": d.ties,
            "discrimination": None if d.share is None else rounded(d.share),
            "interval": [rounded(end) for end in interval] if interval is not None else None,
            "changes": d.changes,
            **({"paper_gpt4o": PAPER_GPT4O[d.damage]} if d.damage in PAPER_GPT4O else {}),
        }

    both = discrimination(quality.both)
    retest = quality.retest
    return {
        "discrimination": both["discrimination"],
        "interval": both["interval"],
        "interval_method": f"Wilson score, {CONFIDENCE:.0%}",
        "ties": "count half",
        "pairs": quality.both.pairs,
        "changes": quality.both.changes,
        "effect": quality.both.effect,
        "perturbations": {d.damage: discrimination(d) for d in quality.damages},
        "seed": SEED,
        "unchanged_copies": quality.unchanged,
        "unscored_pairs": quality.unscored,
        "retest": {
            "writings": retest.writings,
            "mean_abs_difference": retest.mean_abs_difference,
            "sd": retest.sd,
            "epoch": RETEST_EPOCHS,
        },
        "passes": quality.passes,
        "rule": RULE,
        "verdict": quality.verdict,
        "reasons": quality.failures,
        "notes": quality.notes,
    }
