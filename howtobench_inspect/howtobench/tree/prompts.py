"""The tree's prompt files, and the short leaf summaries the negotiator reads."""

from functools import cache
from pathlib import Path

from howtobench.templates import render, template

PROMPTS = Path(__file__).parent / "prompts"


def tree_prompt(name: str, language: str, **values: object) -> str:
    return render(PROMPTS, name, language, **values).strip()


@cache
def leaf_summaries(language: str) -> dict[str, str]:
    """`id: summary` lines of `leaf_summaries.<language>.txt`."""
    lines = template(PROMPTS, "leaf_summaries", language).template.splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip())
