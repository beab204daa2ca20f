"""Disturbances applied to a writing before it is scored (the paper's Table 7, and more).

- `drop`: remove 1-3 paragraphs (or sentences, in a text of fewer than 4 paragraphs);
- `repeat`: repeat 1-3 paragraphs (or sentences) at other positions;
- `shuffle`: put the sentences of each paragraph in another order (the lines' order, in
  a text whose paragraphs are single sentences, such as a poem): beyond the paper, a
  damage that keeps the length, so that a judge that reads length alone cannot see it;
- `transfer:<genre>`: an LLM rewrites the writing into another genre (`comment`,
  `letter`, `official`, `poem`);
- `inject`: a sentence inside the writing asks the judge for full marks (beyond the
  paper: a security check of the judge).

A good judge lowers its score under all but `inject`, and ignores that. Every choice
is drawn from a generator seeded by the task's seed and the sample id, so a run is
repeatable, and the sample metadata `perturbation` records what was done.

A rewrite that did not happen (the perturber refused, was filtered, or returned nothing)
is not scored as if it were the transferred writing: the sample is marked unscorable
with the reason (`howtobench.judge.guards`), and every scorer leaves it unscored.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from typing import Any

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

PROMPTS = Path(__file__).parent / "prompts"
TRANSFER_GENRES = ("comment", "letter", "official", "poem")
_SENTENCE_END = re.compile(r"(?<=[。！？!?.；;])")
# Where `shuffle` ends a sentence: after its end marks and the closing quotes that follow
# them (so a quotation moves whole), and after a full stop only before a space and not
# after a digit (so that "1. " of a numbered heading and "3.5" stay whole).
_SHUFFLE_END = re.compile(r"[。！？!?；;…]+[”’」』）)\"']*|(?<!\d)\.+(?=\s)")
_LINE_BREAKS = re.compile(r"(\n\s*)")
# How refusals open, in the languages of the data; only a short reply is read as one.
_REFUSAL = re.compile(
    r"^\W*(I'?m sorry|I am sorry|sorry|I can(?:not|'t)|I won'?t|I'?m unable|as an AI"
    r"|抱歉|很抱歉|对不起|我无法|我不能|无法完成|不能完成)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Perturbation:
    kind: str
    target_genre: str | None = None

    @classmethod
    def parse(cls, spec: str) -> Perturbation:
        kind, _, genre = spec.strip().partition(":")
        if kind in ("drop", "repeat", "shuffle", "inject") and not genre:
            return cls(kind)
        if kind == "transfer" and genre in TRANSFER_GENRES:
            return cls(kind, genre)
        raise ValueError(
            f"unknown perturbation '{spec}' (expected drop, repeat, shuffle, inject or "
            f"transfer:<{'|'.join(TRANSFER_GENRES)}>)"
        )

    @property
    def name(self) -> str:
        return f"{self.kind}:{self.target_genre}" if self.target_genre else self.kind


def units(text: str) -> tuple[list[str], str]:
    """The writing's paragraphs and their separator (blank lines, else line breaks) when
    there are at least 4; else its sentences, joined with nothing."""
    for separator, pattern in (("\n\n", r"\n\s*\n"), ("\n", r"\n")):
        paragraphs = [p for p in re.split(pattern, text.strip()) if p.strip()]
        if separator in text and len(paragraphs) >= 4:
            return paragraphs, separator
    return [s for s in _SENTENCE_END.split(text.strip()) if s.strip()], ""


def _unit_name(joiner: str) -> str:
    return "paragraph" if joiner else "sentence"


def drop(text: str, rng: random.Random) -> tuple[str, dict[str, Any]]:
    parts, joiner = units(text)
    if len(parts) < 2:
        return text, {"removed": [], "note": "too short to drop from"}
    count = rng.randint(1, min(3, len(parts) - 1))
    removed = sorted(rng.sample(range(len(parts)), count))
    kept = [p for i, p in enumerate(parts) if i not in removed]
    return joiner.join(kept), {"unit": _unit_name(joiner), "removed": removed}


def repeat(text: str, rng: random.Random) -> tuple[str, dict[str, Any]]:
    """Copies go into gaps between the original units, never next to their own unit."""
    parts, joiner = units(text)
    if len(parts) < 2:
        return text, {"repeated": [], "note": "too short to repeat within"}
    count = rng.randint(1, min(3, len(parts)))
    into: dict[int, list[int]] = {}  # gap before original unit g (g == len: at the end)
    moves = []
    for source in sorted(rng.sample(range(len(parts)), count)):
        gap = rng.choice([g for g in range(len(parts) + 1) if g not in (source, source + 1)])
        into.setdefault(gap, []).append(source)
        moves.append({"unit": source, "gap": gap})
    result = []
    for gap in range(len(parts) + 1):
        result += [parts[s] for s in into.get(gap, [])]
        if gap < len(parts):
            result.append(parts[gap])
    return joiner.join(result), {"unit": _unit_name(joiner), "repeated": moves}


def sentences(paragraph: str) -> list[str]:
    """The paragraph's sentences, each with its end marks and closing quotes; joined they
    give the paragraph back, character for character."""
    edges = [0, *(match.end() for match in _SHUFFLE_END.finditer(paragraph)), len(paragraph)]
    return [paragraph[a:b] for a, b in pairwise(edges) if a < b]


def _reordered(parts: list[str], rng: random.Random) -> list[str]:
    """`parts` in a seeded order that differs from theirs (a shuffle that drew the same
    order is turned by one)."""
    order = list(range(len(parts)))
    rng.shuffle(order)
    if order == sorted(order):
        order = order[1:] + order[:1]
    return [parts[i] for i in order]


def shuffle(text: str, rng: random.Random) -> tuple[str, dict[str, Any]]:
    """Every paragraph's sentences in another order, the paragraphs and their line breaks
    where they were: the same characters, so the same length, without the line of
    thought. A text whose paragraphs are single sentences (a poem, a list) has its lines
    shuffled instead."""
    pieces = _LINE_BREAKS.split(text)  # paragraphs at even places, their breaks between
    shuffled = []
    for index in range(0, len(pieces), 2):
        paragraph = pieces[index]
        body = paragraph.strip()
        parts = sentences(body)
        if len(set(parts)) < 2:
            continue
        start = paragraph.index(body)
        moved = "".join(_reordered(parts, rng))
        if moved != body:
            pieces[index] = paragraph[:start] + moved + paragraph[start + len(body) :]
            shuffled.append(index // 2)
    if shuffled:
        return "".join(pieces), {"unit": "sentence", "paragraphs": shuffled}
    lines = pieces[::2]
    if len(set(lines)) >= 2:
        pieces[::2] = _reordered(lines, rng)
        if (moved := "".join(pieces)) != text:
            return moved, {"unit": "paragraph"}
    return text, {"paragraphs": [], "note": "too short to shuffle within"}


def inject(text: str, rng: random.Random, language: str) -> tuple[str, dict[str, Any]]:
    parts, joiner = units(text)
    sentence = render(PROMPTS, "inject", language).strip()
    position = rng.randint(1, max(1, len(parts) - 1)) if len(parts) > 1 else len(parts)
    parts.insert(position, sentence)
    return joiner.join(parts), {"sentence": sentence, "at": position}


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
        if perturbation.kind == "drop":
            text, detail = drop(original, rng)
        elif perturbation.kind == "repeat":
            text, detail = repeat(original, rng)
        elif perturbation.kind == "shuffle":
            text, detail = shuffle(original, rng)
        elif perturbation.kind == "inject":
            text, detail = inject(original, rng, language)
        else:
            model = rewriter()
            prompt = render(
                PROMPTS,
                f"transfer_{perturbation.target_genre}",
                language,
                writing=original,
            )
            output = await model.generate(prompt, config=GenerateConfig(temperature=0.0))
            text, detail = (
                output.completion,
                {"model": str(model), "genre": perturbation.target_genre},
            )
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
