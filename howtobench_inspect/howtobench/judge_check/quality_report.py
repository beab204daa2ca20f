"""The `--quality` block of the check's report: for a terminal (`render_quality`, at most
`WIDTH` columns, its verdict last) and as the `quality` object of `--json`."""

from __future__ import annotations

from typing import Any

from howtobench.judge_check.judged import NODES, RULE_LEAVES
from howtobench.judge_check.quality import CONFIDENCE, FEWEST, RULE, Discrimination, Quality
from howtobench.judge_check.swap import SWAP, TELL
from howtobench.judge_check.text import wrap
from howtobench.judge_check.writings import RETEST_EPOCHS, SEED
from howtobench.vocabulary.rounding import rounded
from howtobench.writing.damages import DAMAGES

__all__ = ["quality_json", "render_quality"]

PAPER_GPT4O = {d.name: d.paper for d in DAMAGES if d.paper is not None}  # `Damage.paper`
TELLS = {**{d.name: d.tell for d in DAMAGES}, SWAP: TELL}  # `Damage.tell`, and the swap's
COLUMNS: tuple[str, ...] = (*NODES, *RULE_LEAVES)
MEASURED_ON = (
    f"what the judge decided (the rule leaf {', '.join(RULE_LEAVES)} held at the original's "
    "score, its change shown apart)"
)


def _interval(d: Discrimination) -> str:
    interval = d.interval
    return "-" if interval is None else f"{interval[0]:.2f}-{interval[1]:.2f}"


def _number(value: float | None, sign: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.2f}" if sign else f"{value:.2f}"


def render_quality(quality: Quality) -> list[str]:
    """The quality block of the report, at most `WIDTH` columns, its verdict last."""
    lines = [
        f"quality: each writing against damaged copies (seed {SEED}) and, read against its "
        f"instruction, another instruction's writing ({SWAP}), on {MEASURED_ON}; a tie "
        "counts half",
        f"{'damage':<8}{'pairs':>6}{'orig. higher':>14}{'95% Wilson':>12}"
        + "".join(f"{'Δ' + column:>12}" for column in COLUMNS),
    ]
    damaged = [d for d in quality.damages if d.damage != SWAP]
    swapped = [d for d in quality.damages if d.damage == SWAP]
    for d in [*damaged, quality.pooled, *swapped]:
        changes = d.changes
        lines.append(
            f"{d.damage:<8}{d.pairs:>6}{_number(d.share):>14}{_interval(d):>12}"
            + "".join(f"{_number(changes.get(column), sign=True):>12}" for column in COLUMNS)
        )
        if paper := PAPER_GPT4O.get(d.damage):
            lines.append(
                f"{'  paper, GPT-4o (Table 7, rule included)':<40}"
                + "".join(f"{paper[node]:>+12.2f}" for node in NODES)
            )
    if any(d.unchanged or d.unscored for d in quality.damages):
        lines.append(
            "left out (copies the damage left unchanged / pairs without a verdict on every "
            "leaf): " + ", ".join(f"{d.damage} {d.unchanged}/{d.unscored}" for d in quality.damages)
        )
    lines.append(
        "the pooled row (the damages' pairs) is for reading: the verdict rules on each damage "
        "and the swap alone"
    )
    retest = quality.retest
    lines.append(
        f"retest: {retest.writings} originals judged again: overall moved "
        f"{_number(retest.mean_abs_difference)} on average (SD of one judging {_number(retest.sd)})"
    )
    lines.append(
        f"weights: {quality.weights}"
        + (f"; {quality.weighting}" if quality.uniform_instructions else "")
    )
    return [wrapped for line in [*lines, quality.verdict] for wrapped in wrap(line)]


def _discrimination(d: Discrimination) -> dict[str, Any]:
    interval = d.interval
    return {
        "pairs": d.pairs,
        "original_higher": d.higher,
        "ties": d.ties,
        "discrimination": None if d.share is None else rounded(d.share),
        "interval": [rounded(end) for end in interval] if interval is not None else None,
        "changes": {node: d.changes[node] for node in NODES},
        "rule_changes": {leaf: d.changes.get(leaf) for leaf in RULE_LEAVES},
        "effect": d.effect,
        "unchanged_copies": d.unchanged,
        "unscored_pairs": d.unscored,
        **({"paper_gpt4o": dict(paper)} if (paper := PAPER_GPT4O.get(d.damage)) else {}),
    }


def quality_json(quality: Quality) -> dict[str, Any]:
    """The `quality` object of `--json`."""
    rulings = {r.damage: r for r in quality.rulings}
    retest = quality.retest
    return {
        "measured_on": MEASURED_ON,
        "perturbations": {
            d.damage: {
                **_discrimination(d),
                "tell": TELLS[d.damage],
                "verdict": rulings[d.damage].state,
                "reasons": rulings[d.damage].reasons,
            }
            for d in quality.damages
        },
        "pooled": _discrimination(quality.pooled),
        "interval_method": f"Wilson score, {CONFIDENCE:.0%}",
        "ties": "count half",
        "fewest_pairs": FEWEST,
        "seed": SEED,
        "weights": quality.weights,
        "instructions": quality.instructions,
        "uniform_instructions": quality.uniform_instructions,
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
    }
