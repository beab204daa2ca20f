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

from howtobench.judge.guards import unscored
from howtobench.judge.inputs import JudgeInput, judge_question
from howtobench.judge.models import ask_panel, panel, panel_models
from howtobench.judge.replies import Asking, Exchange, Form, ask
from howtobench.judge.sampling import judge_writing

# The value is the overall score, a float, so inspect names its column after the scorer
# (`rubric`, `autoplan`) and beside `tow` every column says whose score it is; the
# sub-scores go to the metadata, as their keys vary by genre.
METRICS = [mean(), stderr(), grouped(mean(), "genre")]


@dataclass(frozen=True)
class Verdict:
    """One judge's checked reply."""

    overall: float
    reason: str
    details: dict[str, Any]  # the sub-scores, recorded with the judge's reply
    summary: str  # the sub-scores on one line, for the explanation


@dataclass(frozen=True)
class Question:
    """What a baseline asks about one writing, and how it reads the reply."""

    system: str
    instructions: str  # follows the shared materials
    form: Form[Verdict]
    about: dict[str, Any] = field(default_factory=dict)  # noted in the metadata


# The panel's sub-scores for the metadata, from each judge's (model, verdict).
Pooling = Callable[[list[tuple[str, Verdict]]], dict[str, Any]]


def reason_of(reply: dict[str, Any]) -> str:
    """The judge's reason as given; a missing one is no reason to ask again."""
    reason = reply.get("reason")
    return reason if isinstance(reason, str) else ""


def single_call_judge(
    question: Callable[[JudgeInput], Question],
    pool: Pooling,
    *,
    judges: str | Sequence[str | Model] | None,
    reference: bool,
    task_type: str | None,
    samples: int,
    cache: bool,
    temperature: float | None,
    tries: int,
) -> Scorer:
    """A scorer asking every panel judge `question` once per writing and judge sample."""
    panel_judges = panel_models(judges)

    async def score(state: TaskState, target: Target) -> Score:
        judge_input = JudgeInput.from_state(state, target, task_type)
        asked = question(judge_input)
        noted = {**judge_input.seen(reference), **asked.about}
        materials = judge_input.materials(with_anchor=reference)
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=asked.system),
            judge_question(materials, asked.instructions),
        ]
        asking = Asking.for_scorer(tries, cache, temperature, samples)

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
                for model in panel(panel_judges)
            ]
            exchanges = await ask_panel(questions)
            return panel_score(exchanges, pool, noted)

        return await judge_writing(state, judge_input, noted, samples, judge_once)

    return score


def panel_score(exchanges: list[Exchange[Verdict]], pool: Pooling, noted: dict[str, Any]) -> Score:
    """The panel's mean overall, or unscored with every failed judge's error."""
    metadata: dict[str, Any] = {**noted, "judges": [_judge_record(ex) for ex in exchanges]}
    verdicts = [(ex.model, ex.value) for ex in exchanges if ex.value is not None]
    if len(verdicts) < len(exchanges):
        reason = "; ".join(f"{ex.model}: {ex.error}" for ex in exchanges if ex.value is None)
        return unscored("grader_failed", reason, metadata)
    overall = fmean(v.overall for _, v in verdicts)
    metadata.update(pool(verdicts))
    if len(verdicts) == 1:
        metadata["reason"] = verdicts[0][1].reason
    else:
        metadata["reason"] = "\n".join(f"{model}: {v.reason}" for model, v in verdicts)
        metadata["by_judge"] = {model: v.overall for model, v in verdicts}
    head = f"overall {overall:.2f}"
    if len(verdicts) > 1:
        head += f" = mean of {len(verdicts)} judges"
    lines = [head] + [
        f"{model}: overall {v.overall:g} | {v.summary}\n  {v.reason}" for model, v in verdicts
    ]
    return Score(value=overall, explanation="\n".join(lines), metadata=metadata)


def _judge_record(exchange: Exchange[Verdict]) -> dict[str, Any]:
    verdict = exchange.value
    if verdict is None:
        return {**exchange.record(), "overall": None}
    return {
        **exchange.record(),
        "overall": verdict.overall,
        "reason": verdict.reason,
        **verdict.details,
    }
