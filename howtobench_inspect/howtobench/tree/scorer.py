"""The Tree-of-Writing scorer: inspect wiring around the pure tree.

Per writing: the negotiator (once per instruction) and one expert call per LLM leaf and
judge run concurrently inside named spans; the formatting rule runs locally; the tree
aggregates. Any judge question that still fails after its re-asks leaves the sample
unscored with the reason, and the metadata keeps every reply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import cast

from inspect_ai.model import Model
from inspect_ai.scorer import Score, Scorer, Target, grouped, mean, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import span

from howtobench._inspect import gathered
from howtobench.judge.defaults import TRIES
from howtobench.judge.guards import unscored
from howtobench.judge.inputs import JudgeInput
from howtobench.judge.models import ask_panel, grader, panel, panel_models
from howtobench.judge.replies import Asking, Exchange, Verdict, ask
from howtobench.judge.sampling import judge_writing
from howtobench.tree.experts import expert_messages, score_form
from howtobench.tree.negotiator import SettledWeights, Weights, fixed_weights
from howtobench.tree.plan import Plan, read_plan
from howtobench.tree.spec import Leaf, tree_for
from howtobench.tree.writing_score import DEFAULT_FORMATTING, FORMATTINGS, Writing, tree_score
from howtobench.vocabulary.metadata import ScoreKey
from howtobench.vocabulary.parameter_values import boolean, choice, names, refuses_unknown

__all__ = ["TreeOfWriting", "WEIGHTINGS", "tree_of_writing", "weighting"]

# How the content and format leaves are weighted: by the negotiator, or equally; any
# other value of `weights` is the path of a plan file (`howtobench.tree.plan`).
WEIGHTINGS: tuple[str, ...] = ("negotiated", "uniform")


def weighting(weights: str) -> Plan | str:
    """`negotiated`, `uniform`, or the plan read from the path `weights`."""
    return weights if weights in WEIGHTINGS else read_plan(weights)


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
    `TreeOfWriting`, whose named steps score each writing. They mean what the writing
    tasks' parameters of the same names mean (`howtobench.parameters.writing`), except
    that `judges` may be models, `anchor` is a bool (False judges reference-free),
    `task_type` (`completion`, `guide`, `open`) overrides the sample's `task` metadata,
    `cache` keeps checked judge replies in the reply store, and `tries` is how often one
    question is asked before the sample is left unscored. The negotiator is always the
    `grader` role; a node ablation keeps the weights negotiated for the full tree.
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
        if self.weighting == "uniform":
            return fixed_weights(tree, "uniform: ToW w/o plan"), False
        if not tree.negotiated:
            return fixed_weights(tree, "no negotiated node kept"), False
        if self.plan is not None:  # `score` found the instruction's weights in it
            return Exchange(model=f"plan {self.plan.digest[:12]}", value=writing.planned), True
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
        messages = expert_messages(leaf, writing.judge_input, self.anchor)
        language = writing.judge_input.language
        questions = [
            ask(
                model,
                messages,
                score_form(leaf),
                language=language,
                asking=writing.asking,
                scope=scope,
            )
            for model in panel(self.judges)
        ]
        async with span(leaf.id):
            return await ask_panel(questions)
