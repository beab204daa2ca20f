"""Judge replies: JSON extraction, the weight rules and the score rules."""

import pytest

from howtobench.judge.replies import ReplyError, parse_json_object
from howtobench.tree.experts import score_checker
from howtobench.tree.negotiator import weight_checker
from howtobench.tree.spec import LEAVES, tree_for

GUIDE = {
    "opening_ending": 0.1,
    "rhetoric": 0.3,
    "logic": 0.4,
    "emotion": 0.2,
    "plots": 0.5,
    "paragraphing": 0.3,
    "formatting": 0.2,
}


def test_parse_json_object_in_fences_and_prose() -> None:
    assert parse_json_object('好的：\n```json\n{"score": 7, "reason": "好"}\n```') == {
        "score": 7,
        "reason": "好",
    }
    assert parse_json_object('{bad} then {"a": 1}') == {"a": 1}
    with pytest.raises(ReplyError, match="no JSON object"):
        parse_json_object("我给 7 分")


def test_weights_accepted_as_given() -> None:
    weights = weight_checker(tree_for("guide"))({"weights": GUIDE, "explanation": "因为"})
    assert weights.values == GUIDE and weights.explanation == "因为" and weights.renormalised == ()


def test_weights_off_by_at_most_001_are_renormalised() -> None:
    off = {**GUIDE, "logic": 0.408}  # content sums to 1.008
    weights = weight_checker(tree_for("guide"))({"weights": off})
    assert weights.renormalised == ("content",)
    assert weights.values["logic"] == pytest.approx(0.408 / 1.008)
    assert sum(
        weights.values[i] for i in ("opening_ending", "rhetoric", "logic", "emotion")
    ) == pytest.approx(1)
    assert weights.values["plots"] == 0.5


@pytest.mark.parametrize(
    ("weights", "error"),
    [
        ({**GUIDE, "logic": 0.45}, "the content weights sum to 1.05, not 1"),
        (
            {k: v for k, v in GUIDE.items() if k != "emotion"},
            r"must hold exactly .*\(missing emotion\)",
        ),
        ({**GUIDE, "coherence": 0.0}, r"\(unknown coherence\)"),
        ({**GUIDE, "plots": "high"}, r'the weight of "plots" must be a number, got "high"'),
        ({**GUIDE, "plots": True}, r'the weight of "plots" must be a number'),
        (
            {**GUIDE, "plots": 1.2, "paragraphing": -0.4},
            r'the weight of "plots" is 1.2, outside \(-1, 1\)',
        ),
        ("uniform", r'"weights" must be an object'),
    ],
)
def test_weights_rules(weights: object, error: str) -> None:
    with pytest.raises(ReplyError, match=error):
        weight_checker(tree_for("guide"))({"weights": weights})


def test_completion_negotiates_content_only() -> None:
    content = {k: GUIDE[k] for k in ("opening_ending", "rhetoric", "logic", "emotion")}
    assert weight_checker(tree_for("completion"))({"weights": content}).values == content
    with pytest.raises(ReplyError, match="unknown plots"):
        weight_checker(tree_for("completion"))({"weights": GUIDE})


LEAF = {leaf.id: leaf for leaf in LEAVES}


def test_scores_rules() -> None:
    check = score_checker(LEAF["logic"])
    assert check({"score": 7, "reason": "清楚"}).score == 7
    assert check({"score": "8"}).score == 8  # a numeric string is a number
    assert check({"score": 7.0}).reason == ""
    for reply, error in [
        ({"reason": "x"}, 'no "score"'),
        ({"score": "七"}, "must be a number"),
        ({"score": 11}, "from 1 to 10, got 11"),
        ({"score": 0}, "from 1 to 10, got 0"),
        ({"score": 6.5}, "whole number"),
    ]:
        with pytest.raises(ReplyError, match=error):
            check(reply)
    with pytest.raises(ReplyError, match="from 1 to 3, got 4"):
        score_checker(LEAF["paragraphing"])({"score": 4})
