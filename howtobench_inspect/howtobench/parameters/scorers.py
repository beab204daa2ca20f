"""Scorer selection by name, for the `scorers=` task parameter, with the options each
scorer takes: every option reaches exactly the scorers that use it, and one that none of
the chosen scorers takes is refused rather than dropped (`nodes` with `scorers=rubric`
would otherwise do nothing, silently).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

from inspect_ai.scorer import Scorer

from howtobench.baselines.autoplan import autoplan
from howtobench.baselines.bleurt import bleurt
from howtobench.baselines.overlap import BLEU_TOKENIZE, bleu_scorer, rouge_l
from howtobench.baselines.rubric import rubric
from howtobench.tree.scorer import tree_of_writing
from howtobench.tree.writing_score import DEFAULT_FORMATTING
from howtobench.vocabulary.parameter_values import ParameterError
from howtobench.writing.summary import writing_state

__all__ = [
    "JUDGE_SCORERS",
    "SCORERS",
    "ScorerOptions",
    "build_scorers",
    "check_names",
    "check_taken",
]

DEFAULT_SCORERS: tuple[str, ...] = ("tow",)


@dataclass(frozen=True)
class ScorerOptions:
    """What the task's parameters say to the scorers (defaults: as the paper); each field
    is named as the task parameter that sets it."""

    judges: tuple[str, ...] = ()
    anchor: bool = True  # show the judges the sample's anchor (human, or a model's writing)
    nodes: tuple[str, ...] | None = None
    judge_samples: int = 1
    reuse_weights: bool = True
    weights: str = "negotiated"  # or "uniform": ToW w/o plan (Table 3's Average scoring)
    judge_temperature: float | None = None  # None: the judge role's own, else 0 (0.7 sampled)
    formatting: str = DEFAULT_FORMATTING  # the formatting leaf's rule: lenient or paper
    bleurt_checkpoint: str | None = None  # a BLEURT checkpoint's path or hub id
    bleu_tokenize: str = BLEU_TOKENIZE  # "char" (Table 7's BLEU) or "word" (jieba)
    judge_system: bool = True  # the ToW judges' system prompts (the paper's code sends none)
    genre_line: bool = True  # the task-type and genre lines (the paper's code has neither)


def _same(*options: str) -> dict[str, str]:
    return {option: option for option in options}


_JUDGE_OPTIONS = ("judges", "anchor", "judge_samples", "judge_temperature")
# Each scorer's factory and the options it takes, each mapped to the factory's keyword
# (the judge scorers' keywords are the options' names; bleu and bleurt keep their own).
SCORERS: dict[str, tuple[Callable[..., Scorer], dict[str, str]]] = {
    "tow": (
        tree_of_writing,
        _same(
            *_JUDGE_OPTIONS,
            "nodes",
            "reuse_weights",
            "weights",
            "formatting",
            "judge_system",
            "genre_line",
        ),
    ),
    "rubric": (rubric, _same(*_JUDGE_OPTIONS)),
    "autoplan": (autoplan, _same(*_JUDGE_OPTIONS)),
    "rouge_l": (rouge_l, {}),
    "bleu": (bleu_scorer, {"bleu_tokenize": "tokenize"}),
    "bleurt": (bleurt, {"bleurt_checkpoint": "checkpoint"}),
}
# The scorers that ask an LLM judge (and so need the grader role or a panel).
JUDGE_SCORERS = frozenset({"tow", "rubric", "autoplan"})


def check_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """Known scorer names (the default when none are given)."""
    unknown = [n for n in names if n not in SCORERS]
    if unknown:
        raise ParameterError(
            "scorers", f"unknown scorer(s) {', '.join(unknown)} (available: {', '.join(SCORERS)})"
        )
    return names or DEFAULT_SCORERS


def check_taken(names: tuple[str, ...], options: ScorerOptions) -> None:
    """Refuse an option set away from its default that none of the chosen scorers takes."""
    default = ScorerOptions()
    for option in fields(ScorerOptions):
        changed = getattr(options, option.name) != getattr(default, option.name)
        if changed and not any(option.name in SCORERS[name][1] for name in names):
            takers = [name for name, (_, takes) in SCORERS.items() if option.name in takes]
            raise ParameterError(
                option.name,
                f"none of the chosen scorers ({', '.join(names)}) uses it; "
                f"it applies to {', '.join(takers)}",
            )


def build_scorers(names: tuple[str, ...], options: ScorerOptions) -> list[Scorer]:
    """The named scorers, each given the options it takes, then `writing_state` (last, so
    that the first named is the results' headline)."""
    scorers = []
    for name in names:
        factory, takes = SCORERS[name]
        scorers.append(factory(**{kw: _value(getattr(options, o)) for o, kw in takes.items()}))
    return [*scorers, writing_state()]


def _value(option: object) -> object:
    """An option as a scorer keyword: a tuple of names as the list inspect logs."""
    return list(option) if isinstance(option, tuple) else option
