"""The `perturb` solver: the writing damaged before any scorer sees it (`-T perturb=`).

A damage the text undergoes by itself is an entry of `writing.damages.DAMAGES`. The one
here is the paper's third, `transfer:<genre>`: an LLM (the `perturber` role) rewrites the
writing into another genre. A rewrite that did not happen (refused, filtered, empty) is
not scored as if it were the transferred writing: the sample is marked unscorable with
the reason (`howtobench.judge.guards`), and every scorer leaves it unscored. So is a copy
a damage left unchanged (a one-sentence writing has nothing to shuffle): scored, it would
count as a damaged writing that the judge did not mark down.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from inspect_ai.model import (
    ChatMessageAssistant,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
    model_roles,
)
from inspect_ai.solver import Generate, Solver, TaskState, solver

from howtobench._inspect import PrerequisiteError
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.metadata import SampleKey
from howtobench.vocabulary.templates import render
from howtobench.vocabulary.words import replayed_writer
from howtobench.writing.damages import NAMED, PROMPTS

__all__ = ["TRANSFER_GENRES", "Perturbation", "perturb"]

TRANSFER_GENRES = ("comment", "letter", "official", "poem")
# How refusals open, in the languages of the data; only a short reply is read as one.
_REFUSAL = re.compile(
    r"^\W*(I'?m sorry|I am sorry|sorry|I can(?:not|'t)|I won'?t|I'?m unable|as an AI"
    r"|抱歉|很抱歉|对不起|我无法|我不能|无法完成|不能完成)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Perturbation:
    """A `-T perturb=` value: a damage of the table, or `transfer` and its genre."""

    kind: str
    target_genre: str | None = None

    @classmethod
    def parse(cls, spec: str) -> Perturbation:
        kind, _, genre = spec.strip().partition(":")
        if kind in NAMED and not genre:
            return cls(kind)
        if kind == "transfer" and genre in TRANSFER_GENRES:
            return cls(kind, genre)
        raise ValueError(
            f"unknown perturbation '{spec}' (expected {', '.join(NAMED)} or "
            f"transfer:<{'|'.join(TRANSFER_GENRES)}>)"
        )

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.target_genre}" if self.target_genre else self.kind


def failed_rewrite(original: str, rewrite: str, stop_reason: str) -> str | None:
    """Why a genre transfer produced no rewrite to score, or None when it did."""
    if stop_reason == "content_filter":
        return "the perturber's provider filtered the rewrite"
    if not rewrite.strip():
        return "the perturber returned an empty rewrite"
    if _REFUSAL.match(rewrite) and len(rewrite) < max(200, len(original) // 2):
        return f"the perturber refused: {' '.join(rewrite.split())[:120]}"
    return None


def rewriter() -> Model:
    """The `perturber` role; unbound it is the evaluated model, or the grader when that
    model only replays (`replay/<writer>`), which must then be bound."""
    # unbound, the evaluated model itself: inspect's fallback, chosen here on purpose (as
    # for the grader, `howtobench.judge.models.grader`)
    bound = "perturber" in model_roles()
    model = get_model(role="perturber", required=True) if bound else get_model()
    if not replayed_writer(str(model)):
        return model
    try:
        return get_model(role="grader", required=True)
    except PrerequisiteError:  # unbound, the grader would be this model again
        raise UserError(
            f"-T perturb: {model} cannot rewrite a writing; bind a model with "
            "--model-role perturber=<model> (or grader=<model>)"
        ) from None


@solver
def perturb(spec: str, seed: int = 0) -> Solver:
    """Disturb the writing (`state.output`) before the scorers see it."""
    perturbation = Perturbation.parse(spec)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        original = state.output.completion
        rng = random.Random(f"{seed}:{state.sample_id}")
        language = state.metadata.get(SampleKey.LANGUAGE, "zh")
        damage = NAMED.get(perturbation.kind)
        if damage is not None:
            text, detail = damage.function(original, rng, language)
            if detail.get("note"):
                state.metadata[SampleKey.UNSCORABLE] = (
                    f"perturbation {perturbation.name}: the writing is {detail['note']}, so "
                    "the copy is unchanged and not scored as a damaged one"
                )
        else:
            model, genre = rewriter(), perturbation.target_genre
            prompt = render(PROMPTS, f"transfer_{genre}", language, writing=original)
            output = await model.generate(prompt, config=GenerateConfig(temperature=0.0))
            text, detail = output.completion, {"model": str(model), "genre": genre}
            failed = failed_rewrite(original, text, output.stop_reason)
            if failed:
                state.metadata[SampleKey.UNSCORABLE] = f"perturbation {perturbation.name}: {failed}"
                detail["failed"] = failed
        state.metadata[SampleKey.PERTURBATION] = {
            "kind": perturbation.name,
            "seed": seed,
            "original_length": len(original),
            "length": len(text),
            **detail,
        }
        state.output = ModelOutput.from_content(state.output.model, text)
        state.messages.append(ChatMessageAssistant(content=text, model="perturbation"))
        return state

    return solve
