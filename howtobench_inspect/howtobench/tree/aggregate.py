"""Aggregation up the tree, and the tree rendered as text for the score's explanation.

Pure functions of the tree, the negotiated weights and the leaf scores; the formula, and
why a node can leave its scale and is clipped, are in docs/tree-of-writing.md
("Aggregation"). Every number is rounded as the scores store them, so the explanation and
the score's value show the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from howtobench.tree.spec import NEGOTIATED_NODES, Tree
from howtobench.vocabulary.rounding import rounded

__all__ = ["Aggregate", "aggregate", "render"]


@dataclass(frozen=True)
class Aggregate:
    """The score dict (`overall`, each node, each leaf) and the raw value of every node
    that was clipped to its scale."""

    value: dict[str, float]
    clipped: dict[str, float]


# Weights that sum to 1 in floating point can put a node a rounding error past its
# scale (10.000000000000002): that is not a weight leaving the scale, so not recorded.
_ROUNDING = 1e-9


def aggregate(tree: Tree, weights: Mapping[str, float], leaves: Mapping[str, float]) -> Aggregate:
    """The score dict (`overall`, each node clipped to its scale, then each leaf id) and
    the raw values of the clipped nodes, rounded to the decimals a score stores."""
    nodes, clipped = {}, {}
    for node in tree.nodes:
        children = tree.leaves_of(node)
        if node in NEGOTIATED_NODES:
            raw = sum(weights[leaf.id] * leaves[leaf.id] for leaf in children)
        else:
            [leaf] = children
            raw = leaves[leaf.id]
        low, high = tree.scale(node)
        nodes[node] = min(max(raw, low), high)
        if abs(nodes[node] - raw) > _ROUNDING:
            clipped[node] = raw
    root = tree.root_weights
    value = {
        "overall": sum(root[node] * nodes[node] for node in tree.nodes) / sum(root.values()),
        **nodes,
        **{leaf.id: leaves[leaf.id] for leaf in tree.leaves},
    }
    return Aggregate(rounded(value), rounded(clipped))


def render(
    tree: Tree,
    weights: Mapping[str, float],
    result: Aggregate,
    notes: Mapping[str, str],
) -> str:
    """The tree as indented text: nodes with scores (and their raw value when clipped),
    leaves with weight, score and a note."""
    value = result.value
    root = tree.root_weights
    formula = " + ".join(f"{root[n]}·{n}" for n in tree.nodes)
    lines = [f"overall {value['overall']:.2f} = ({formula}) / {sum(root.values())}"]
    for i, node in enumerate(tree.nodes):
        last_node = i == len(tree.nodes) - 1
        lines.append(f"{'└─' if last_node else '├─'} {node} {value[node]:.2f}")
        if node in result.clipped:
            low, high = tree.scale(node)
            lines[-1] += (
                f"  [clipped from {result.clipped[node]:.2f} to its scale {low:g}-{high:g}]"
            )
        if node not in NEGOTIATED_NODES:
            lines[-1] += f"  ({notes.get(node, '')})" if notes.get(node) else ""
            continue
        children = tree.leaves_of(node)
        for j, leaf in enumerate(children):
            branch = "└─" if j == len(children) - 1 else "├─"
            indent = "   " if last_node else "│  "
            note = f"  ({notes[leaf.id]})" if notes.get(leaf.id) else ""
            lines.append(
                f"{indent}{branch} {leaf.id}  w={weights[leaf.id]:.2f}  {value[leaf.id]:.2f}{note}"
            )
    return "\n".join(lines)
