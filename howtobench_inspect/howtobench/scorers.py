"""Scorer selection by name, for the `scorers=` task parameter."""

from collections.abc import Callable, Sequence
from typing import Any

from inspect_ai.scorer import Scorer

from howtobench.baselines.overlap import bleu_scorer, rouge_l
from howtobench.tree.scorer import tree_of_writing

SCORERS: dict[str, Callable[..., Scorer]] = {
    "tow": tree_of_writing,
    "rouge_l": rouge_l,
    "bleu": bleu_scorer,
}
DEFAULT_SCORERS: tuple[str, ...] = ("tow",)
# Options of the task that reach the judge scorers (not the overlap ones).
JUDGE_SCORERS = {"tow"}


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
    """The named scorers; `judge_options` (judges, reference) go to the judge scorers."""
    return [
        SCORERS[n](**judge_options) if n in JUDGE_SCORERS else SCORERS[n]()
        for n in parse_names(names)
    ]
