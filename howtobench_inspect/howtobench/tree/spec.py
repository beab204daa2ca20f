"""The Tree-of-Writing as data: nodes, leaves, how each leaf is judged and mapped.

root -> content (opening_ending, rhetoric, logic, emotion)
     -> format (plots, paragraphing, formatting)   absent for completion
     -> impression (a leaf)

Content and format leaves hang on negotiated edge weights; the root averages its
nodes weighted by their leaf counts (4·content + 3·format + 1·impression).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import Literal

__all__ = [
    "Judge",
    "LEAVES",
    "Leaf",
    "MAPPINGS",
    "NEGOTIATED_NODES",
    "NODES",
    "Tree",
    "identity",
    "paragraphing_scale",
    "step_plots",
    "tree_for",
]

Judge = Literal["llm", "rule"]
# How an LLM leaf scores against the anchor text, after the paper's evaluation prompts:
# `relative`: the anchor is a fixed 6 on the 10-point scale and the writing is scored
# by comparison; `deduct`: the anchor's logic is an 8-point standard to deduct from;
# `context`: the anchor is shown and sets no baseline, the leaf keeps its own bands (the
# paper code's impression prompt shows the reference and asks for a plain 1-10 score);
# `none`: the leaf is judged without the anchor (paragraphing sees no reference).
Anchoring = Literal["relative", "deduct", "context", "none"]


def identity(x: float) -> float:
    return x


def step_plots(x: float) -> float:
    """Plots: judged 1-10, stepped to 0 (<=3), 5 (4-7) or 10 (>=8)."""
    return 0.0 if x <= 3 else 5.0 if x <= 7 else 10.0


def paragraphing_scale(x: float) -> float:
    """Paragraphing: judged 1-3, mapped by 5·(x-1) to 0, 5 or 10."""
    return 5.0 * (x - 1)


@dataclass(frozen=True)
class Leaf:
    """A criterion: who judges it, on what scale, and how a verdict maps to the leaf score."""

    id: str
    node: str
    judge: Judge
    low: int
    high: int
    mapping: str = "identity"
    anchoring: Anchoring = "relative"

    def map(self, judged: float) -> float:
        return MAPPINGS[self.mapping](judged)

    @property
    def minimum(self) -> float:
        """The lowest leaf score (what an empty writing gets)."""
        return self.map(self.low)

    @property
    def maximum(self) -> float:
        return self.map(self.high)

    @property
    def steps(self) -> str:
        """The mapping written out as runs of judged values and the leaf score each run
        gets (plots: `1-3 → 0, 4-7 → 5, 8-10 → 10`), for the explanation: without it a
        reader of `judged 3 on 1-10` next to 0.00 cannot tell why. Derived from `map`, so
        it cannot drift from the scoring; LLM leaves are judged in whole numbers."""
        runs = [
            (score, list(judged))
            for score, judged in groupby(range(self.low, self.high + 1), key=self.map)
        ]
        return ", ".join(
            f"{judged[0]}{'' if len(judged) == 1 else f'-{judged[-1]}'} → {score:g}"
            for score, judged in runs
        )


MAPPINGS = {"identity": identity, "step_plots": step_plots, "paragraphing": paragraphing_scale}

LEAVES: tuple[Leaf, ...] = (
    Leaf("opening_ending", "content", "llm", 1, 10),
    Leaf("rhetoric", "content", "llm", 1, 10),
    Leaf("logic", "content", "llm", 1, 10, anchoring="deduct"),
    Leaf("emotion", "content", "llm", 1, 10),
    Leaf("plots", "format", "llm", 1, 10, "step_plots"),
    Leaf("paragraphing", "format", "llm", 1, 3, "paragraphing", anchoring="none"),
    Leaf("formatting", "format", "rule", 0, 10, anchoring="none"),
    Leaf("impression", "impression", "llm", 1, 10, anchoring="context"),
)

NODES: tuple[str, ...] = ("content", "format", "impression")
NEGOTIATED_NODES: tuple[str, ...] = ("content", "format")


@dataclass(frozen=True)
class Tree:
    """The tree of one task type, with `nodes` possibly narrowed by an ablation."""

    task: str
    nodes: tuple[str, ...]

    @property
    def leaves(self) -> tuple[Leaf, ...]:
        return tuple(leaf for leaf in LEAVES if leaf.node in self.nodes)

    def leaves_of(self, node: str) -> tuple[Leaf, ...]:
        return tuple(leaf for leaf in LEAVES if leaf.node == node)

    @property
    def negotiated(self) -> dict[str, tuple[str, ...]]:
        """Leaf ids whose weights the negotiator sets, by node."""
        return {
            node: tuple(leaf.id for leaf in self.leaves_of(node))
            for node in NEGOTIATED_NODES
            if node in self.nodes
        }

    def scale(self, node: str) -> tuple[float, float]:
        """The range a node's score belongs to: from its lowest to its highest leaf
        score (content and impression 1-10, format 0-10)."""
        leaves = self.leaves_of(node)
        return min(leaf.minimum for leaf in leaves), max(leaf.maximum for leaf in leaves)

    @property
    def root_weights(self) -> dict[str, int]:
        """Root edge weights: each node's number of leaves."""
        return {node: len(self.leaves_of(node)) for node in self.nodes}


def tree_for(task: str, keep: tuple[str, ...] | None = None) -> Tree:
    """The task's tree, narrowed to the nodes in `keep` for an ablation.

    Completion has no format node: its writing is a fragment of a larger text.
    """
    nodes = ("content", "impression") if task == "completion" else NODES
    if keep is not None:
        unknown = [n for n in keep if n not in nodes]
        if unknown or not keep:
            raise ValueError(
                f"cannot keep node(s) {', '.join(unknown) or '(none)'}: the {task} tree has "
                f"{', '.join(nodes)}"
            )
        nodes = tuple(n for n in nodes if n in keep)
    return Tree(task=task, nodes=nodes)
