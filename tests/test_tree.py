"""The pure tree: spec, step mappings, aggregation on hand-computed examples, rendering."""

import pytest

from howtobench.tree.aggregate import aggregate, render
from howtobench.tree.spec import LEAVES, paragraphing_scale, step_plots, tree_for
from support.judges import WEIGHTS, padded, root_of, scored


def test_step_mappings() -> None:
    assert [step_plots(x) for x in range(1, 11)] == [0, 0, 0, 5, 5, 5, 5, 10, 10, 10]
    assert [paragraphing_scale(x) for x in (1, 2, 3)] == [0, 5, 10]
    # each leaf's minimum follows its mapping: a 1-10 leaf scored as judged starts at 1
    for leaf in LEAVES:
        assert (
            leaf.minimum == {"identity": leaf.low, "step_plots": 0, "paragraphing": 0}[leaf.mapping]
        )


def test_steps_spell_out_each_mapped_leaf_for_the_explanation() -> None:
    steps = {leaf.id: leaf.steps for leaf in LEAVES if leaf.mapping != "identity"}
    assert steps == {
        "plots": "1-3 → 0, 4-7 → 5, 8-10 → 10",
        "paragraphing": "1 → 0, 2 → 5, 3 → 10",
    }


def test_trees_per_task() -> None:
    # the paper's tree (§3.3, Fig. 2): a changed tree fails here on purpose
    assert tree_for("guide").negotiated == {
        "content": ("opening_ending", "rhetoric", "logic", "emotion"),
        "format": ("plots", "paragraphing", "formatting"),
    }
    assert tree_for("open").root_weights == {"content": 4, "format": 3, "impression": 1}
    completion = tree_for("completion")
    assert completion.nodes == ("content", "impression")
    assert set(completion.negotiated) == {"content"}
    assert completion.root_weights == {"content": 4, "impression": 1}


# Worked by hand for the leaves of TREE_VERSION 1; a leaf added since weighs 0 (`WEIGHTS`).
LEAF_SCORES = scored(
    {
        "opening_ending": 6,
        "rhetoric": 8,
        "logic": 7,
        "emotion": 4,
        "plots": 5,
        "paragraphing": 10,
        "formatting": 0,
        "impression": 9,
    }
)


def test_aggregation_guide_by_hand() -> None:
    result = aggregate(tree_for("guide"), WEIGHTS, LEAF_SCORES)
    value = result.value
    assert result.clipped == {}
    # content = .1*6 + .2*8 + .5*7 + .2*4 = 0.6 + 1.6 + 3.5 + 0.8 = 6.5
    # format  = .6*5 + .3*10 + .1*0 = 6.0 ; overall = (4*6.5 + 3*6 + 9) / 8 = 53 / 8
    assert value["content"] == pytest.approx(6.5)
    assert value["format"] == pytest.approx(6.0)
    assert value["impression"] == 9
    # the paper's 4:3:1 root gives 53 / 8
    nodes = {"content": 6.5, "format": 6.0, "impression": 9}
    assert value["overall"] == pytest.approx(root_of("guide", nodes))
    assert list(value)[:4] == ["overall", "content", "format", "impression"]
    assert {k: value[k] for k in LEAF_SCORES} == LEAF_SCORES


def test_aggregation_completion_and_negative_weight_by_hand() -> None:
    given = {"opening_ending": -0.2, "rhetoric": 0.4, "logic": 0.4, "emotion": 0.4}
    weights = padded(given, "completion")
    leaves = scored(
        {"opening_ending": 10, "rhetoric": 5, "logic": 6, "emotion": 7, "impression": 3}
    )
    value = aggregate(tree_for("completion"), weights, leaves).value
    # content = -2 + 2 + 2.4 + 2.8 = 5.2 ; overall = (4*5.2 + 3) / 5 = 4.76
    assert value["content"] == pytest.approx(5.2)
    assert value["overall"] == pytest.approx(
        root_of("completion", {"content": 5.2, "impression": 3})
    )
    assert "format" not in value and "plots" not in value


def test_render_shows_weights_and_scores() -> None:
    tree = tree_for("guide")
    text = render(
        tree, WEIGHTS, aggregate(tree, WEIGHTS, LEAF_SCORES), {"plots": "judged 6 on 1-10"}
    )
    # "overall 6.62 = (4·content + 3·format + 1·impression) / 8" on the paper's tree
    root = tree.root_weights
    overall = root_of("guide", {"content": 6.5, "format": 6.0, "impression": 9})
    terms = " + ".join(f"{w}·{node}" for node, w in root.items())
    assert text.splitlines()[0] == f"overall {overall:.2f} = ({terms}) / {sum(root.values())}"
    assert "│  ├─ logic  w=0.50  7.00" in text
    assert "plots  w=0.60  5.00  (judged 6 on 1-10)" in text
    assert text.splitlines()[-1].startswith("└─ impression 9.00")


def test_nodes_off_their_scale_are_clipped_and_recorded() -> None:
    """Weights in (-1, 1) summing to 1 can push a node off its scale: clip it, keep the raw."""
    tree = tree_for("guide")
    weights = padded(
        {
            "opening_ending": 0.9,
            "rhetoric": 0.9,
            "logic": -0.4,
            "emotion": -0.4,
            "plots": 0.9,
            "paragraphing": 0.9,
            "formatting": -0.8,
        }
    )
    leaves = scored(
        {
            "opening_ending": 10,
            "rhetoric": 10,
            "logic": 1,
            "emotion": 1,
            "plots": 0,
            "paragraphing": 0,
            "formatting": 10,
            "impression": 5,
        }
    )
    result = aggregate(tree, weights, leaves)
    # content = 9 + 9 - 0.4 - 0.4 = 17.2 -> 10 ; format = 0 + 0 - 8 = -8 -> 0; the raw
    # values are rounded as the value is (17.200000000000003 in floats)
    assert result.clipped == {"content": 17.2, "format": -8}
    assert result.value["content"] == 10 and result.value["format"] == 0
    # the root is computed from the clipped nodes: (4*10 + 3*0 + 5) / 8
    nodes = {"content": 10, "format": 0, "impression": 5}
    assert result.value["overall"] == pytest.approx(root_of("guide", nodes))
    text = render(tree, weights, result, {})
    assert "├─ content 10.00  [clipped from 17.20 to its scale 1-10]" in text
    assert "├─ format 0.00  [clipped from -8.00 to its scale 0-10]" in text
    # completion: content is clipped at its floor of 1 (its leaves score 1-10)
    low = aggregate(
        tree_for("completion"),
        padded(
            {"opening_ending": 0.9, "rhetoric": 0.9, "logic": -0.4, "emotion": -0.4}, "completion"
        ),
        scored({"opening_ending": 1, "rhetoric": 1, "logic": 10, "emotion": 10, "impression": 2}),
    )
    assert low.clipped == {"content": -6.2}
    overall = root_of("completion", {"content": 1, "impression": 2})
    assert low.value["content"] == 1 and low.value["overall"] == pytest.approx(overall)


def test_a_rounding_error_past_the_scale_is_no_clipping() -> None:
    """Negotiated weights as the simulator gives them, summing to 1 + 2e-16 in floats."""
    tree = tree_for("open")
    weights = padded(
        {
            "opening_ending": 0.25,
            "rhetoric": 0.25,
            "logic": 0.25,
            "emotion": 0.25,
            "plots": 0.428113,
            "paragraphing": 0.419762,
            "formatting": 0.152125,
        }
    )
    leaves = {leaf.id: 10.0 for leaf in tree.leaves}
    assert sum(weights[i] * 10 for i in ("plots", "paragraphing", "formatting")) > 10
    result = aggregate(tree, weights, leaves)
    assert result.clipped == {} and result.value["format"] == 10
