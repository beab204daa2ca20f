"""The Tree-of-Writing scorer: inspect wiring around the pure tree.

Per writing: the negotiator (once per instruction) and one expert call per LLM leaf and
judge run concurrently inside named spans; the formatting rule runs locally; the tree
aggregates. Any judge question that still fails after its re-asks leaves the sample
unscored with the reason, and the metadata keeps every reply.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import fmean
from typing import Any

from inspect_ai.model import GenerateConfig, Model, get_model
from inspect_ai.scorer import Score, Scorer, Target, grouped, mean, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import collect, span

from howtobench.judge.inputs import JudgeInput
from howtobench.judge.replies import Exchange
from howtobench.tree.aggregate import render, score_value
from howtobench.tree.experts import Verdict, judge_leaf
from howtobench.tree.headings import formatting_verdict
from howtobench.tree.negotiator import Weights, negotiate
from howtobench.tree.spec import Leaf, Tree, tree_for


def panel_models(judges: str | Sequence[str | Model] | None) -> list[str | Model]:
    """A comma list of model names (from the CLI), or a list of names and models."""
    if not judges:
        return []
    items = judges.split(",") if isinstance(judges, str) else list(judges)
    return [
        j.strip() if isinstance(j, str) else j for j in items if not isinstance(j, str) or j.strip()
    ]


def grader() -> Model:
    """inspect's `grader` role; with none bound, inspect gives the evaluated model."""
    model = get_model(role="grader")
    if str(model) == "none/none":
        raise ValueError(
            "Tree-of-Writing needs a judge model: bind one with --model-role grader=<model> "
            "(the evaluated model is 'none', as in replay runs)"
        )
    return model


@scorer(
    name="tow",
    metrics={"*": [mean(), stderr()], "overall": [grouped(mean(), "genre")]},
)
def tree_of_writing(
    judges: str | Sequence[str | Model] | None = None,
    reference: bool = True,
    task_type: str | None = None,
    cache: bool = True,
    temperature: float = 0.0,
    tries: int = 3,
) -> Scorer:
    """Score a writing with the Tree-of-Writing.

    Args:
        judges: expert panel (model names or models); default the `grader` role alone. Each leaf
            score is the mean of the panel's leaf scores. The negotiator is always the
            `grader` role.
        reference: show the human reference to the judges as an anchor (a good answer);
            False judges reference-free.
        task_type: `completion`, `guide` or `open`; default the sample's `task` metadata.
        cache: reuse judge replies through inspect's generate cache (weights across
            epochs and runs; expert verdicts across runs).
        temperature: judge sampling temperature (0: deterministic).
        tries: how often one question is asked before the sample is left unscored.
    """
    panel_judges = panel_models(judges)
    config = GenerateConfig(temperature=temperature)

    async def score(state: TaskState, target: Target) -> Score:
        judge_input = JudgeInput.from_state(state, target, task_type)
        tree = tree_for(judge_input.task)
        negotiator_model = grader()
        panel = [get_model(judge) for judge in panel_judges] or [negotiator_model]
        writing_is_empty = not judge_input.writing.strip()
        materials = judge_input.materials(judge_input.reference if reference else None)
        llm_leaves = (
            [] if writing_is_empty else [leaf for leaf in tree.leaves if leaf.judge == "llm"]
        )

        async def negotiation() -> tuple[Exchange[Weights], bool]:
            async with span("negotiator"):
                return await negotiate(
                    negotiator_model, tree, judge_input, tries=tries, config=config, cache=cache
                )

        async def leaf_panel(leaf: Leaf) -> list[Exchange[Verdict]]:
            questions = [
                judge_leaf(
                    model,
                    leaf,
                    materials,
                    judge_input.language,
                    tries=tries,
                    config=config,
                    cache=cache,
                )
                for model in panel
            ]
            async with span(leaf.id):
                if len(questions) == 1:
                    return [await questions[0]]
                return await collect(*questions)

        async def experts() -> list[list[Exchange[Verdict]]]:
            async with span("experts"):
                return await collect(*(leaf_panel(leaf) for leaf in llm_leaves))

        (negotiated, reused), verdicts = await collect(negotiation(), experts())
        return _tree_score(
            tree,
            judge_input,
            negotiated,
            reused,
            dict(zip((leaf.id for leaf in llm_leaves), verdicts, strict=True)),
            reference_mode="human" if reference else "none",
        )

    return score


def _tree_score(
    tree: Tree,
    judge_input: JudgeInput,
    negotiated: Exchange[Weights],
    reused: bool,
    verdicts: dict[str, list[Exchange[Verdict]]],
    reference_mode: str,
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
            verdict = formatting_verdict(judge_input.writing)
            leaves[leaf.id] = float(verdict.score)
            notes[leaf.id] = f"rule: {verdict.reason}"
            record[leaf.id] = {
                "score": float(verdict.score),
                "judged_by": "rule",
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
    metadata = {
        "task": judge_input.task,
        "reference": reference_mode,
        "empty_writing": empty,
        "weights": weights.values if weights else None,
        "negotiator": {
            **negotiated.record(),
            "explanation": weights.explanation if weights else None,
            "renormalised": list(weights.renormalised) if weights else [],
            "reused": reused,
        },
        "leaves": record,
    }
    if failures:
        return Score.unscored(reason="; ".join(failures), metadata=metadata)
    assert weights is not None
    value = score_value(tree, weights.values, leaves)
    if len(by_judge) > 1:  # what each panel judge alone would have given
        metadata["by_judge"] = {
            model: score_value(tree, weights.values, {**leaves, **own})["overall"]
            for model, own in by_judge.items()
        }
    return Score(
        value=value, explanation=render(tree, weights.values, value, notes), metadata=metadata
    )
