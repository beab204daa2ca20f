"""The Tree-of-Writing scorer: inspect wiring around the pure tree.

Per writing: the negotiator (once per instruction) and one expert call per LLM leaf and
judge run concurrently inside named spans; the formatting rule runs locally; the tree
aggregates. Any judge question that still fails after its re-asks leaves the sample
unscored with the reason, and the metadata keeps every reply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from statistics import fmean
from typing import Any, cast

from inspect_ai.model import Model
from inspect_ai.scorer import Score, Scorer, Target, grouped, mean, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import span

from howtobench._inspect import gathered
from howtobench.judge.defaults import TRIES
from howtobench.judge.guards import unscored
from howtobench.judge.inputs import JudgeInput
from howtobench.judge.models import ask_panel, grader, panel, panel_models
from howtobench.judge.replies import Asking, Exchange, Verdict
from howtobench.judge.sampling import judge_writing
from howtobench.tasks.parameters import boolean, choice, names, refuses_unknown
from howtobench.tree.aggregate import aggregate, render
from howtobench.tree.experts import judge_leaf
from howtobench.tree.formatting_paper import paper_formatting_verdict
from howtobench.tree.headings import FormattingVerdict, formatting_verdict
from howtobench.tree.negotiator import SettledWeights, Weights, fixed_weights, weights_record
from howtobench.tree.plan import Plan, read_plan
from howtobench.tree.spec import Leaf, Tree, tree_for
from howtobench.vocabulary.metadata import ScoreKey
from howtobench.vocabulary.rounding import rounded

# How the content and format leaves are weighted: by the negotiator, or equally; any
# other value of `weights` is the path of a plan file (`howtobench.tree.plan`).
WEIGHTINGS: tuple[str, ...] = ("negotiated", "uniform")


def weighting(weights: str) -> Plan | str:
    """`negotiated`, `uniform`, or the plan read from the path `weights`."""
    return weights if weights in WEIGHTINGS else read_plan(weights)


# The formatting leaf's rule (`-T formatting=`): ours, which reads numbering and list
# structure (`tree/headings.py`), or the paper code's `score_formatting`
# (`tree/formatting_paper.py`); docs/benchmarks.md, "Formatting rules", compares them.
FORMATTINGS: dict[str, Callable[[str], FormattingVerdict]] = {
    "lenient": formatting_verdict,
    "paper": paper_formatting_verdict,
}
DEFAULT_FORMATTING = "lenient"


@scorer(
    name="tow",
    metrics={"*": [mean(), stderr()], "overall": [grouped(mean(), "genre")]},
)
@refuses_unknown("tow")
def tree_of_writing(
    judges: str | Sequence[str | Model] | None = None,
    anchor: bool = True,
    task_type: str | None = None,
    nodes: str | Sequence[str] | None = None,
    judge_samples: int = 1,
    reuse_weights: bool = True,
    weights: str = "negotiated",
    formatting: str = DEFAULT_FORMATTING,
    cache: bool = True,
    judge_temperature: float | None = None,
    tries: int = TRIES,
    judge_system: bool = True,
    genre_line: bool = True,
) -> Scorer:
    """Score a writing with the Tree-of-Writing.

    The keywords are plain values so that inspect can record them in the log and build
    the scorer again (`inspect score`, `-S name=value`); they are read here once into a
    `TreeOfWriting`, whose named steps score each writing.

    Args:
        judges: expert panel (model names or models); default the `grader` role alone. Each leaf
            score is the mean of the panel's leaf scores. The negotiator is always the
            `grader` role.
        anchor: show the judges the sample's anchor: the human reference, or the stored
            writing of another model when the sample carries one (`anchor` metadata);
            False judges reference-free.
        task_type: `completion`, `guide` or `open`; default the sample's `task` metadata.
        nodes: keep only these root nodes (`content`, `format`, `impression`), the
            paper's node ablation; default all of the task's nodes. The kept groups use
            the weights negotiated for the full tree, so an ablation changes one thing.
        judge_samples: self-consistency: judge each writing this many times, report the
            mean and record the spread.
        reuse_weights: negotiate once per instruction (default); False negotiates for
            every writing, epoch and judge sample, to study the negotiator's consistency.
        weights: `negotiated` (default); `uniform`: equal weights within each group and
            no negotiator call, the paper's "Average scoring" (ToW w/o plan, Table 3); or
            the path of a plan file (`howtobench plan export`): each instruction's weights
            as the plan gives them, and no negotiator call.
        formatting: the rule of the `formatting` leaf: `lenient`, ours (`tree/headings.py`),
            or `paper`, the paper code's (`tree/formatting_paper.py`). Each score records
            which in its metadata (`formatting`).
        cache: keep checked judge replies in the reply store (weights across epochs and
            runs; expert verdicts across runs).
        judge_temperature: judge sampling temperature; default the judge role's own, else
            0 (deterministic), or 0.7 with several `judge_samples`.
        tries: how often one question is asked before the sample is left unscored.
        judge_system: send the experts our system prompt (a strict, discriminating
            editor); False sends the question alone, as the paper's code does.
        genre_line: show the negotiator and the experts the genre line (`fiction (纪实)`,
            from our label mapping); False leaves it out, as the paper's code does.
    """
    tow = TreeOfWriting(
        judges=panel_models(judges),
        anchor=anchor,
        task_type=task_type,
        nodes=names(nodes, "nodes") or None,
        judge_samples=judge_samples,
        reuse_weights=reuse_weights,
        weighting=weighting(weights),
        formatting=choice(formatting, "formatting", tuple(FORMATTINGS)),
        cache=cache,
        judge_temperature=judge_temperature,
        tries=tries,
        judge_system=boolean(judge_system, "judge_system"),
        genre_line=boolean(genre_line, "genre_line"),
    )

    async def score(state: TaskState, target: Target) -> Score:  # inspect tags a function
        return await tow.score(state, target)

    return score


@dataclass(frozen=True)
class TreeOfWriting:
    """One ToW scorer's settings and its settled weights (one negotiation per
    instruction, owned by the scorer so that a new task or `inspect score` starts empty)."""

    judges: list[str | Model]
    anchor: bool
    task_type: str | None
    nodes: tuple[str, ...] | None
    judge_samples: int
    reuse_weights: bool
    weighting: Plan | str  # a plan, or "negotiated" / "uniform"
    formatting: str
    cache: bool
    judge_temperature: float | None
    tries: int
    judge_system: bool
    genre_line: bool
    settled: SettledWeights = field(default_factory=SettledWeights)

    @property
    def plan(self) -> Plan | None:
        return self.weighting if isinstance(self.weighting, Plan) else None

    async def score(self, state: TaskState, target: Target) -> Score:
        """The writing's score: the plan's weights looked up, then `judge_samples`
        judgings of it (`judge_writing` refuses what must not reach a judge)."""
        judge_input = replace(
            JudgeInput.from_state(state, target, self.task_type),
            judge_system=self.judge_system,
            genre_line=self.genre_line,
        )
        tree = tree_for(judge_input.task, self.nodes)
        planned = None
        if self.plan is not None and tree.negotiated:
            planned = self.plan.weights(judge_input.task, str(state.sample_id))
            if planned is None:
                return unscored(
                    "scoring_failed",
                    f"the plan {self.plan.path} has no weights for {judge_input.task} "
                    f"instruction {state.sample_id}",
                    {ScoreKey.TASK: judge_input.task, ScoreKey.PLAN: self.plan.digest},
                )
        writing = Writing(
            judge_input,
            tree,
            Asking.for_scorer(self.tries, self.cache, self.judge_temperature, self.judge_samples),
            planned,
        )
        return await judge_writing(
            state,
            judge_input,
            {ScoreKey.TASK: judge_input.task, **judge_input.seen(self.anchor)},
            self.judge_samples,
            partial(self.judge_once, writing),
        )

    async def judge_once(self, writing: Writing, scope: Mapping[str, str]) -> Score:
        """One judging of the writing: its weights and every expert at once, then the tree."""
        leaves = writing.llm_leaves
        weighed, asked = await gathered(
            self.weigh(writing, scope), self.ask_experts(writing, leaves, scope)
        )
        negotiated, reused = cast(tuple[Exchange[Weights], bool], weighed)
        verdicts = cast(list[list[Exchange[Verdict]]], asked)
        score = tree_score(
            writing,
            negotiated,
            reused,
            dict(zip((leaf.id for leaf in leaves), verdicts, strict=True)),
            anchor_seen=writing.judge_input.anchor_seen(self.anchor),
            formatting=self.formatting,
        )
        if score.metadata is not None:
            score.metadata[ScoreKey.PLAN] = self.plan.digest if self.plan else None
            score.metadata[ScoreKey.FORMATTING] = self.formatting
        return score

    async def weigh(
        self, writing: Writing, scope: Mapping[str, str]
    ) -> tuple[Exchange[Weights], bool]:
        """The writing's weights and whether they were reused: the plan's, equal ones, or
        the negotiator's (for the full tree, also in an ablation)."""
        tree = writing.tree
        if self.plan is not None:
            if writing.planned is None:  # the ablation keeps no negotiated node
                return fixed_weights(tree, "no negotiated node kept"), False
            return Exchange(model=f"plan {self.plan.digest[:12]}", value=writing.planned), True
        if self.weighting == "uniform":
            return fixed_weights(tree, "uniform: ToW w/o plan"), False
        if not tree.negotiated:
            return fixed_weights(tree, "no negotiated node kept"), False
        async with span("negotiator"):
            return await self.settled.negotiate(
                grader(),
                tree_for(tree.task),
                writing.judge_input,
                asking=writing.asking,
                reuse=self.reuse_weights,
                scope=scope,
            )

    async def ask_experts(
        self, writing: Writing, leaves: list[Leaf], scope: Mapping[str, str]
    ) -> list[list[Exchange[Verdict]]]:
        """Every panel judge's verdict on every LLM leaf, each leaf in its own span."""
        async with span("experts"):
            return await gathered(*(self.ask_panel(writing, leaf, scope) for leaf in leaves))

    async def ask_panel(
        self, writing: Writing, leaf: Leaf, scope: Mapping[str, str]
    ) -> list[Exchange[Verdict]]:
        questions = [
            judge_leaf(
                model, leaf, writing.judge_input, self.anchor, asking=writing.asking, scope=scope
            )
            for model in panel(self.judges)
        ]
        async with span(leaf.id):
            return await ask_panel(questions)


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
    given = [ex.value.score for ex in exchanges if ex.value is not None]
    mapped = [leaf.map(value) for value in given]
    for ex, value in zip(exchanges, mapped, strict=True):
        scores.by_judge.setdefault(ex.model, {})[leaf.id] = value
    scores.set(leaf, rounded(fmean(mapped)), _judged_note(leaf, given))
    scores.record[leaf.id]["score"] = scores.values[leaf.id]


def _judged_note(leaf: Leaf, given: list[float]) -> str:
    """What the judges answered; for a leaf whose scale differs from the judged one, the
    mapping too (`judged 3 on 1-10, mapped 1-3 → 0, 4-7 → 5, 8-10 → 10`), each judge's
    answer mapped before the panel's mean."""
    judged = ", ".join(f"{value:g}" for value in given)
    if leaf.mapping == "identity":
        return f"judged {judged}"
    each = "each " if len(given) > 1 else ""
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
