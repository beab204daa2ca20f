"""What the single-call LLM judges share: one question per writing, panel judge and judge sample.

The Elaborated Rubric and Auto-Plan baselines differ only in what they ask and how they
read the reply. The rest is the same for both and lives here: the shared materials first
and the question last (so a provider's prompt cache can reuse the prefix), re-asks with
the error stated, the panel mean, self-consistency with one cache entry per judge sample,
unscored samples with the reason, and the record of every reply.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageSystem, Model
from inspect_ai.scorer import Score, Scorer, Target, grouped, mean, stderr
from inspect_ai.solver import TaskState

from howtobench.judge.defaults import TRIES
from howtobench.judge.guards import unscored
from howtobench.judge.inputs import JudgeInput, judge_question
from howtobench.judge.models import ask_panel, panel, panel_models
from howtobench.judge.reading import Form
from howtobench.judge.replies import Asking, Exchange, Verdict, ask
from howtobench.judge.sampling import judge_writing
from howtobench.vocabulary.parameter_values import signature_of
from howtobench.vocabulary.rounding import rounded

__all__ = [
    "METRICS",
    "Question",
    "SingleCallSettings",
    "single_call_judge",
    "single_call_parameters",
]

# The value is the overall score, a float, so inspect names its column after the scorer
# (`rubric`, `autoplan`) and beside `tow` every column says whose score it is; the
# sub-scores go to the metadata, as their keys vary by genre.
METRICS = [mean(), stderr(), grouped(mean(), "genre")]


@dataclass(frozen=True)
class Question:
    """What a baseline asks about one writing, and how it reads the reply."""

    system: str
    instructions: str  # follows the shared materials
    form: Form[Verdict]
    about: dict[str, Any] = field(default_factory=dict)  # noted in the metadata


# The panel's sub-scores for the metadata, from each judge's (model, verdict).
Pooling = Callable[[list[tuple[str, Verdict]]], dict[str, Any]]


@dataclass(frozen=True)
class SingleCallSettings:
    """The parameters of every single-call judge scorer (`rubric`, `autoplan`). They mean
    what the `tow` scorer's of the same names mean; each panel judge answers separately,
    and the score is the panel's mean."""

    judges: str | Sequence[str | Model] | None = None
    anchor: bool = True
    task_type: str | None = None
    judge_samples: int = 1
    cache: bool = True
    judge_temperature: float | None = None
    tries: int = TRIES


# A single-call judge scorer takes `SingleCallSettings`' parameters.
single_call_parameters = signature_of(SingleCallSettings)


def single_call_judge(
    question: Callable[[JudgeInput], Question], pool: Pooling, settings: SingleCallSettings
) -> Scorer:
    """A scorer asking every panel judge `question` once per writing and judge sample."""

    judges = panel_models(settings.judges)

    async def score(state: TaskState, target: Target) -> Score:
        judge_input = JudgeInput.from_state(state, target, settings.task_type)
        asked = question(judge_input)
        noted = {**judge_input.seen(settings.anchor), **asked.about}
        materials = judge_input.materials(with_anchor=settings.anchor)
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=asked.system),
            judge_question(materials, asked.instructions),
        ]
        asking = Asking.for_scorer(
            settings.tries, settings.cache, settings.judge_temperature, settings.judge_samples
        )

        async def judge_once(scope: Mapping[str, str]) -> Score:
            questions = [
                ask(
                    model,
                    messages,
                    asked.form,
                    language=judge_input.language,
                    asking=asking,
                    scope=scope,
                )
                for model in panel(judges)
            ]
            exchanges = await ask_panel(questions)
            return panel_score(exchanges, pool, noted)

        return await judge_writing(state, judge_input, noted, settings.judge_samples, judge_once)

    return score


def panel_score(exchanges: list[Exchange[Verdict]], pool: Pooling, noted: dict[str, Any]) -> Score:
    """The panel's mean overall, or unscored with every failed judge's error."""
    metadata: dict[str, Any] = {**noted, "judges": [_judge_record(ex) for ex in exchanges]}
    verdicts = [(ex.model, ex.value) for ex in exchanges if ex.value is not None]
    if len(verdicts) < len(exchanges):
        reason = "; ".join(f"{ex.model}: {ex.error}" for ex in exchanges if ex.value is None)
        return unscored("grader_failed", reason, metadata)
    overall = rounded(fmean(v.score for _, v in verdicts))
    metadata.update(pool(verdicts))
    head = f"overall {overall:.2f}"
    if len(verdicts) == 1:
        metadata["reason"] = verdicts[0][1].reason
    else:
        metadata["reason"] = "\n".join(f"{model}: {v.reason}" for model, v in verdicts)
        metadata["by_judge"] = {model: v.score for model, v in verdicts}
        head += f" = mean of {len(verdicts)} judges"
    lines = [head] + [
        f"{model}: overall {v.score:g} | {v.summary}\n  {v.reason}" for model, v in verdicts
    ]
    return Score(value=overall, explanation="\n".join(lines), metadata=metadata)


def _judge_record(exchange: Exchange[Verdict]) -> dict[str, Any]:
    verdict = exchange.value
    if verdict is None:
        return {**exchange.record(), "overall": None}
    return {
        **exchange.record(),
        "overall": verdict.score,
        "reason": verdict.reason,
        **verdict.details,
    }
