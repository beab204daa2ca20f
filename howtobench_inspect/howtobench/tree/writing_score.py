"""One writing's score from its judges' answers: each leaf's score (the lowest for an empty
writing, the formatting rule's, or the panel's mean on the leaf's scale), then the tree's
aggregate as an inspect Score, or the writing unscored with every failure named.

Pure of judge calls: the scorer (`tree/scorer.py`) asks, this module reads what came back,
so the arithmetic can be tested and reused (judge-check reads pairs with it) without a
model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from inspect_ai.scorer import Score

from howtobench.judge.guards import unscored
from howtobench.judge.inputs import JudgeInput
from howtobench.judge.replies import Asking, Exchange, Verdict
from howtobench.tree.aggregate import aggregate, render
from howtobench.tree.formatting_paper import paper_formatting_verdict
from howtobench.tree.headings import FormattingVerdict, formatting_verdict
from howtobench.tree.negotiator import Weights, weights_record
from howtobench.tree.spec import Leaf, Tree
from howtobench.vocabulary.metadata import ScoreKey
from howtobench.vocabulary.rounding import rounded

__all__ = [
    "DEFAULT_FORMATTING",
    "FORMATTINGS",
    "Writing",
    "tree_score",
]

# The formatting leaf's rule (`-T formatting=`): ours, which reads numbering and list
# structure (`tree/headings.py`), or the paper code's `score_formatting`
# (`tree/formatting_paper.py`); docs/benchmarks.md, "Formatting rules", compares them.
FORMATTINGS: dict[str, Callable[[str], FormattingVerdict]] = {
    "lenient": formatting_verdict,
    "paper": paper_formatting_verdict,
}
DEFAULT_FORMATTING = "lenient"


@dataclass(frozen=True)
class Writing:
    """What one writing is judged with: its input, its tree, how questions are asked and
    the plan's weights for its instruction (None without a plan)."""

    judge_input: JudgeInput
    tree: Tree
    asking: Asking
    planned: Weights | None

    @property
    def empty(self) -> bool:
        return not self.judge_input.writing.strip()

    @property
    def llm_leaves(self) -> list[Leaf]:
        """The leaves an LLM judges; none for an empty writing (it gets the lowest)."""
        return [] if self.empty else [leaf for leaf in self.tree.leaves if leaf.judge == "llm"]


@dataclass
class LeafScores:
    """The leaves' scores as the tree takes them, with what the score records of each."""

    values: dict[str, float] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    record: dict[str, Any] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    by_judge: dict[str, dict[str, float]] = field(default_factory=dict)  # each judge's own

    def set(self, leaf: Leaf, value: float, note: str) -> None:
        self.values[leaf.id] = value
        self.notes[leaf.id] = note


def leaf_scores(
    writing: Writing, verdicts: dict[str, list[Exchange[Verdict]]], formatting: str
) -> LeafScores:
    """Each leaf's score: the lowest for an empty writing, the rule's, or the panel's mean."""
    scores = LeafScores()
    for leaf in writing.tree.leaves:
        if writing.empty:
            scores.set(leaf, leaf.minimum, "empty writing: lowest score, not judged")
            scores.record[leaf.id] = {"score": leaf.minimum, "judged_by": "none (empty writing)"}
        elif leaf.judge == "rule":
            _rule_score(scores, leaf, writing.judge_input.writing, formatting)
        else:
            _panel_score(scores, leaf, verdicts[leaf.id])
    return scores


def _rule_score(scores: LeafScores, leaf: Leaf, text: str, formatting: str) -> None:
    verdict = FORMATTINGS[formatting](text)
    scores.set(leaf, float(verdict.score), f"{formatting} rule: {verdict.reason}")
    scores.record[leaf.id] = {
        "score": float(verdict.score),
        "judged_by": "rule",
        "rule": formatting,
        "reason": verdict.reason,
    }


def _panel_score(scores: LeafScores, leaf: Leaf, exchanges: list[Exchange[Verdict]]) -> None:
    """The panel's mean on the tree's scale; a failed judge leaves the leaf unscored."""
    scores.record[leaf.id] = {
        "judged_by": "llm",
        "judges": [
            {
                **ex.record(),
                "score": ex.value.score if ex.value else None,
                "reason": ex.value.reason if ex.value else None,
            }
            for ex in exchanges
        ],
    }
    failed = [ex for ex in exchanges if ex.value is None]
    scores.failures += [f"{leaf.id} ({ex.model}): {ex.error}" for ex in failed]
    if failed:
        return
    mapped = [leaf.map(ex.value.score) for ex in exchanges if ex.value is not None]
    for ex, value in zip(exchanges, mapped, strict=True):
        scores.by_judge.setdefault(ex.model, {})[leaf.id] = value
    scores.set(leaf, rounded(fmean(mapped)), _judged_note(leaf, exchanges))
    scores.record[leaf.id]["score"] = scores.values[leaf.id]


def _judged_note(leaf: Leaf, exchanges: list[Exchange[Verdict]]) -> str:
    """What the judges answered, each named when a panel judged (`judged 3 by
    openai/gpt-4o, 4 by anthropic/claude-sonnet-4-0`; a lone judge's answer alone,
    `judged 3`); for a leaf whose scale differs from the judged one, the mapping too
    (`judged 3 on 1-10, mapped 1-3 → 0, 4-7 → 5, 8-10 → 10`), each judge's answer mapped
    before the panel's mean."""
    answers = [(ex.model, ex.value.score) for ex in exchanges if ex.value is not None]
    if len(answers) == 1:
        judged = f"{answers[0][1]:g}"
    else:
        judged = ", ".join(f"{value:g} by {model}" for model, value in answers)
    if leaf.mapping == "identity":
        return f"judged {judged}"
    each = "each " if len(answers) > 1 else ""
    return f"judged {judged} on {leaf.low}-{leaf.high}, {each}mapped {leaf.steps}"


def tree_score(
    writing: Writing,
    negotiated: Exchange[Weights],
    reused: bool,
    verdicts: dict[str, list[Exchange[Verdict]]],
    anchor_seen: str,
    formatting: str,
) -> Score:
    """Leaf scores, failures and the full record of one writing, aggregated into a Score."""
    tree, judge_input = writing.tree, writing.judge_input
    scores = leaf_scores(writing, verdicts, formatting)
    failures = scores.failures
    weights = negotiated.value
    if weights is None:
        failures.insert(0, f"negotiator ({negotiated.model}): {negotiated.error}")
    metadata: dict[str, Any] = {
        ScoreKey.TASK: judge_input.task,
        ScoreKey.ANCHOR: anchor_seen,
        ScoreKey.EMPTY_WRITING: writing.empty,
        **weights_record(negotiated, reused),
        ScoreKey.LEAVES: scores.record,
        ScoreKey.CLIPPED: {},
    }
    if judge_input.cleaned:
        metadata[ScoreKey.WRITING_CLEANED] = judge_input.cleaned
    if failures:
        return unscored("grader_failed", "; ".join(failures), metadata)
    assert weights is not None
    result = aggregate(tree, weights.values, scores.values)
    metadata[ScoreKey.CLIPPED] = result.clipped
    if len(scores.by_judge) > 1:  # what each panel judge alone would have given
        metadata[ScoreKey.BY_JUDGE] = {
            model: aggregate(tree, weights.values, {**scores.values, **own}).value["overall"]
            for model, own in scores.by_judge.items()
        }
    return Score(
        value=result.value,
        explanation=render(tree, weights.values, result, scores.notes),
        metadata=metadata,
    )
