"""The tree's prompt files, and the short leaf summaries the negotiator reads."""

from functools import cache
from pathlib import Path

from howtobench.tree.spec import LEAVES
from howtobench.vocabulary.templates import render, tagged, template

__all__ = ["PROMPTS", "TAGS", "leaf_summaries", "tree_prompt"]

PROMPTS = Path(__file__).parent / "prompts"
# The tags of the tree's questions (`howtobench.vocabulary.templates.tagged`): the negotiator's
# system prompt (its question, sent without one), and each LLM leaf's criterion. The criterion opens the part of an
# expert's question that follows the materials, so the long prefix a writing's expert
# calls share (the one system prompt, the materials) stays the same for every leaf.
TAGS = {
    "negotiator_system": "negotiator",
    **{f"leaf_{leaf.id}": leaf.id for leaf in LEAVES if leaf.judge == "llm"},
}


def tree_prompt(name: str, language: str, **values: object) -> str:
    return tagged(render(PROMPTS, name, language, **values).strip(), TAGS.get(name))


@cache
def leaf_summaries(language: str) -> dict[str, str]:
    """`id: summary` lines of `leaf_summaries.<language>.txt`."""
    lines = template(PROMPTS, "leaf_summaries", language).template.splitlines()
    return dict(line.split(": ", 1) for line in lines if line.strip())
