"""Scorer selection by name, for the `scorers=` task parameter."""

from collections.abc import Callable

from inspect_ai.scorer import Scorer

from howtobench.baselines.overlap import bleu_scorer, rouge_l

SCORERS: dict[str, Callable[[], Scorer]] = {
    "rouge_l": rouge_l,
    "bleu": bleu_scorer,
}
DEFAULT_SCORERS: tuple[str, ...] = ("rouge_l", "bleu")


def parse_names(names: str | list[str] | tuple[str, ...] | None) -> list[str]:
    """Names from a comma list or a list (the CLI gives either), checked and deduplicated."""
    if names is None or names == "" or names == []:
        return list(DEFAULT_SCORERS)
    items = names.split(",") if isinstance(names, str) else list(names)
    parsed = list(dict.fromkeys(n.strip() for n in items if n.strip()))
    unknown = [n for n in parsed if n not in SCORERS]
    if unknown:
        raise ValueError(
            f"unknown scorer(s) {', '.join(unknown)} (available: {', '.join(SCORERS)})"
        )
    return parsed


def build_scorers(names: str | list[str] | tuple[str, ...] | None) -> list[Scorer]:
    return [SCORERS[name]() for name in parse_names(names)]
