"""What the judge itself decided about each writing of a `--quality` check, read from the
scores' records rather than from ToW's `overall`, whose rule-scored `formatting` leaf moves
with a damage and no judge involved: two judgings are compared on the judge's leaves alone
(`compare`; docs/judges.md, "Read on what the judge decided").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from inspect_ai.log import EvalLog, EvalSample

from howtobench.judge_check.text import one_line
from howtobench.tree.aggregate import aggregate
from howtobench.tree.negotiator import fixed_weights
from howtobench.tree.spec import LEAVES, tree_for
from howtobench.vocabulary.metadata import SampleKey, ScoreKey, TaskKey, current

__all__ = ["Comparison", "Judging", "NODES", "RULE_LEAVES", "compare", "judgings", "why_unscored"]

NODES: tuple[str, ...] = ("overall", "content", "format", "impression")
RULE_LEAVES: tuple[str, ...] = tuple(leaf.id for leaf in LEAVES if leaf.judge == "rule")


@dataclass(frozen=True)
class Judging:
    """One judging of one writing (an original, or a damaged copy), as the score records it."""

    task: str
    id: str
    epoch: int
    damage: str | None  # the task's `perturb`; None for an original
    changed: bool  # the damage changed the writing (an original: True)
    leaves: dict[str, float]  # every leaf with a score, the rule leaves too
    missing: dict[str, str]  # LLM leaf -> why it has no usable verdict
    weights: dict[str, float] | None  # the negotiated (or planned, or equal) ones; None: none

    @property
    def instruction(self) -> tuple[str, str]:
        return self.task, self.id


@dataclass(frozen=True)
class Comparison:
    """A second judging against a first, on the judge's leaves and nodes."""

    changes: dict[str, float]  # node -> second minus first, the rule leaves held
    rules: dict[str, float]  # rule leaf -> second minus first: the rule's own change
    uniform: bool  # read with equal weights, since the negotiator gave none


def judgings(logs: Sequence[EvalLog]) -> list[Judging]:
    """Every judged sample of the check's logs; a sample that ended in an error is not one."""
    found = []
    for log in logs:
        metadata = log.eval.metadata or {}
        task = str(metadata.get(TaskKey.HOWTOBENCH_TASK) or log.eval.task.rpartition("/")[2])
        damage = metadata.get(TaskKey.PERTURB) or None
        for sample in log.samples or []:
            if sample.error is None and "tow" in (sample.scores or {}):
                found.append(_judging(task, damage, sample))
    return found


def _judging(task: str, damage: str | None, sample: EvalSample) -> Judging:
    score = (sample.scores or {})["tow"]
    metadata = current(score.metadata)
    records: Mapping[str, Any] = metadata.get(ScoreKey.LEAVES) or {}
    leaves: dict[str, float] = {}
    missing: dict[str, str] = {}
    for leaf in tree_for(task).leaves:
        record = records.get(leaf.id)
        value = record.get("score") if isinstance(record, Mapping) else None
        if isinstance(value, int | float):
            leaves[leaf.id] = float(value)
        elif leaf.judge == "llm":
            missing[leaf.id] = _why_missing(record, score.explanation)
    weights = metadata.get(ScoreKey.WEIGHTS)
    return Judging(
        task,
        str(sample.id),
        sample.epoch,
        damage,
        damage is None or _changed(sample.metadata.get(SampleKey.PERTURBATION)),
        leaves,
        missing,
        dict(weights) if isinstance(weights, Mapping) else None,
    )


def _why_missing(record: object, explanation: str | None) -> str:
    """The leaf's last error where the record has one, else the score's explanation
    (a writing refused before any judge was asked)."""
    judges = record.get("judges") if isinstance(record, Mapping) else None
    for judge in judges or []:
        if isinstance(judge, Mapping) and judge.get("error"):
            return one_line(str(judge["error"]))
    return one_line(explanation or "not judged")


def _changed(perturbation: object) -> bool:
    """Whether the damage changed the copy (`perturb` records a note when it could not:
    a text of one unit has nothing to drop, repeat or shuffle)."""
    return isinstance(perturbation, Mapping) and not perturbation.get("note")


def compare(first: Judging, second: Judging) -> Comparison | None:
    """`second` against `first` (the same instruction), or None when either lacks a
    usable verdict on some leaf. Both are aggregated with `first`'s weights (else
    `second`'s, else equal ones) and `first`'s rule-leaf scores."""
    if first.missing or second.missing:
        return None
    tree = tree_for(first.task)
    weights = first.weights or second.weights
    uniform = weights is None
    if weights is None:
        equal = fixed_weights(tree, "uniform: the negotiator gave none").value
        weights = equal.values if equal is not None else {}
    rules = [leaf for leaf in RULE_LEAVES if leaf in first.leaves and leaf in second.leaves]
    held = {**second.leaves, **{leaf: first.leaves[leaf] for leaf in rules}}
    before = aggregate(tree, weights, first.leaves).value
    after = aggregate(tree, weights, held).value
    return Comparison(
        {node: after[node] - before[node] for node in NODES if node in before},
        {leaf: second.leaves[leaf] - first.leaves[leaf] for leaf in rules},
        uniform,
    )


def why_unscored(found: Sequence[Judging]) -> str:
    """Why pairs could not be compared: the leaf most often without a usable verdict."""
    # a copy the damage left unchanged is unscored on purpose (`writing.perturb`)
    counts = Counter(leaf for judging in found if judging.changed for leaf in judging.missing)
    if not counts:
        return "every judging had a verdict on every leaf"
    leaf, n = counts.most_common(1)[0]
    reason = next(j.missing[leaf] for j in reversed(found) if leaf in j.missing)
    return f"{leaf} had no usable verdict in {n} of {len(found)} judgings ({reason[:160]})"
