"""The tree's leaves are versioned: a change to them must bump `TREE_VERSION` (plans of
another version hold weights for other criteria) and `TASK_VERSION` (scores of another
tree are not comparable), and a new leaf needs its prompts and negotiator summary.

The fingerprint below is pinned beside the versions: whoever changes `tree/spec.py`
sees this test fail with what to bump, and updates the fingerprint with the bump.
"""

import hashlib
import json
from dataclasses import replace

import pytest

from howtobench.tasks import TASK_VERSION
from howtobench.tree.plan import TREE_VERSION
from howtobench.tree.prompts import PROMPTS, leaf_summaries
from howtobench.tree.spec import LEAVES, NEGOTIATED_NODES, NODES, Leaf, tree_for
from howtobench.vocabulary.words import TASKS

# The tree as of TREE_VERSION 1 (TASK_VERSION 5 or later): the paper's eight leaves (§3.2).
PINNED_TREE_VERSION = 1
PINNED_TASK_VERSION = 5
PINNED_FINGERPRINT = "73ad1f596f2d"


def tree_fingerprint(leaves: tuple[Leaf, ...] = LEAVES) -> str:
    """12 hex characters over what a judgment depends on in the spec: each leaf's id,
    node, judge, scale, mapping (as the judged values it steps) and anchoring, the nodes,
    which of them are negotiated, and each task's nodes."""
    described = {
        "leaves": [
            [leaf.id, leaf.node, leaf.judge, leaf.low, leaf.high, leaf.steps, leaf.anchoring]
            for leaf in leaves
        ],
        "nodes": NODES,
        "negotiated": NEGOTIATED_NODES,
        "tasks": {task: tree_for(task).nodes for task in TASKS},
    }
    text = json.dumps(described, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def test_a_changed_tree_bumps_TREE_VERSION() -> None:
    found = tree_fingerprint()
    assert found == PINNED_FINGERPRINT or TREE_VERSION > PINNED_TREE_VERSION, (
        f"the tree's leaves changed (fingerprint {found}, pinned {PINNED_FINGERPRINT}): bump "
        "TREE_VERSION in tree/plan.py (and TASK_VERSION in tasks.py, with a CHANGELOG entry) "
        "and update the fingerprint and versions pinned in tests/test_tree_version.py"
    )
    assert (found, TREE_VERSION) == (PINNED_FINGERPRINT, PINNED_TREE_VERSION), (
        f"TREE_VERSION is {TREE_VERSION} and the tree's fingerprint {found}: pin both in "
        "tests/test_tree_version.py (PINNED_TREE_VERSION, PINNED_FINGERPRINT), with the "
        "TASK_VERSION of the change"
    )
    assert TASK_VERSION >= PINNED_TASK_VERSION, (
        f"TASK_VERSION {TASK_VERSION} is below {PINNED_TASK_VERSION}, the version the tree "
        f"of TREE_VERSION {TREE_VERSION} came with"
    )


def test_the_fingerprint_sees_every_part_of_a_leaf() -> None:
    """Each field of a leaf moves the fingerprint: a change to any of them cannot slip by."""
    first = LEAVES[0]
    changed = {
        "id": replace(first, id="another"),
        "node": replace(first, node="format"),
        "judge": replace(first, judge="rule"),
        "scale": replace(first, high=5),
        "mapping": replace(first, mapping="step_plots"),
        "anchoring": replace(first, anchoring="none"),
    }
    unseen = [
        field
        for field, leaf in changed.items()
        if tree_fingerprint((leaf, *LEAVES[1:])) == tree_fingerprint()
    ]
    assert unseen == []
    assert tree_fingerprint(LEAVES[::-1]) != tree_fingerprint()  # the order is the report's


@pytest.mark.parametrize("language", ["zh", "en"])
def test_every_leaf_has_its_prompts_and_negotiator_summary(language: str) -> None:
    """What a contributor adding a leaf must write, named when missing: the criterion and
    bands of each LLM leaf, and a summary line for each negotiated leaf."""
    missing = [
        f"{name}.{language}.txt"
        for leaf in LEAVES
        if leaf.judge == "llm"
        for name in (f"leaf_{leaf.id}", f"bands_{leaf.id}")
        if not (PROMPTS / f"{name}.{language}.txt").is_file()
    ]
    assert missing == [], f"tree/prompts/ lacks {', '.join(missing)}"
    summaries = leaf_summaries(language)
    negotiated = [i for ids in tree_for("guide").negotiated.values() for i in ids]
    assert [i for i in negotiated if i not in summaries] == [], (
        f"tree/prompts/leaf_summaries.{language}.txt lacks a line for a negotiated leaf"
    )
    assert [i for i in summaries if i not in negotiated] == [], (
        f"tree/prompts/leaf_summaries.{language}.txt has a line for no negotiated leaf"
    )
