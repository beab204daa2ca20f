"""The single-call judge baselines `rubric` and `autoplan`, through inspect.

Judges are scripted by what the prompt asks (the simulator's `classify`), never by call
order: calls run concurrently. The one exception is self-consistency, where the judge
samples ask the very same prompt; there the judge hands out a fixed set of replies and
the test checks only what does not depend on their order (mean and spread).
"""

import json
import re
import threading
from pathlib import Path
from statistics import fmean, pstdev

import pytest
from inspect_ai import Task, task_with

from howtobench import autoplan, open_writing, rubric
from howtobench.baselines.autoplan import check_plan, plan_question
from howtobench.baselines.prompts import (
    APPENDIX_H_RUBRICS,
    RUBRIC_OF_GENRE,
    baseline_prompt,
    genre_rubric,
)
from howtobench.baselines.rubric import rubric_checker, rubric_question
from howtobench.dataset import open_source
from howtobench.judge.reading import ReplyError
from howtobench.simulator import classify, out_of_range_reply, valid_reply
from howtobench.vocabulary.genres import CANONICAL_GENRES
from support.data import anchored_input, write_jsonl
from support.evals import run_eval
from support.judges import (
    SCORES,
    Asked,
    Reply,
    ScriptedJudge,
    fixed_scores,
    llm_calls,
    rubric_reply,
    weights_for,
)

PLAN = {
    "dimensions": [
        {"name": " Content ", "weight": 2, "score": 8},
        {"name": "structure", "weight": 1, "score": 6},
        {"name": "LANGUAGE", "weight": 1, "score": 4},
    ],
    "overall": 7.2,
    "reason": "content counts double",
}
# s_k = weight_k * score_k: 16, 6 and 4; S = 26
PLAN_SHARES = {"content": 16 / 26, "structure": 6 / 26, "language": 4 / 26}
SPEECH = ["goal", "clarity", "evidence", "depth", "language"]
ZH_BANDS = ("（1–3）", "（4–7）", "（8–10）")
EN_BANDS = ("(1-3)", "(4-7)", "(8-10)")


WRITER = "replay/demo-writer-a"  # the model `speech_task` is run with


def speech_task(**kwargs: object) -> Task:
    """The demo's one speech item (Chinese, open writing), to be run with `WRITER`."""
    return open_writing(dataset="demo", genre="speech", **kwargs)


def baselines(question: Asked) -> Reply:
    """Rubric: overall 7, every dimension 5; auto-plan: PLAN."""
    if question.kind == "rubric":
        return rubric_reply(question, 7)
    assert question.kind == "autoplan", question.kind
    return PLAN


def retry_message(error: str) -> str:
    return f"你上面的回复无法使用：{error}。请按要求重新回复，只给出一个 JSON 对象，不要其他文字。"


def test_rubric_files_name_the_same_dimensions_in_both_languages() -> None:
    for name in (*APPENDIX_H_RUBRICS, "general"):
        zh, en = genre_rubric(name, "zh"), genre_rubric(name, "en")
        assert zh.name == en.name == name
        assert zh.ids == en.ids and 5 <= len(zh.ids) <= 6 and len(set(zh.ids)) == len(zh.ids)
        # low, middle and high marks for every dimension
        for text, bands in ((zh.text, ZH_BANDS), (en.text, EN_BANDS)):
            assert all(text.count(band) == len(zh.ids) for band in bands)
    assert genre_rubric("travelogue", "zh").name == "general"
    assert genre_rubric("poem", "fr") == genre_rubric("poem", "en")


def test_each_genre_is_judged_with_its_rubric_in_the_language_of_the_data(
    tmp_path: Path,
) -> None:
    genres = [*CANONICAL_GENRES, "travelogue"]
    rows = [
        {
            "id": f"item_{genre}",
            "instruction": f"请写一篇作品（第 {n} 题）。",
            "genre": genre,
            "reference": "参考文本。",
            "generations": {"m": f"第 {n} 篇作品的正文。"},
        }
        for n, genre in enumerate(genres)
    ]
    rows.append(
        {
            "id": "item_english",
            "instruction": "Write a short poem about the sea.",
            "genre": "poem",
            "reference": "The sea keeps its own time.",
            "generations": {"m": "Waves fold and unfold."},
        }
    )
    data = write_jsonl(tmp_path / "genres.jsonl", rows)
    judge = ScriptedJudge(baselines)
    [log] = run_eval(
        open_writing(dataset=str(data), scorers="rubric"), tmp_path, judge, model="replay/m"
    )
    assert judge.count("rubric") == len(judge.questions) == len(rows)
    questions = {q.writing: q for q in judge.questions}
    for sample in log.samples:
        language = "en" if sample.id == "item_english" else "zh"
        expected = genre_rubric(sample.metadata["genre"], language)
        assert expected.name == RUBRIC_OF_GENRE.get(sample.metadata["genre"], "general")
        question = questions[sample.output.completion]
        # the shared materials first, the rubric and the answer format last
        after_writing = question.text.rpartition("</writing>")[2]
        assert expected.text in after_writing
        assert ", ".join(f'"{i}": <1-10>' for i in expected.ids) in after_writing
        score = sample.scores["rubric"]
        assert score.metadata["rubric"] == expected.name
        assert list(score.metadata["scores"]) == list(expected.ids)


def test_rubric_value_metadata_and_explanation(tmp_path: Path) -> None:
    def answer(question: Asked) -> Reply:
        return rubric_reply(question, 7, {"theme": 8, "evidence": 6, "effect": 3})

    judge = ScriptedJudge(answer)
    [log] = run_eval(
        open_writing(dataset="demo", scorers="rubric"),
        tmp_path,
        judge,
        model="replay/demo-writer-a",
    )
    assert len(log.samples) == judge.count("rubric") == 4
    questions = {q.writing: q for q in judge.questions}
    for sample in log.samples:
        language = "en" if sample.id == "demo_open_4" else "zh"
        question = questions[sample.output.completion]
        meta = sample.metadata
        rubric = genre_rubric(meta["genre"], language, meta["genre_raw"])
        assert rubric.text in question.text
        # 纪实 counts under fiction in Table 4 but has appendix H's documentary rubric,
        # 公文 counts under report but has its officials rubric
        finer = {"纪实": "documentary", "公文": "officials"}
        assert rubric.name == finer.get(meta["genre_raw"], meta["genre"])
    scores = {s.id: s.scores["rubric"] for s in log.samples}
    english = scores["demo_open_4"]
    assert english.value == 7
    assert english.metadata["rubric"] == "argumentative"
    assert english.metadata["scores"] == {
        "theme": 8,
        "evidence": 6,
        "expression": 5,
        "structure": 5,
        "insight": 5,
    }
    assert english.metadata["reason"] == "scripted rubric"
    assert english.metadata["anchor"] == "human"
    [record] = english.metadata["judges"]
    assert record["model"] == "mockllm/judge" and record["error"] is None
    assert json.loads(record["replies"][0])["scores"]["theme"] == 8
    assert "theme 8 · evidence 6 · expression 5" in english.explanation
    assert scores["demo_open_1"].metadata["scores"]["effect"] == 3  # the poem's rubric
    [overall] = [s for s in log.results.scores if s.scorer == "rubric"]
    assert overall.name == "rubric" and overall.metrics["mean"].value == 7
    assert {"mean", "stderr", "poem", "argumentative", "all"} <= set(overall.metrics)


def test_autoplan_records_dimensions_and_shares(tmp_path: Path) -> None:
    judge = ScriptedJudge(baselines)
    [log] = run_eval(speech_task(scorers="autoplan"), tmp_path, judge, model=WRITER)
    score = log.samples[0].scores["autoplan"]
    assert score.value == 7.2
    assert score.metadata["shares"] == pytest.approx(PLAN_SHARES)
    assert score.metadata["dimensions"] == PLAN["dimensions"]
    assert score.metadata["reason"] == "content counts double"
    assert score.metadata["judges"][0]["shares"] == pytest.approx(PLAN_SHARES)
    assert "Content w=2 8 (62%)" in score.explanation
    [question] = judge.questions
    assert question.kind == "autoplan"
    assert question.text.endswith(baseline_prompt("autoplan", "zh"))


def test_bad_replies_are_asked_again_with_the_error_stated(tmp_path: Path) -> None:
    def answer(question: Asked) -> Reply:
        if question.attempt > 1:
            return baselines(question)
        if question.kind == "rubric":
            reply = rubric_reply(question, 7)
            reply["scores"]["style"] = reply["scores"].pop("goal")
            return reply
        return {**PLAN, "dimensions": PLAN["dimensions"][:2]}

    judge = ScriptedJudge(answer)
    [log] = run_eval(speech_task(scorers="rubric,autoplan"), tmp_path, judge, model=WRITER)
    retries = {q.kind: q.last for q in judge.questions if q.attempt == 2}
    assert retries == {
        "rubric": retry_message(
            f'"scores" must hold exactly {", ".join(SPEECH)} (missing goal; unknown style)'
        ),
        "autoplan": retry_message('"dimensions" must be a list of 3 to 6 dimensions, got 2'),
    }
    assert len(judge.questions) == 4
    scores = log.samples[0].scores
    assert scores["rubric"].value == 7
    assert scores["autoplan"].value == 7.2
    assert len(scores["rubric"].metadata["judges"][0]["replies"]) == 2


def test_unusable_replies_leave_the_sample_unscored_with_the_reason(tmp_path: Path) -> None:
    records = open_source("demo").records("open")
    broken = next(r for r in records if r.genre == "poem").generations["demo-writer-b"]

    def answer(question: Asked) -> Reply:
        if question.writing == broken:
            return out_of_range_reply(question)  # every score 42 / overall 0
        return baselines(question)

    judge = ScriptedJudge(answer)
    [log] = run_eval(
        open_writing(dataset="demo", scorers="rubric,autoplan"),
        tmp_path,
        judge,
        model="replay/demo-writer-b",
    )
    scores = {s.id: s.scores for s in log.samples}
    rubric_score, plan_score = scores["demo_open_1"]["rubric"], scores["demo_open_1"]["autoplan"]
    assert rubric_score.reason == plan_score.reason == "grader_failed"
    assert rubric_score.explanation == (
        'mockllm/judge: the score of "language" must be a whole number from 1 to 10, got 42'
    )
    assert plan_score.explanation == 'mockllm/judge: "overall" must be a number from 1 to 10, got 0'
    for score in (rubric_score, plan_score):
        [record] = score.metadata["judges"]
        assert len(record["replies"]) == 3 and record["overall"] is None
        assert "shares" not in score.metadata and "scores" not in score.metadata
    assert scores["demo_open_2"]["rubric"].value == 7
    assert judge.count("rubric") == judge.count("autoplan") == 3 + 3
    for result in log.results.scores:
        judged = result.scorer != "writing_state"  # which counts every writing
        assert (result.scored_samples, result.unscored_samples) == ((3, 1) if judged else (4, 0))


def test_panel_averages_overall_and_keeps_every_reply(tmp_path: Path) -> None:
    def panel_judge(name: str, overall: int, dimension: int, plan: list) -> ScriptedJudge:
        def answer(question: Asked) -> Reply:
            if question.kind == "rubric":
                return rubric_reply(question, overall, dict.fromkeys(SPEECH, dimension))
            return {"dimensions": plan, "overall": overall, "reason": name}

        return ScriptedJudge(answer, name=name)

    strict = panel_judge("strict", 4, 3, [{"name": n, "weight": 1, "score": 4} for n in "abc"])
    kind = panel_judge("kind", 9, 8, [{"name": n, "weight": 1, "score": 9} for n in "bcd"])
    grader = ScriptedJudge(baselines, name="grader")
    panel = [strict.model(), kind.model()]
    task = task_with(speech_task(), scorer=[rubric(judges=panel), autoplan(judges=panel)])
    [log] = run_eval(task, tmp_path, grader, model=WRITER)
    scores = log.samples[0].scores
    assert grader.questions == []
    assert strict.count("rubric") == kind.count("rubric") == 1
    assert strict.count("autoplan") == kind.count("autoplan") == 1
    graded = scores["rubric"]
    assert graded.value == 6.5
    assert graded.metadata["scores"] == dict.fromkeys(SPEECH, 5.5)
    assert graded.metadata["by_judge"] == {"mockllm/strict": 4, "mockllm/kind": 9}
    assert [j["model"] for j in graded.metadata["judges"]] == ["mockllm/strict", "mockllm/kind"]
    assert all(len(j["replies"]) == 1 for j in graded.metadata["judges"])
    assert graded.explanation.startswith("overall 6.50 = mean of 2 judges")
    planned = scores["autoplan"]
    assert planned.value == 6.5
    # each judge's shares are thirds; a name one judge did not plan counts 0 for it
    third = 1 / 3
    assert planned.metadata["shares"] == pytest.approx(
        {"a": third / 2, "b": third, "c": third, "d": third / 2}
    )
    assert [d["judge"] for d in planned.metadata["dimensions"]] == ["mockllm/strict"] * 3 + [
        "mockllm/kind"
    ] * 3
    assert planned.metadata["reason"] == "mockllm/strict: strict\nmockllm/kind: kind"


def test_reference_free_mode_shows_no_reference(tmp_path: Path) -> None:
    reference = next(
        r for r in open_source("demo").records("open") if r.genre == "speech"
    ).reference
    with_reference = ScriptedJudge(baselines)
    [log] = run_eval(speech_task(scorers="rubric,autoplan"), tmp_path, with_reference, model=WRITER)
    assert len(with_reference.questions) == 2
    assert all(reference.strip() in q.text for q in with_reference.questions)
    assert log.samples[0].scores["rubric"].metadata["anchor"] == "human"
    without = ScriptedJudge(baselines)
    [log] = run_eval(
        speech_task(scorers="rubric,autoplan", anchor="none"), tmp_path, without, model=WRITER
    )
    assert len(without.questions) == 2
    for question in without.questions:
        assert reference.strip()[:20] not in question.text and "<reference>" not in question.text
    for name in ("rubric", "autoplan"):
        assert log.samples[0].scores[name].metadata["anchor"] == "none"


def test_self_consistency_means_three_cached_judge_samples(tmp_path: Path) -> None:
    lock = threading.Lock()
    handed = {"rubric": [5, 6, 7], "autoplan": [4.0, 6.0, 8.0]}

    def answer(question: Asked) -> Reply:  # the same prompt three times: any order
        with lock:
            overall = handed[question.kind].pop()
        if question.kind == "rubric":
            return rubric_reply(question, overall)
        return {**PLAN, "overall": overall}

    judge = ScriptedJudge(answer)
    task = speech_task(scorers="rubric,autoplan", judge_samples=3)
    [log] = run_eval(task, tmp_path, judge, model=WRITER)
    assert judge.count("rubric") == judge.count("autoplan") == 3
    scores = log.samples[0].scores
    for name, values in (("rubric", [5, 6, 7]), ("autoplan", [4.0, 6.0, 8.0])):
        score = scores[name]
        assert score.value == pytest.approx(fmean(values))
        record = score.metadata["self_consistency"]
        assert record["n"] == record["scored"] == 3
        assert sorted(record["values"]) == values
        assert record["std"] == pytest.approx(pstdev(values))
    others = scores["autoplan"].metadata["self_consistency"]["samples_metadata"]
    assert [m["shares"] for m in others] == [pytest.approx(PLAN_SHARES)] * 2
    # three distinct cache keys: a repeated run is answered from the cache, no new calls
    [again] = run_eval(
        speech_task(scorers="rubric,autoplan", judge_samples=3), tmp_path, judge, model=WRITER
    )
    assert len(judge.questions) == 6
    assert again.samples[0].scores["rubric"].value == pytest.approx(6)


def test_tow_rubric_and_autoplan_score_together(tmp_path: Path) -> None:
    tow = fixed_scores(
        {
            **SCORES,
            "opening_ending": 7,
            "rhetoric": 7,
            "logic": 7,
            "emotion": 7,
            "plots": 9,
            "paragraphing": 3,
            "impression": 7,
        }
    )

    def answer(question: Asked) -> Reply:
        if question.kind == "negotiator":
            return weights_for(question)
        if question.kind in ("rubric", "autoplan"):
            return baselines(question)
        return tow(question)

    judge = ScriptedJudge(answer)
    [log] = run_eval(
        speech_task(scorers="tow,rubric,autoplan,rouge_l"), tmp_path, judge, model=WRITER
    )
    scores = log.samples[0].scores
    assert set(scores) == {"tow", "rubric", "autoplan", "rouge_l", "writing_state"}
    assert scores["rubric"].value == 7
    assert scores["autoplan"].value == 7.2
    assert isinstance(scores["tow"].value, dict) and "content" in scores["tow"].value
    assert judge.count("rubric") == judge.count("autoplan") == judge.count("negotiator") == 1
    assert len(judge.questions) == 1 + llm_calls("open") + 2
    assert {(s.scorer, s.name) for s in log.results.scores} >= {
        ("tow", "overall"),
        ("rubric", "rubric"),
        ("autoplan", "autoplan"),
    }


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (
            {**PLAN, "dimensions": PLAN["dimensions"] * 3},
            '"dimensions" must be a list of 3 to 6 dimensions, got 9',
        ),
        (
            {**PLAN, "dimensions": "content"},
            '"dimensions" must be a list of 3 to 6 dimensions, got no list',
        ),
        (
            {
                **PLAN,
                "dimensions": [*PLAN["dimensions"], {"name": "content", "weight": 1, "score": 5}],
            },
            "dimension names must differ, content is repeated",
        ),
        (
            {"dimensions": [{**d, "weight": 0} for d in PLAN["dimensions"]], "overall": 5},
            "at least one weight must be above 0",
        ),
        (
            {
                **PLAN,
                "dimensions": [{**PLAN["dimensions"][0], "weight": -1}, *PLAN["dimensions"][1:]],
            },
            'the weight of " Content " must not be negative, got -1',
        ),
        (
            {
                **PLAN,
                "dimensions": [{**PLAN["dimensions"][0], "score": 7.5}, *PLAN["dimensions"][1:]],
            },
            'the score of " Content " must be a whole number from 1 to 10, got 7.5',
        ),
        (
            {**PLAN, "dimensions": [*PLAN["dimensions"][:2], {"weight": 1, "score": 5}]},
            'dimension 3 needs a non-empty "name"',
        ),
        ({**PLAN, "overall": 11}, '"overall" must be a number from 1 to 10, got 11'),
    ],
)
def test_plan_check_refuses(reply: dict, error: str) -> None:
    with pytest.raises(ReplyError, match=re.escape(error)):
        check_plan(reply)


def test_rubric_check_refuses_fractions_and_missing_overall() -> None:
    check = rubric_checker(("a", "b", "c"))
    with pytest.raises(ReplyError, match='the score of "b" must be a whole number'):
        check({"scores": {"a": 5, "b": 6.5, "c": 7}, "overall": 6})
    with pytest.raises(ReplyError, match='"overall" must be a number, got null'):
        check({"scores": {"a": 5, "b": 6, "c": 7}})
    with pytest.raises(ReplyError, match='"scores" must be an object'):
        check({"scores": [5, 6, 7], "overall": 6})
    assert check({"scores": {"a": "5", "b": 6, "c": 7}, "overall": 6}).details == {
        "scores": {"a": 5, "b": 6, "c": 7}
    }


@pytest.mark.parametrize("language", ["zh", "en"])
def test_simulator_recognises_and_answers_both_questions(language: str) -> None:
    judge_input = anchored_input(
        genre="contract",
        language=language,
        instruction="请起草一份房屋租赁合同。",
        reference="参考合同。",
        writing="甲方与乙方约定如下。",
    )
    materials = judge_input.materials(with_anchor=True)
    asked = {"rubric": rubric_question(judge_input), "autoplan": plan_question(judge_input)}
    for kind, question in asked.items():
        assert question.system == baseline_prompt(f"{kind}_system", language)
        seen = classify(
            [
                {"role": "system", "content": question.system},
                {"role": "user", "content": f"{materials}\n\n{question.instructions}"},
            ]
        )
        assert seen.kind == kind and seen.writing == judge_input.writing
        verdict = question.form.read(valid_reply(seen))
        assert 1 <= verdict.score <= 10
        if kind == "rubric":
            assert list(verdict.details["scores"]) == list(genre_rubric("contract", language).ids)
        with pytest.raises(ReplyError):
            question.form.read(out_of_range_reply(seen))
