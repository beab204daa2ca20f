"""The Tree-of-Writing scorer: inspect wiring around the pure tree.

Per writing: the negotiator (once per instruction) and one expert call per LLM leaf and
judge run concurrently inside named spans; the formatting rule runs locally; the tree
aggregates. Any judge question that still fails after its re-asks leaves the sample
unscored with the reason, and the metadata keeps every reply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from statistics import fmean
from typing import Any, cast

from inspect_ai.model import Model
from inspect_ai.scorer import Score, Scorer, Target, grouped, mean, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import collect, span

from howtobench.judge.guards import unscored
from howtobench.judge.inputs import JudgeInput
from howtobench.judge.models import ask_panel, grader, panel, panel_models
from howtobench.judge.replies import Asking, Exchange
from howtobench.judge.sampling import judge_writing
from howtobench.metadata import ScoreKey
from howtobench.parameters import choice, names
from howtobench.tree.aggregate import aggregate, render
from howtobench.tree.experts import Verdict, judge_leaf
from howtobench.tree.formatting_paper import paper_formatting_verdict
from howtobench.tree.headings import FormattingVerdict, formatting_verdict
from howtobench.tree.negotiator import SettledWeights, Weights, fixed_weights, weights_record
from howtobench.tree.plan import Plan, read_plan
from howtobench.tree.spec import Leaf, Tree, tree_for

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
def tree_of_writing(
    judges: str | Sequence[str | Model] | None = None,
    reference: bool = True,
    task_type: str | None = None,
    nodes: str | Sequence[str] | None = None,
    samples: int = 1,
    reuse_weights: bool = True,
    weights: str = "negotiated",
    formatting: str = DEFAULT_FORMATTING,
    cache: bool = True,
    temperature: float | None = None,
    tries: int = 3,
) -> Scorer:
    """Score a writing with the Tree-of-Writing.

    Args:
        judges: expert panel (model names or models); default the `grader` role alone. Each leaf
            score is the mean of the panel's leaf scores. The negotiator is always the
            `grader` role.
        reference: show the judges an anchor text: the human reference, or the stored
            writing of another model when the sample carries one (`anchor` metadata);
            False judges reference-free.
        task_type: `completion`, `guide` or `open`; default the sample's `task` metadata.
        nodes: keep only these root nodes (`content`, `format`, `impression`), the
            paper's node ablation; default all of the task's nodes. The kept groups use
            the weights negotiated for the full tree, so an ablation changes one thing.
        samples: self-consistency: judge each writing this many times, report the mean
            and record the spread.
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
        temperature: judge sampling temperature; default the judge role's own, else 0
            (deterministic), or 0.7 with several `samples`.
        tries: how often one question is asked before the sample is left unscored.
    """
    panel_judges = panel_models(judges)
    kept_nodes = names(nodes, "nodes") or None
    settled = SettledWeights()  # this scorer's weights, one negotiation per instruction
    plan = weighting(weights)
    rule = choice(formatting, "formatting", tuple(FORMATTINGS))

    async def score(state: TaskState, target: Target) -> Score:
        judge_input = JudgeInput.from_state(state, target, task_type)
        tree = tree_for(judge_input.task, kept_nodes)
        asking = Asking.for_scorer(tries, cache, temperature, samples)
        planned = None
        if isinstance(plan, Plan) and tree.negotiated:
            planned = plan.weights(judge_input.task, str(state.sample_id))
            if planned is None:
                return unscored(
                    "scoring_failed",
                    f"the plan {plan.path} has no weights for {judge_input.task} "
                    f"instruction {state.sample_id}",
                    {ScoreKey.TASK: judge_input.task, ScoreKey.PLAN: plan.digest},
                )
        return await judge_writing(
            state,
            judge_input,
            {ScoreKey.TASK: judge_input.task, **judge_input.seen(reference)},
            samples,
            lambda scope: judge_once(judge_input, tree, asking, scope, planned),
        )

    async def judge_once(
        judge_input: JudgeInput,
        tree: Tree,
        asking: Asking,
        scope: Mapping[str, str],
        planned: Weights | None,
    ) -> Score:
        judges = panel(panel_judges)
        writing_is_empty = not judge_input.writing.strip()
        llm_leaves = (
            [] if writing_is_empty else [leaf for leaf in tree.leaves if leaf.judge == "llm"]
        )

        async def negotiation() -> tuple[Exchange[Weights], bool]:
            if isinstance(plan, Plan):
                if planned is None:  # the ablation keeps no negotiated node
                    return fixed_weights(tree, "no negotiated node kept"), False
                return Exchange(model=f"plan {plan.digest[:12]}", value=planned), True
            if weights == "uniform":
                return fixed_weights(tree, "uniform: ToW w/o plan"), False
            if not tree.negotiated:
                return fixed_weights(tree, "no negotiated node kept"), False
            async with span("negotiator"):
                return await settled.negotiate(
                    grader(),
                    tree_for(tree.task),  # the full tree's weights, also in an ablation
                    judge_input,
                    asking=asking,
                    reuse=reuse_weights,
                    scope=scope,
                )

        async def leaf_panel(leaf: Leaf) -> list[Exchange[Verdict]]:
            questions = [
                judge_leaf(model, leaf, judge_input, reference, asking=asking, scope=scope)
                for model in judges
            ]
            async with span(leaf.id):
                return await ask_panel(questions)

        async def experts() -> list[list[Exchange[Verdict]]]:
            async with span("experts"):
                return await collect(*(leaf_panel(leaf) for leaf in llm_leaves))

        both = await collect(negotiation(), experts())
        negotiated, reused = cast(tuple[Exchange[Weights], bool], both[0])
        verdicts = cast(list[list[Exchange[Verdict]]], both[1])
        score = _tree_score(
            tree,
            judge_input,
            negotiated,
            reused,
            dict(zip((leaf.id for leaf in llm_leaves), verdicts, strict=True)),
            reference_mode=judge_input.anchor_seen(reference),
            formatting=rule,
        )
        if score.metadata is not None:
            score.metadata[ScoreKey.PLAN] = plan.digest if isinstance(plan, Plan) else None
            score.metadata[ScoreKey.FORMATTING] = rule
        return score

    return score


def _tree_score(
    tree: Tree,
    judge_input: JudgeInput,
    negotiated: Exchange[Weights],
    reused: bool,
    verdicts: dict[str, list[Exchange[Verdict]]],
    reference_mode: str,
    formatting: str,
) -> Score:
    """Leaf scores, failures and the full record of one writing, aggregated into a Score."""
    failures: list[str] = []
    leaves: dict[str, float] = {}
    notes: dict[str, str] = {}
    record: dict[str, Any] = {}
    by_judge: dict[str, dict[str, float]] = {}  # each panel judge's own leaf scores
    empty = not judge_input.writing.strip()
    for leaf in tree.leaves:
        if empty:
            leaves[leaf.id] = leaf.minimum
            notes[leaf.id] = "empty writing: lowest score, not judged"
            record[leaf.id] = {"score": leaf.minimum, "judged_by": "none (empty writing)"}
        elif leaf.judge == "rule":
            verdict = FORMATTINGS[formatting](judge_input.writing)
            leaves[leaf.id] = float(verdict.score)
            notes[leaf.id] = f"{formatting} rule: {verdict.reason}"
            record[leaf.id] = {
                "score": float(verdict.score),
                "judged_by": "rule",
                "rule": formatting,
                "reason": verdict.reason,
            }
        else:
            exchanges = verdicts[leaf.id]
            judges = [
                {
                    **ex.record(),
                    "score": ex.value.score if ex.value else None,
                    "reason": ex.value.reason if ex.value else None,
                }
                for ex in exchanges
            ]
            failed = [ex for ex in exchanges if ex.value is None]
            failures += [f"{leaf.id} ({ex.model}): {ex.error}" for ex in failed]
            record[leaf.id] = {"judged_by": "llm", "judges": judges}
            if failed:
                continue
            mapped = [leaf.map(ex.value.score) for ex in exchanges if ex.value is not None]
            leaves[leaf.id] = fmean(mapped)
            for ex, score in zip(exchanges, mapped, strict=True):
                by_judge.setdefault(ex.model, {})[leaf.id] = score
            record[leaf.id]["score"] = leaves[leaf.id]
            judged = ", ".join(f"{ex.value.score:g}" for ex in exchanges if ex.value is not None)
            notes[leaf.id] = (
                f"judged {judged}"
                if leaf.mapping == "identity"
                else f"judged {judged} on {leaf.low}-{leaf.high}"
            )
    weights = negotiated.value
    if weights is None:
        failures.insert(0, f"negotiator ({negotiated.model}): {negotiated.error}")
    metadata: dict[str, Any] = {
        ScoreKey.TASK: judge_input.task,
        ScoreKey.REFERENCE: reference_mode,
        ScoreKey.EMPTY_WRITING: empty,
        **weights_record(negotiated, reused),
        ScoreKey.LEAVES: record,
        ScoreKey.CLIPPED: {},
    }
    if judge_input.cleaned:
        metadata[ScoreKey.WRITING_CLEANED] = judge_input.cleaned
    if failures:
        return unscored("grader_failed", "; ".join(failures), metadata)
    assert weights is not None
    result = aggregate(tree, weights.values, leaves)
    metadata[ScoreKey.CLIPPED] = result.clipped
    if len(by_judge) > 1:  # what each panel judge alone would have given
        metadata[ScoreKey.BY_JUDGE] = {
            model: aggregate(tree, weights.values, {**leaves, **own}).value["overall"]
            for model, own in by_judge.items()
        }
    return Score(
        value=result.value,
        explanation=render(tree, weights.values, result, notes),
        metadata=metadata,
    )
