"""Scorer selection by name, for the `scorers=` task parameter."""

import inspect
from collections.abc import Callable, Sequence
from typing import Any

from inspect_ai.scorer import Scorer

from howtobench.baselines.autoplan import autoplan
from howtobench.baselines.overlap import bleu_scorer, rouge_l
from howtobench.baselines.rubric import rubric
from howtobench.tree.scorer import tree_of_writing

SCORERS: dict[str, Callable[..., Scorer]] = {
    "tow": tree_of_writing,
    "rubric": rubric,
    "autoplan": autoplan,
    "rouge_l": rouge_l,
    "bleu": bleu_scorer,
}
DEFAULT_SCORERS: tuple[str, ...] = ("tow",)
# Options of the task that reach the judge scorers (not the overlap ones).
JUDGE_SCORERS = {"tow", "rubric", "autoplan"}


def parse_names(names: str | Sequence[str] | None) -> list[str]:
    """Names from a comma list or a list (the CLI gives either), checked and deduplicated."""
    items = names.split(",") if isinstance(names, str) else list(names or [])
    parsed = list(dict.fromkeys(n.strip() for n in items if n.strip())) or list(DEFAULT_SCORERS)
    unknown = [n for n in parsed if n not in SCORERS]
    if unknown:
        raise ValueError(
            f"unknown scorer(s) {', '.join(unknown)} (available: {', '.join(SCORERS)})"
        )
    return parsed


def build_scorers(names: str | Sequence[str] | None, **judge_options: Any) -> list[Scorer]:
    """The named scorers; `judge_options` go to the judge scorers that take them."""
    built = []
    for name in parse_names(names):
        factory = SCORERS[name]
        if name in JUDGE_SCORERS:
            accepted = inspect.signature(factory).parameters
            built.append(factory(**{k: v for k, v in judge_options.items() if k in accepted}))
        else:
            built.append(factory())
    return built
