"""A judge reply whose answer object is there but does not parse (issue 28): the parse
error is named, and a lone score in it is recovered, used and marked as recovered."""

from pathlib import Path

import pytest
from inspect_ai.log import InfoEvent

from howtobench import guide
from howtobench.baselines.autoplan import check_plan
from howtobench.dataset import open_source
from howtobench.judge.reading import BrokenJSON, Form, ReplyError
from howtobench.tree.experts import score_form
from howtobench.tree.spec import LEAVES
from support.evals import run_eval
from support.judges import SCORES, Asked, Reply, ScriptedJudge, weights_for

RHETORIC = score_form(next(leaf for leaf in LEAVES if leaf.id == "rhetoric"))
# What a real judge wrote: the prompt's quoted connectors echoed with ASCII quotes.
ECHOED = '{"score": 7, "reason": "少用"首先、其次、此外、综上所述"之类的连接词"}'
# Two scores in one broken object: which one is the answer cannot be told.
AMBIGUOUS = '{"score": 7, "reason": "初评"score": 4"偏低"}'


def test_a_lone_score_in_a_broken_object_is_recovered_and_says_where_it_broke() -> None:
    verdict, recovered = RHETORIC.reading(ECHOED)
    assert verdict.score == 7
    assert recovered == "the JSON does not parse at line 1 column 28: Expecting ',' delimiter"
    # after prose on an earlier line: the line and column are the reply's own
    _, recovered = RHETORIC.reading(f"我的评价：\n{ECHOED}")
    assert recovered is not None and recovered.startswith("the JSON does not parse at line 2 ")
    # a broken final word after a good draft is still the final word
    assert RHETORIC.read(f'draft {{"score": 3}}\nfinal {ECHOED}').score == 7
    assert RHETORIC.reading('{"score": 5, "reason": "好"}')[1] is None


def test_a_broken_object_with_two_scores_names_the_parse_error_and_reads_none() -> None:
    with pytest.raises(ReplyError) as raised:
        RHETORIC.read(AMBIGUOUS)
    assert str(raised.value) == (
        "the JSON does not parse at line 1 column 28: Expecting ',' delimiter"
        ' (it holds 2 "score" values, so none is taken)'
    )
    # a recovered score is still checked against the leaf's scale
    with pytest.raises(ReplyError, match="from 1 to 10, got 12"):
        RHETORIC.read('{"score": 12, "reason": "a"b"}')


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        # the rubric's score quoted in the reason, the judge's own given as a string
        (
            '{"reason": "the rubric\'s "score": 9 is for excellent work; this is weak", '
            '"score": "3"}',
            'it holds 2 "score" values, so none is taken',
        ),
        # the only score stands inside the reason
        ('{"reason": "评分标准说"score": 9"才算优秀", "level": "weak"}', "stands inside a string"),
        # cut inside its reason, quoting a score (the server said `stop`)
        ('{"reason": "the top band "score": 9 means', "cut off before it closes"),
    ],
)
def test_recovery_takes_only_the_judges_own_number(reply: str, why: str) -> None:
    """No number from inside a string, a reason or a cut reply: the question is asked
    again, its reason saying why nothing was read."""
    with pytest.raises(ReplyError, match=why):
        RHETORIC.read(reply)


def test_a_reply_ending_inside_an_unclosed_think_block_holds_no_answer() -> None:
    with pytest.raises(ReplyError, match=r"ends inside its reasoning \(a <think> block never"):
        RHETORIC.read('<think>先打个草稿 {"score": 8, "reason": "草稿"}')
    # closed, the draft is passed over and the answer after it is read
    assert RHETORIC.read('<think>{"score": 8}</think>{"score": 5, "reason": "好"}').score == 5
    # a member given as a quoted number in an object broken elsewhere is the judge's own
    assert RHETORIC.read('{"reason": "好"的", "score": "6"}').score == 6


def test_a_form_without_salvage_reports_the_parse_error_not_a_missing_object() -> None:
    autoplan = Form(("dimensions", "overall"), check_plan)
    with pytest.raises(BrokenJSON, match=r"^the JSON does not parse at line 1 column \d+: "):
        autoplan.read(
            '{"dimensions": [{"name": "a", "weight": 1, "score": 6}], "overall": 6, "reason": "用"好"字"}'
        )
    # prose braces and objects without the keys are not a broken answer
    with pytest.raises(ReplyError, match="no JSON object$"):
        RHETORIC.read("集合 {a, b} 里没有分数")


@pytest.mark.slow
def test_an_echoed_quote_is_recovered_in_a_run_and_an_ambiguous_one_left_unscored(
    tmp_path: Path,
) -> None:
    writings = open_source("demo").generations("guide", "demo-writer-a")
    ambiguous = writings["demo_guide_2"]

    def answer(question: Asked) -> Reply:
        if question.kind == "negotiator":
            return weights_for(question)
        if question.kind == "rhetoric":
            return AMBIGUOUS if question.writing == ambiguous else ECHOED
        return {"score": SCORES[question.kind], "reason": "ok"}

    judge = ScriptedJudge(answer)
    [log] = run_eval(guide(dataset="demo"), tmp_path, judge, model="replay/demo-writer-a")
    samples = {str(s.id): s for s in log.samples or []}

    recovered = samples["demo_guide_1"]
    score = recovered.scores["tow"]
    assert isinstance(score.value, dict) and score.value["rhetoric"] == 7
    [rhetoric] = score.metadata["leaves"]["rhetoric"]["judges"]
    assert rhetoric["score"] == 7 and rhetoric["replies"] == [ECHOED]  # used, not re-asked
    assert rhetoric["recovered"] == (
        "the JSON does not parse at line 1 column 28: Expecting ',' delimiter"
    )
    [logic] = score.metadata["leaves"]["logic"]["judges"]
    assert logic["recovered"] is None
    noted = [
        e.data
        for e in recovered.events
        if isinstance(e, InfoEvent) and isinstance(e.data, dict) and "recovered" in e.data
    ]
    assert [(d["recovered"], d["reply"]) for d in noted] == [(rhetoric["recovered"], ECHOED)]

    unscored = samples["demo_guide_2"].scores["tow"]
    assert unscored.reason == "grader_failed"
    assert unscored.explanation == (
        "rhetoric (mockllm/judge): the JSON does not parse at line 1 column 28:"
        " Expecting ',' delimiter (it holds 2 \"score\" values, so none is taken)"
    )
    assert unscored.metadata["leaves"]["rhetoric"]["judges"][0]["replies"] == [AMBIGUOUS] * 3
    # the re-ask tells the judge where its JSON broke
    reasks = [q for q in judge.questions if q.kind == "rhetoric" and q.attempt > 1]
    assert len(reasks) == 2
    assert all("does not parse at line 1 column 28" in q.last for q in reasks)
