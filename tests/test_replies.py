"""Judge replies: the final word, the weight rules and the score rules."""

import json
from collections.abc import Callable
from typing import Any

import pytest

from howtobench.baselines.autoplan import check_plan
from howtobench.baselines.prompts import genre_rubric
from howtobench.baselines.rubric import rubric_question
from howtobench.judge.reading import Form, ReplyError, json_objects
from howtobench.judge.replies import Verdict
from howtobench.tree.experts import score_form
from howtobench.tree.negotiator import Weights, weights_form
from howtobench.tree.spec import LEAVES, Leaf, Tree, tree_for
from support.data import anchored_input
from support.judges import padded

# Weights for every negotiated leaf: these by hand, 0 for a leaf added to the tree since.
GUIDE = padded(
    {
        "opening_ending": 0.1,
        "rhetoric": 0.3,
        "logic": 0.4,
        "emotion": 0.2,
        "plots": 0.5,
        "paragraphing": 0.3,
        "formatting": 0.2,
    }
)


def weight_checker(tree: Tree) -> Callable[[dict[str, Any]], Weights]:
    return weights_form(tree).check


def score_checker(leaf: Leaf) -> Callable[[dict[str, Any]], Verdict]:
    return score_form(leaf).check


def test_json_objects_in_fences_and_prose() -> None:
    assert json_objects('好的：\n```json\n{"score": 7, "reason": "好"}\n```') == [
        {"score": 7, "reason": "好"}
    ]
    assert json_objects('{bad} then {"a": 1} and {"b": {"c": 2}}') == [{"a": 1}, {"b": {"c": 2}}]
    assert json_objects("我给 7 分") == []


SCORE = score_form(next(leaf for leaf in LEAVES if leaf.id == "logic"))  # 1-10


@pytest.mark.parametrize(
    ("reply", "score"),
    [
        ('draft {"score": 4, "reason": "初稿"} ... final {"score": 8, "reason": "定稿"}', 8),
        ('{"score": 3}\n{"score": 9}', 9),  # two objects: the last is the answer
        ('```json\n{"score": 6, "reason": "好"}\n```', 6),
        ('我的评价如下。\n{"score": 7, "reason": "清楚"}\n以上。', 7),
        # a think block holds drafts only, even when the answer is shorter
        ('<think>也许 {"score": 2} 不对，应是 {"score": 5}</think>\n{"score": 6}', 6),
        # objects without the expected key (an echo, a nested part) are passed over
        ('{"score": 7, "reason": "好"} 附注 {"note": "无"}', 7),
        ('{"answer": 1} {"score": 5, "reason": {"detail": "x"}}', 5),
    ],
)
def test_the_answer_is_the_judges_final_word(reply: str, score: float) -> None:
    assert SCORE.read(reply).score == score


def test_no_final_answer_is_an_error_to_say_back() -> None:
    with pytest.raises(ReplyError, match="no JSON object$"):
        SCORE.read("我给 7 分")
    with pytest.raises(ReplyError, match='no JSON object with "score"'):
        SCORE.read('{"rating": 7}')
    with pytest.raises(ReplyError, match="only inside the reasoning"):
        SCORE.read('<think>{"score": 7}</think>我觉得是七分。')
    # an unclosed think block: where its drafts end and the answer begins cannot be told
    with pytest.raises(ReplyError, match="ends inside its reasoning"):
        SCORE.read(
            '<think>先打 {"score": 4, "reason": "草稿"} 再想想……最终：{"score": 8, "reason": "好"}'
        )
    # the final word is checked: a bad last answer is not replaced by a good draft
    with pytest.raises(ReplyError, match="from 1 to 10, got 12"):
        SCORE.read('draft {"score": 8} final {"score": 12}')


def test_every_judge_reads_the_last_object_with_its_keys() -> None:
    hand = dict.fromkeys(("opening_ending", "rhetoric", "logic", "emotion"), 0.25)
    weights = {"weights": padded(hand, "completion")}
    draft = {"weights": {**weights["weights"], "logic": 0.5}}
    completion = weights_form(tree_for("completion"))

    reply = f'draft {json.dumps(draft)} final {json.dumps(weights)} {{"note": 1}}'
    assert completion.read(reply).values == weights["weights"]

    plan = {
        "dimensions": [{"name": n, "weight": 1, "score": 6} for n in ("a", "b", "c")],
        "overall": 6,
    }
    first = {**plan, "overall": 3}
    autoplan = Form(("dimensions", "overall"), check_plan)
    assert autoplan.read(f"{json.dumps(first)}\n最终：{json.dumps(plan)}").score == 6

    judge_input = anchored_input(
        genre="poem",
        genre_raw="诗歌",
        language="zh",
        instruction="写诗",
        reference="",
        writing="诗",
    )
    asked = rubric_question(judge_input)
    ids = genre_rubric("poem", "zh").ids
    final = {"scores": dict.fromkeys(ids, 7), "overall": 7, "reason": "定稿"}
    draft = {"scores": dict.fromkeys(ids, 2), "overall": 2}
    assert asked.form.read(f"{json.dumps(draft)} 再看一遍 {json.dumps(final)}").score == 7


def test_weights_accepted_as_given() -> None:
    weights = weight_checker(tree_for("guide"))({"weights": GUIDE, "explanation": "因为"})
    assert weights.values == GUIDE and weights.explanation == "因为" and weights.renormalised == ()


def test_weights_off_by_at_most_001_are_renormalised() -> None:
    off = {**GUIDE, "logic": 0.408}  # content sums to 1.008
    weights = weight_checker(tree_for("guide"))({"weights": off})
    assert weights.renormalised == ("content",)
    assert weights.values["logic"] == pytest.approx(0.408 / 1.008)
    content = tree_for("guide").negotiated["content"]
    assert sum(weights.values[i] for i in content) == pytest.approx(1)
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
    content = {k: GUIDE[k] for k in tree_for("completion").negotiated["content"]}
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
