"""Each LLM step's checks: what a reply must hold, and through inspect and HTTP that a bad
reply is asked again and, when it stays bad, recorded as a failure with the reason,
never turned into a default."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from build_support import MODEL, Recorder, write_rows
from inspect_ai import Epochs, Task, eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Scorer, Target
from inspect_ai.solver import TaskState

from howtobench.construct.backconstruct import (
    backconstruct_step,
    check_construction,
    construction_scorer,
    sentence_breaks,
    theme_words,
)
from howtobench.construct.classify import (
    CLASSIFY,
    agreement,
    check_genre,
    classify_sample,
    classify_step,
    genre_scorer,
)
from howtobench.construct.corpus import CorpusText
from howtobench.construct.quality import check_quality, quality_scorer, quality_step
from howtobench.construct.screen import check_flags, screen_scorer, screen_step
from howtobench.construct.steps import ANSWER, answered_means, ask_step
from howtobench.dataset.records import LONGEST_FIELD
from howtobench.judge.reading import ReplyError
from howtobench.simulator import Asked, Fault
from support.evals import run_eval
from support.metric_epochs import assert_agreeing_epochs_change_nothing, run_metrics

SHOE_STALL = (
    "巷口的修鞋摊\n\n巷口那棵槐树下，老周的修鞋摊一摆就是二十年。一只木箱，一把旧伞，"
    "几排钉子和鞋跟，就是他的全部家当。\n\n去年巷子要改造，大家都以为修鞋摊保不住了。"
)
POINTS: dict[str, Any] = {"language": "zh", "sections": [], "length": None, "reference": SHOE_STALL}
GOOD_POINTS = {
    "summary": "写一个修鞋摊在巷子改造中留了下来。",
    "theme": "巷口的修鞋摊",
    "instruction": "请撰写一篇以巷口修鞋摊为题材的散文，写出修鞋人的手艺和为人。",
    "outline": ["交代修鞋摊", "写巷子改造"],
}
SECTIONS = {**POINTS, "sections": ["characters", "theme"], "length": 2000}
GOOD_SECTIONS = {
    **{k: v for k, v in GOOD_POINTS.items() if k != "outline"},
    "instruction": "我想写一篇2000字左右的小说，讲修鞋匠守着小摊的故事，能帮我写一下吗？",
    "sections": {"characters": ["老周：修鞋二十年，话少手快"], "theme": "以小见大"},
}


def test_genre_must_be_a_listed_id_in_any_case() -> None:
    assert check_genre({"genre": " Poem "}, {})["genre"] == "poem"
    for bad in ("novel", 3, None):
        with pytest.raises(ReplyError, match='"genre" must be one of argumentative, comment'):
            check_genre({"genre": bad}, {})


@pytest.mark.parametrize("bad", [0, 6, 3.5, "high", True, None])
def test_quality_must_be_a_whole_number_from_1_to_5(bad: object) -> None:
    assert check_quality({"score": "4", "reason": "ok"}, {}) == {"score": 4, "reason": "ok"}
    with pytest.raises(ReplyError, match='"score" must be'):
        check_quality({"score": bad}, {})


def test_one_sentence_and_five_words() -> None:
    assert sentence_breaks("写一个摊子，表现人情。") == 0
    assert sentence_breaks("写一个摊子。表现人情。") == 1
    assert sentence_breaks("describe how Mr. Smith met Dr. Jones, e.g. At noon.") == 0
    assert sentence_breaks("describe the shop. Show the loss.") == 1
    assert theme_words("巷口的修鞋摊", "zh") == 3  # jieba: 巷口 / 的 / 修鞋摊
    assert theme_words("the lamp in the window", "en") == 5
    assert theme_words("「秋天」，河", "zh") == 2  # punctuation is no word


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"summary": "写一个摊子。表现人情。"}, '"summary" must be one sentence'),
        ({"summary": "写" + "很" * 300 + "。"}, '"summary" must be one sentence of at most 300'),
        ({"theme": "城市里的社区花园与青年力量"}, '"theme" must be one to 5 words'),
        ({"theme": "  "}, '"theme" must be a non-empty string'),
        ({"instruction": ""}, '"instruction" must be a non-empty string'),
        ({"instruction": "请写" + "很" * 250}, '"instruction" must be a request of at most 250'),
        ({"instruction": "请写一篇800字左右的散文。"}, '"instruction" must not state a length'),
        ({"instruction": "请写一篇两千字的散文。"}, '"instruction" must not state a length'),
        (
            {"instruction": "请写：巷口那棵槐树下，老周的修鞋摊一摆就是二十年。"},
            '"instruction" copies the text\'s sentence "巷口那棵槐树下',
        ),
        ({"outline": ["只有一条"]}, '"outline" must be a list of 2 to 12'),
        ({"outline": ["一"] * 13}, '"outline" must be a list of 2 to 12'),
        ({"outline": ["一", ""]}, '"outline" must be a list of 2 to 12'),
    ],
)
def test_construction_checks(change: dict[str, Any], message: str) -> None:
    assert check_construction(GOOD_POINTS, POINTS)["outline"] == ["交代修鞋摊", "写巷子改造"]
    with pytest.raises(ReplyError, match=message):
        check_construction({**GOOD_POINTS, **change}, POINTS)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"instruction": "我想写一篇小说，讲修鞋匠的故事。"}, "must state a length of about 2000"),
        ({"instruction": "我想写一篇1500字左右的小说。"}, "must state a length of about 2000"),
        ({"instruction": "我想写一篇两千字左右的小说。"}, "must state a length of about 2000"),
        (
            {"instruction": "我想写一篇2000字左右的小说，每段不少于300字。"},
            "must state a length of about 2000",
        ),
        ({"sections": {"theme": "x"}}, '"sections" must hold exactly characters, theme'),
        ({"sections": "人物和主题"}, '"sections" must be an object'),
        ({"sections": {"characters": "老周", "theme": "x"}}, '"characters" must be a list of 1'),
        ({"sections": {"characters": ["甲"] * 6, "theme": "x"}}, '"characters" must be a list'),
        ({"sections": {"characters": ["甲"], "theme": ""}}, '"theme" must be a non-empty'),
    ],
)
def test_section_and_length_checks(change: dict[str, Any], message: str) -> None:
    checked = check_construction(GOOD_SECTIONS, SECTIONS)
    assert checked["sections"]["characters"] == ["老周：修鞋二十年，话少手快"]
    assert "outline" not in checked
    twice = "我想写一篇2000字左右的小说，讲修鞋匠的故事。字数要求2000字左右。"
    assert check_construction({**GOOD_SECTIONS, "instruction": twice}, SECTIONS)
    with pytest.raises(ReplyError, match=message):
        check_construction({**GOOD_SECTIONS, **change}, SECTIONS)


def test_screening_quotes_must_be_in_the_item() -> None:
    item = {"item": "【参考范文】\n请联系王先生，电话\n13812345678。", "language": "zh"}
    phone = {"text": "13812345678", "kind": "phone"}
    reply = {
        "personal_info": [phone],
        "unsafe": [],
        "advertisement": ["请联系王先生，电话 13812345678"],
    }
    flags = check_flags(reply, item)["flags"]
    assert flags["personal_info"] == [phone]
    assert flags["advertisement"] == ["请联系王先生，电话 13812345678"]  # whitespace aside
    assert check_flags({**reply, "personal_info": [{**phone, "kind": " Phone "}]}, item)
    with pytest.raises(ReplyError, match='"13912345678" is not in the item'):
        check_flags({**reply, "personal_info": [{**phone, "text": "13912345678"}]}, item)
    with pytest.raises(ReplyError, match='"kind" must be one of name, phone, email'):
        check_flags({**reply, "personal_info": [{**phone, "kind": "mobile"}]}, item)
    with pytest.raises(ReplyError, match='"personal_info" must be a list of {"text"'):
        check_flags({**reply, "personal_info": ["13812345678"]}, item)
    with pytest.raises(ReplyError, match='each "personal_info" object must hold exactly text'):
        check_flags({**reply, "personal_info": [{"text": "13812345678"}]}, item)
    with pytest.raises(ReplyError, match="unknown spam"):
        check_flags({**reply, "spam": []}, item)
    with pytest.raises(ReplyError, match='"unsafe" must be a list'):
        check_flags({**reply, "unsafe": "none"}, item)


# Each step over three texts: one whose first reply breaks the form (asked again, then
# answered), one whose replies always break it (a failure with the reason), and one too
# long to send (a failure without a call).
FIXED = "修好了的"
BROKEN = "一直坏的"
LONG = "长" * 50_001


def _texts(tmp_path: Path) -> str:
    rows = [
        {"id": "fixed", "text": f"{FIXED}文章。\n\n第二段。\n\n第三段。", "genre": "prose"},
        {"id": "broken", "text": f"{BROKEN}文章。\n\n第二段。\n\n第三段。", "genre": "prose"},
        {"id": "long", "text": LONG, "genre": "prose"},
    ]
    return str(write_rows(tmp_path / "texts.jsonl", rows))


def _items(tmp_path: Path) -> str:
    rows = [
        {"id": name, "task": "open", "instruction": "请写一篇散文。", "reference": text}
        for name, text in (
            ("fixed", f"{FIXED}范文。"),
            ("broken", f"{BROKEN}范文。"),
            # at the cap a record's text may have (`dataset.LONGEST_FIELD`): read, but the
            # item with its instruction is over what a model is sent
            ("long", LONG[:LONGEST_FIELD]),
        )
    ]
    return str(write_rows(tmp_path / "items.jsonl", rows))


STEPS: list[tuple[str, Callable[[Path], Task], str]] = [
    ("classify", lambda p: classify_step(corpus=_texts(p)), '"genre" must be one of'),
    ("quality", lambda p: quality_step(corpus=_texts(p)), '"score" must be a whole number'),
    ("backconstruct", lambda p: backconstruct_step(corpus=_texts(p)), '"theme" must be one to 5'),
    ("screen", lambda p: screen_step(dataset=_items(p)), "is not in the item; quote its words"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "make", "message"), STEPS, ids=[s[0] for s in STEPS])
def test_a_bad_reply_is_asked_again_then_recorded_as_a_failure(
    serve: Callable[..., Any], tmp_path: Path, kind: str, make: Callable[[Path], Task], message: str
) -> None:
    def answer(question: Asked) -> Fault | None:
        writing = question.writing or ""
        if BROKEN in writing or (FIXED in writing and question.attempt == 1):
            return Fault("out_of_range")
        return None

    recorder = Recorder(answer)
    simulator = serve(script=recorder)
    [log] = eval(
        make(tmp_path),
        model=MODEL,
        model_base_url=simulator.base_url,
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    assert log.status == "success" and log.samples
    scores = {str(s.id): next(iter(s.scores.values())) for s in log.samples if s.scores}
    fixed, broken, long = scores["fixed"], scores["broken"], scores["long"]
    assert not _unscored(fixed.value) and len(fixed.metadata["replies"]) == 2
    assert fixed.metadata["error"] is None and fixed.metadata["value"]
    assert _unscored(broken.value) and broken.reason == "invalid_response_format"
    assert message in broken.explanation and broken.metadata["value"] is None
    assert len(broken.metadata["replies"]) == 3  # asked three times in all, then given up
    assert _unscored(long.value) and long.reason == "no_response"
    assert "characters, more than the 50,000 a model is sent" in long.explanation
    assert {k for k, _, _ in recorder.asked} == {kind}
    assert len(recorder.asked) == 2 + 3  # the long text was never sent


def _unscored(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)


# The steps' inspect parts one by one: the solver every step asks with, each step's
# scorer, and the metrics of their tables through inspect's epoch reducer.
def _classify_text(text_id: str, text: str) -> Sample:
    return classify_sample(CorpusText(text_id, text, "", "zh"))


def test_ask_step_asks_again_and_keeps_the_checked_answer(tmp_path: Path) -> None:
    """`ask_step` asks the evaluated model until the reply passes the step's check, and
    records the checked answer with every reply; its output is the last reply. A text too
    long to send is recorded as a failure without a call, and a rerun reads the checked
    answer from the reply store instead of asking again."""
    bad = '{"genre": "novel", "reason": "一个故事"}'
    good = '{"genre": "prose", "reason": "写人记事的散文"}'
    asked: list[int] = []

    def reply(messages: list[ChatMessage], *rest: object) -> ModelOutput:
        asked.append(len(messages))
        text = bad if len(messages) == 2 else good
        output = ModelOutput.from_content("mockllm/model", text)
        prompt = sum(len(m.text) for m in messages)  # a token a character: the whole prompt
        output.usage = ModelUsage(
            input_tokens=prompt, output_tokens=len(text), total_tokens=prompt + len(text)
        )
        return output

    def run(folder: str) -> EvalLog:
        task = Task(
            dataset=MemoryDataset(
                [_classify_text("fixed", SHOE_STALL), _classify_text("long", LONG)]
            ),
            solver=ask_step(CLASSIFY),
            scorer=genre_scorer(),
            epochs=Epochs(1, "mode"),
        )
        model = get_model("mockllm/model", custom_outputs=reply)
        [log] = run_eval(task, tmp_path / folder, model=model)
        return log

    log = run("first")
    assert [step.solver for step in log.plan.steps] == ["howtobench/ask_step"]
    assert asked == [2, 4]  # the question, then again with the reply and its error
    fixed, long = (next(s for s in log.samples or [] if s.id == i) for i in ("fixed", "long"))
    answer = fixed.metadata[ANSWER]
    assert answer["value"] == {"genre": "prose", "reason": "写人记事的散文"}
    assert answer["replies"] == [bad, good] and answer["error"] is None
    assert fixed.output.completion == good and fixed.scores["genre"].value == "prose"
    refused = long.metadata[ANSWER]
    assert refused["value"] is None and refused["replies"] == []
    assert "characters, more than the 50,000 a model is sent" in refused["error"]
    assert long.scores["genre"].reason == "no_response"

    again = run("again")
    assert asked == [2, 4]  # nothing asked: the checked answer came from the store
    [kept] = [s for s in again.samples or [] if s.id == "fixed"]
    assert kept.metadata[ANSWER]["value"] == answer["value"]
    assert kept.metadata[ANSWER]["from_store"]


def _state(metadata: dict[str, Any]) -> TaskState:
    return TaskState(
        model="none",  # type: ignore[arg-type]
        sample_id="t1",
        epoch=1,
        input="-",
        messages=[],
        metadata={"language": "zh", "length": None, **metadata},
    )


ANSWERED: list[tuple[Callable[[], Scorer], dict[str, Any], Any]] = [
    (genre_scorer, {"genre": "poem", "reason": "分行押韵"}, "poem"),
    (quality_scorer, {"score": 3, "reason": "平平"}, {"score": 3, "kept": 0.0}),
    (
        construction_scorer,
        {**GOOD_POINTS, "instruction": "请写一篇散文。"},
        {
            "request_length": 7,
            "stated_length": 0,
            "grounding_parts": 2,
            "summary_characters": len(GOOD_POINTS["summary"]),
            "theme_words": 3,
        },
    ),
    (
        screen_scorer,
        {
            "flags": {
                "personal_info": [{"text": "老周", "kind": "name"}],
                "unsafe": [],
                "advertisement": [],
            }
        },
        {"flagged": 1.0, "personal_info": 1, "unsafe": 0, "advertisement": 0},
    ),
]


@pytest.mark.parametrize(
    ("make", "value", "expected"), ANSWERED, ids=[a[0].__name__ for a in ANSWERED]
)
def test_each_step_scorer_scores_the_checked_answer_and_leaves_a_failure_unscored(
    make: Callable[[], Scorer], value: dict[str, Any], expected: Any
) -> None:
    answered = {"value": value, "error": None, "replies": ["…"]}
    score = asyncio.run(make()(_state({ANSWER: answered}), Target("")))
    assert score is not None and score.value == expected and score.metadata == answered
    failed = {"value": None, "error": '"genre" must be one of ...', "replies": ["…"] * 3}
    score = asyncio.run(make()(_state({ANSWER: failed}), Target("")))
    assert score is not None and score.reason == "invalid_response_format"
    assert score.explanation == failed["error"]
    silent = {"value": None, "error": "the endpoint never answered", "replies": []}
    score = asyncio.run(make()(_state({ANSWER: silent}), Target("")))
    assert score is not None and score.reason == "no_response"


def test_agreement_through_the_mode_reducer(tmp_path: Path) -> None:
    """The classify step's `agreement()` (its task folds epochs by `mode`): the share of
    labelled texts classified into their label; an unlabelled text is left out."""
    labels = {"a": {"given_genre": "poem"}, "b": {"given_genre": "poem"}, "c": {}}
    genres = {"a": "poem", "b": "prose", "c": "letter"}
    found = assert_agreeing_epochs_change_nothing(
        [agreement()], genres, tmp_path / "equal", reducer="mode", metadata=labels
    )
    assert found == {"agreement": 0.5}
    epochs = {"a": ["poem", "prose", "poem"], "b": ["prose", "poem", "poem"], "c": ["poem"] * 3}
    found = run_metrics([agreement()], epochs, tmp_path / "mixed", reducer="mode", metadata=labels)
    assert found == {"agreement": 1.0}  # each labelled text's most frequent genre is its label
    nobody = run_metrics([agreement()], {"c": ["poem"]}, tmp_path / "none", reducer="mode")
    assert nobody == {}  # nothing to agree with: no number rather than nan


def test_answered_means_through_the_mean_reducer(tmp_path: Path) -> None:
    """The steps' `answered_means(keys)`: the mean of each key over the texts that got an
    answer, each text's epochs averaged first; an unscored text is left out."""
    failed = Score.unscored(reason="no_response", explanation="no reply")
    scores = {"a": {"score": 4, "kept": 1.0}, "b": failed, "c": {"score": 3, "kept": 0.0}}
    found = assert_agreeing_epochs_change_nothing(
        [answered_means(["score", "kept"])], scores, tmp_path / "equal"
    )
    assert found == {"score": 3.5, "kept": 0.5}
    epochs = {
        "a": [{"score": 5, "kept": 1.0}, {"score": 2, "kept": 0.0}],
        "b": [failed, failed],
        "c": [{"score": 3, "kept": 0.0}, {"score": 3, "kept": 0.0}],
    }
    found = run_metrics([answered_means(["score", "kept"])], epochs, tmp_path / "mixed")
    assert found == {"score": 3.25, "kept": 0.25}
