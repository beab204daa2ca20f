"""Aggregation up the tree, and the tree rendered as text for the score's explanation.

Pure functions of the tree, the negotiated weights and the leaf scores:
node = Σ weight · leaf for content and format, impression is its own leaf, and the
root averages the nodes weighted by their leaf counts:
overall = (4·content + 3·format + impression) / 8, or (4·content + impression) / 5
for completion.
"""

from __future__ import annotations

from collections.abc import Mapping

from howtobench.tree.spec import NEGOTIATED_NODES, Tree


def node_scores(
    tree: Tree, weights: Mapping[str, float], leaves: Mapping[str, float]
) -> dict[str, float]:
    """Each node's score: the weighted leaf sum (negotiated nodes) or its single leaf."""
    scores = {}
    for node in tree.nodes:
        children = tree.leaves_of(node)
        if node in NEGOTIATED_NODES:
            scores[node] = sum(weights[leaf.id] * leaves[leaf.id] for leaf in children)
        else:
            [leaf] = children
            scores[node] = leaves[leaf.id]
    return scores


def overall(tree: Tree, nodes: Mapping[str, float]) -> float:
    """The root: node scores averaged with their leaf counts as weights."""
    root = tree.root_weights
    return sum(root[node] * nodes[node] for node in tree.nodes) / sum(root.values())


def score_value(
    tree: Tree, weights: Mapping[str, float], leaves: Mapping[str, float]
) -> dict[str, float]:
    """The score dict: `overall`, each node, then each leaf id."""
    nodes = node_scores(tree, weights, leaves)
    return {
        "overall": overall(tree, nodes),
        **nodes,
        **{leaf.id: leaves[leaf.id] for leaf in tree.leaves},
    }


def render(
    tree: Tree,
    weights: Mapping[str, float],
    value: Mapping[str, float],
    notes: Mapping[str, str],
) -> str:
    """The tree as indented text: nodes with scores, leaves with weight, score and a note."""
    root = tree.root_weights
    formula = " + ".join(f"{root[n]}·{n}" for n in tree.nodes)
    lines = [f"overall {value['overall']:.2f} = ({formula}) / {sum(root.values())}"]
    for i, node in enumerate(tree.nodes):
        last_node = i == len(tree.nodes) - 1
        lines.append(f"{'└─' if last_node else '├─'} {node} {value[node]:.2f}")
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
