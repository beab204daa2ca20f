"""Scorer selection by name, for the `scorers=` task parameter, with the judge options
each scorer takes.

Every option reaches exactly the scorers that use it, through an explicit builder per
scorer; an option that none of the chosen scorers takes is refused rather than dropped
(`nodes` with `scorers=rubric` would otherwise do nothing, silently).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

from inspect_ai.scorer import Scorer

from howtobench.baselines.autoplan import autoplan
from howtobench.baselines.bleurt import bleurt
from howtobench.baselines.overlap import BLEU_TOKENIZE, bleu_scorer, rouge_l
from howtobench.baselines.rubric import rubric
from howtobench.parameters import ParameterError
from howtobench.tree.scorer import DEFAULT_FORMATTING, tree_of_writing

DEFAULT_SCORERS: tuple[str, ...] = ("tow",)


@dataclass(frozen=True)
class ScorerOptions:
    """What the task's parameters say to the scorers (defaults: as the paper)."""

    judges: tuple[str, ...] = ()
    reference: bool = True  # show the judges the anchor (human, or a model's writing)
    nodes: tuple[str, ...] | None = None
    samples: int = 1
    reuse_weights: bool = True
    weights: str = "negotiated"  # or "uniform": ToW w/o plan (Table 3's Average scoring)
    temperature: float | None = None  # None: the judge role's own, else 0 (0.7 sampled)
    formatting: str = DEFAULT_FORMATTING  # the formatting leaf's rule: lenient or paper
    bleurt_checkpoint: str | None = None  # a BLEURT checkpoint's path or hub id
    bleu_tokenize: str = BLEU_TOKENIZE  # "char" (Table 7's BLEU) or "word" (jieba)


# The task parameter that sets each option, for messages.
PARAMETER = {
    "judges": "judges",
    "reference": "reference",
    "nodes": "nodes",
    "samples": "judge_samples",
    "reuse_weights": "reuse_weights",
    "weights": "weights",
    "temperature": "judge_temperature",
    "formatting": "formatting",
    "bleurt_checkpoint": "bleurt_checkpoint",
    "bleu_tokenize": "bleu_tokenize",
}
_SINGLE_CALL = frozenset({"judges", "reference", "samples", "temperature"})

BUILDERS: dict[str, Callable[[ScorerOptions], Scorer]] = {
    "tow": lambda o: tree_of_writing(
        judges=list(o.judges),
        reference=o.reference,
        nodes=o.nodes,
        samples=o.samples,
        reuse_weights=o.reuse_weights,
        weights=o.weights,
        formatting=o.formatting,
        temperature=o.temperature,
    ),
    "rubric": lambda o: rubric(
        judges=list(o.judges), reference=o.reference, samples=o.samples, temperature=o.temperature
    ),
    "autoplan": lambda o: autoplan(
        judges=list(o.judges), reference=o.reference, samples=o.samples, temperature=o.temperature
    ),
    "rouge_l": lambda o: rouge_l(),
    "bleu": lambda o: bleu_scorer(tokenize=o.bleu_tokenize),
    "bleurt": lambda o: bleurt(checkpoint=o.bleurt_checkpoint),
}
# The options each scorer takes.
TAKES: dict[str, frozenset[str]] = {
    "tow": _SINGLE_CALL | {"nodes", "reuse_weights", "weights", "formatting"},
    "rubric": _SINGLE_CALL,
    "autoplan": _SINGLE_CALL,
    "rouge_l": frozenset(),
    "bleu": frozenset({"bleu_tokenize"}),
    "bleurt": frozenset({"bleurt_checkpoint"}),
}
# The scorers that ask an LLM judge (and so need the grader role or a panel).
JUDGE_SCORERS = frozenset({"tow", "rubric", "autoplan"})


def check_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """Known scorer names (the default when none are given)."""
    unknown = [n for n in names if n not in BUILDERS]
    if unknown:
        raise ParameterError(
            "scorers", f"unknown scorer(s) {', '.join(unknown)} (available: {', '.join(BUILDERS)})"
        )
    return names or DEFAULT_SCORERS


def check_taken(names: tuple[str, ...], options: ScorerOptions) -> None:
    """Refuse an option set away from its default that none of the chosen scorers takes."""
    default = ScorerOptions()
    for option in fields(ScorerOptions):
        if getattr(options, option.name) == getattr(default, option.name):
            continue
        if not any(option.name in TAKES[name] for name in names):
            takers = [name for name, takes in TAKES.items() if option.name in takes]
            raise ParameterError(
                PARAMETER[option.name],
                f"none of the chosen scorers ({', '.join(names)}) uses it; "
                f"it applies to {', '.join(takers)}",
            )


def build_scorers(names: tuple[str, ...], options: ScorerOptions) -> list[Scorer]:
    """The named scorers, each given the options it takes."""
    check_taken(names, options)
    return [BUILDERS[name](options) for name in names]
