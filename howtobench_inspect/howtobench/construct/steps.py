"""What every LLM step of the build shares: one question per text, its reply checked and
asked again with the error stated, then the checked answer or the failure with its
reason, never a default. The solver asks through the judges' `ask`, so only a checked
reply is kept in the reply store and a rerun asks again exactly the questions that failed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from statistics import fmean
from typing import Any

from inspect_ai import Epochs, Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    get_model,
)
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, ScoreReason, metric
from inspect_ai.solver import Generate, Solver, TaskState, solver

from howtobench._inspect import eval_running, writer_temperature
from howtobench.construct.corpus import CorpusText, read_corpus
from howtobench.construct.prompts import build_prompt
from howtobench.dataset.records import DataError
from howtobench.judge.defaults import JUDGE_MAX_RETRIES, LONGEST_WRITING
from howtobench.judge.guards import unscored
from howtobench.judge.inputs import clean_text, fence
from howtobench.judge.reading import Form, ReplyError
from howtobench.judge.replies import Asking, ask
from howtobench.judge.store import ReplyStore
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.parameter_values import ParameterError

__all__ = [
    "ANSWER",
    "Step",
    "answered_means",
    "ask_step",
    "corpus_texts",
    "fenced",
    "step_sample",
    "step_score",
    "step_task",
    "text_of",
    "text_sample",
]

TRIES = 3  # the first ask and two re-asks, as for the judges
ANSWER = "answer"  # sample metadata: what the solver got, for the scorer
_REFUSED = "refused"  # sample metadata: why the question was not sent at all


@dataclass(frozen=True)
class Step:
    """One LLM step: its name, the keys that mark its answer, and the check that turns
    the answer into a record or raises `ReplyError`. (An object, not a function, because
    inspect records its `name` in the plan: `ask_step(classify)`.)"""

    name: str
    keys: tuple[str, ...]
    check: Callable[[dict[str, Any], Mapping[str, Any]], dict[str, Any]]

    def form(self, metadata: Mapping[str, Any]) -> Form[dict[str, Any]]:
        return Form(self.keys, lambda reply: self.check(reply, metadata))


def fenced(text: str) -> str:
    """A text as the steps show it: cleaned of what a request cannot carry, between the
    `<writing>` fences the judges use (a closing fence inside it is defused)."""
    return fence(clean_text(text)[0])


def step_sample(
    sample_id: str, system: str, prompt: str, metadata: dict[str, Any], text: str
) -> Sample:
    """A sample asking one question about `text`; one longer than the judges' limit is
    not sent, and the sample records why."""
    if len(text) > LONGEST_WRITING:
        refused = (
            f"the text has {len(text):,} characters, more than the {LONGEST_WRITING:,} "
            "a model is sent; it was not asked about"
        )
        return Sample(id=sample_id, input=refused, metadata={**metadata, _REFUSED: refused})
    return Sample(
        id=sample_id,
        input=[ChatMessageSystem(content=system), ChatMessageUser(content=prompt)],
        metadata=metadata,
    )


def text_sample(step: Step, text: CorpusText, metadata: dict[str, Any], **values: str) -> Sample:
    """A sample asking `step`'s question about a corpus text, in the text's language."""
    language = text.language
    prompt = build_prompt(step.name, language, text=fenced(text.text), **values)
    system = build_prompt(f"{step.name}_system", language)
    return step_sample(text.id, system, prompt, {"language": language, **metadata}, text.text)


@solver
def ask_step(step: Step, temperature: float | None = None) -> Solver:
    """Ask the sample's question until the reply passes the step's check (`TRIES` times
    at most); record the checked answer or the last error."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        refused = state.metadata.get(_REFUSED)
        if refused:
            state.metadata[ANSWER] = {"value": None, "error": refused, "replies": []}
            return state
        model = get_model()
        store = ReplyStore.beside_inspect_cache()
        exchange = await ask(
            model,
            state.messages,
            step.form(state.metadata),
            language=state.metadata["language"],
            asking=Asking(TRIES, store, temperature),
            scope={"step": step.name},
        )
        if exchange.replies:
            state.output = ModelOutput.from_content(str(model), exchange.replies[-1])
        state.metadata[ANSWER] = {**exchange.record(), "value": exchange.value}
        return state

    return solve


def step_score(state: TaskState, present: Callable[[dict[str, Any]], Score]) -> Score:
    """`present(answer)` for a checked answer, else unscored with the reason."""
    answer: dict[str, Any] = state.metadata[ANSWER]
    value = answer.get("value")
    if value is None:
        code: ScoreReason = "invalid_response_format" if answer.get("replies") else "no_response"
        return unscored(code, answer["error"], answer)
    score = present(value)
    score.metadata = answer
    return score


@metric
def answered_means(keys: list[str]) -> Metric:
    """The mean of each of `keys` over the texts that got a checked answer; None (left
    out of the results, rather than inspect's `nan`) where no text got one."""

    def compute(scores: list[SampleScore]) -> dict[str, float | None]:
        answers = [s.score.value for s in scores if isinstance(s.score.value, dict)]
        return {
            key: fmean(float(answer[key]) for answer in answers) if answers else None
            for key in keys
        }

    return compute


def step_task(
    step: Step,
    samples: list[Sample],
    scorer: Scorer,
    metadata: dict[str, Any],
    reducer: str = "mean",
) -> Task:
    """The inspect task of a step over its samples. `reducer` folds a sample's epochs:
    `mode` for a score that is a name (inspect's `mean` would make it a number)."""
    _check_model()
    return Task(
        dataset=MemoryDataset(samples, name=f"howtobench-{step.name}"),
        solver=ask_step(step, writer_temperature()),
        scorer=scorer,
        epochs=Epochs(1, reducer),
        metadata={"howtobench_step": step.name, **metadata},
        # bounded retries, as for the judges: a dead endpoint ends the step in about a
        # minute instead of retrying forever; --max-retries overrides it
        config=GenerateConfig(max_retries=JUDGE_MAX_RETRIES),
        version=1,
    )


def _check_model() -> None:
    """`--model none` cannot answer a step's questions. (Only under `inspect eval` is the
    model known while the task is built.)"""
    if not eval_running():
        return
    try:
        model = get_model()
    except ValueError:
        return
    if str(model) == "none/none":
        raise UserError("the build steps ask a model: give one with --model <model>")


def corpus_texts(corpus: str | None, *, genre_needed: bool = False) -> list[CorpusText]:
    """The `corpus` task parameter, read and checked (each text's genre, if needed)."""
    if not corpus:
        raise ParameterError("corpus", "give the corpus file: -T corpus=texts.jsonl")
    texts = read_corpus(Path(corpus).expanduser())
    for text in texts if genre_needed else ():
        if not text.genre:
            raise DataError(
                corpus,
                "missing: this step reads the genre's rubric (give the genre, or "
                "classify the texts first; howtobench build does both)",
                text.line,
                "genre",
            )
    return texts


def text_of(reply: Mapping[str, Any], key: str) -> str:
    """A non-empty string field of a reply, stripped."""
    value = reply.get(key)
    if not isinstance(value, str) or not value.strip():
        raise ReplyError(f'"{key}" must be a non-empty string')
    return value.strip()
