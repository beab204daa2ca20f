"""The writing under test: what the judges read is the writer's whole, final writing, and
the run says when it is not (a leading trace removed, tag words in prose kept, cut,
filtered, empty and refused writings named and counted in the log's results; the
artifacts of the paper's prompts stripped without loss, or kept)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai.analysis import evals_df
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, resolve_sample_attachments

from howtobench import completion, guide, open_writing
from howtobench.simulator import classify
from howtobench.vocabulary.metadata import SampleKey, ScoreKey, TaskKey
from howtobench.writing.state import (
    count_states,
    ends_mid_sentence,
    examine,
    is_refusal,
    remove_reasoning,
)
from howtobench.writing.writer import WRITER_MAX_TOKENS
from support.evals import run_eval, scores
from support.judges import ScriptedJudge, Serve, hashed_judge, llm_calls
from support.writers import (
    BEHAVIOURS,
    PROSE,
    REFUSAL,
    TRACE,
    TRICKS,
    WRITING,
    writer_model,
    writer_server,
)

# --- the pure core ----------------------------------------------------------------------


def test_a_trace_is_removed_only_where_it_leads_the_reply() -> None:
    block = f"<think>{TRACE}</think>\n\n"
    assert remove_reasoning(f"{block}{WRITING}") == (WRITING, block, False)
    assert remove_reasoning(f"  \n{block}{WRITING}")[0] == WRITING  # after blanks
    closed = f"{TRACE}\n</think>"  # R1-style: the template opened it in the prompt
    assert remove_reasoning(f"{closed}\n\n{WRITING}") == (WRITING, closed, False)
    # a trace the limit cut before it closed: nothing is left to judge
    assert remove_reasoning(f"<think>{TRACE}") == ("", f"<think>{TRACE}", False)
    assert remove_reasoning(WRITING) == (WRITING, "", False)
    # tag words in prose are the writing's own: kept whole, and said
    for prose in (
        *PROSE.values(),
        f"{WRITING}</think>",  # nothing follows the tag
        f"{TRACE}</think>{WRITING}",  # the writing goes on on the tag's line
        f"{WRITING}\n\n<think>{TRACE}</think>\n\n结尾。",  # a pair that does not lead
    ):
        assert remove_reasoning(prose)[0] == prose, prose
        assert remove_reasoning(prose)[2] == ("think>" in prose), prose


def test_states_from_stop_reasons() -> None:
    assert examine(WRITING, "stop", "open")[1].state == "complete"
    assert examine(WRITING[:20], "max_tokens", "open")[1].state == "cut"
    assert examine(WRITING, "model_length", "open")[1].state == "cut"
    assert examine("  \n", "stop", "open")[1].state == "empty"
    # a trace the limit cut before it closed is a cut writing, with nothing left
    writing, state = examine(f"<think>{TRACE}", "max_tokens", "open")
    assert (writing, state.state, state.reasoning_chars) == ("", "cut", len(TRACE) + 7)
    # a provider's reasoning part is counted, the text kept whole; and counted once when
    # the server left it in the text too
    assert examine(WRITING, "stop", "open", provider_reasoning="想一想")[1].reasoning_chars == 3
    twice = f"{TRACE}\n</think>\n\n{WRITING}"
    writing, state = examine(twice, "stop", "open", provider_reasoning=TRACE)
    assert (writing, state.reasoning_chars) == (WRITING, len(TRACE) + 9)
    writing, state = examine(twice, "stop", "open", provider_reasoning="另一段推理")
    assert state.reasoning_chars == len(TRACE) + 9 + 5


def test_a_filtered_writing_says_whether_it_was_judged() -> None:
    withheld = examine("", "content_filter", "open")[1]
    stopped = examine(WRITING[:30], "content_filter", "open")[1]
    assert withheld.state == stopped.state == "filtered"
    assert "withheld" in str(withheld.note) and "not judged" in str(withheld.note)
    assert "after 30 characters: the text it let through is judged" in str(stopped.note)


def test_a_refusal_is_named_and_a_writing_that_apologises_is_not() -> None:
    for refusal in (
        "I'm sorry, but I can't help with that.",
        "I cannot help with this request.",
        "Sorry, I won't write that.",
        "抱歉，我无法完成这个要求。",
        # gpt-4o-2024-11-20's open infer_256, as published
        "很抱歉，我无法一次生成如此大篇幅的内容。不过，如果你有一个具体章节、段落或者内容大纲，"
        "我可以分段帮助你完成。",
        "我不能为你写这篇文章。",
    ):
        assert is_refusal(refusal), refusal
        writing, state = examine(refusal, "unknown", "open")
        assert (writing, state.state) == (refusal, "refused")
        assert "refused" in str(state.note) and "judged as written" in str(state.note)
    letter = "尊敬的领导：\n\n非常抱歉，我不能继续在这里工作了，特此提出辞职。" + WRITING * 4
    for writing in (
        letter,  # a long writing that apologises
        "对不起，我不能跟你走。",  # a line of dialogue: it names no request
        "我不能忘记那个夏天，母亲帮我收拾行李。",  # "cannot" without a request after it
        "I'm sorry, said the fox.",
    ):
        assert not is_refusal(writing), writing
    # the provider's own refusal is one, whatever the words
    assert examine("No.", "stop", "open", provider_refusal=True)[1].state == "refused"


def test_a_stored_writing_is_cut_when_it_ends_mid_sentence() -> None:
    # the last line of a gpt-4o-2024-11-20 open writing, as published, ends so
    cut = "古镇的保护面临挑战。部分古镇居为追求经济效益，过度开发商业活动，甚至将建筑大肆"
    assert examine(f"第一段。\n\n{cut}", "unknown", "open")[1].state == "cut"
    assert (
        examine(f"第一段。\n\n{cut}", "stop", "open")[1].state == "complete"
    )  # the server said so
    for finished in (
        "正文。\n日期：2023年7月15日",  # a date line
        "正文。\n此致\n敬礼",  # a sign-off
        "我们走过的路\n那里，是中国的未来，是民族的复兴",  # a line of verse among others
        "正文。\n**落款：某某单位**",  # a signature in bold
        "正文。\n申请日期：XXXX年XX月XX日",
    ):
        assert not ends_mid_sentence(finished), finished
    for cut_line in (
        "要贴近群众的期待。讲述他们感兴趣的内容，才能让理论真正走进人",  # after a sentence end
        "他大胆地创造和改制词调，",  # a comma
        "这是一个很长的句子没有任何标点但是它已经超过了四十个字所以它不是标题也不是签名或者日期行",
        "（三）注重成果转化，建立长效机制",  # a heading at the end: its section never comes
        "那里，是中国的未来，是民族的复兴",  # a short line after finished prose
    ):
        assert ends_mid_sentence(f"正文。\n{cut_line}"), cut_line


def test_the_completion_artifacts_go_and_the_first_answer_stays() -> None:
    note = "这段内容补充了消费者应理性行使权利的观点。"
    published = f"消费者和商家应该相互理解、互利共赢。\n<解释开始>{note}<解释结束>"
    writing, state = examine(published, "unknown", "completion")
    assert writing == "消费者和商家应该相互理解、互利共赢。"
    assert state.artifacts == {"explanation_blocks": 1, "explanation_chars": len(note)}
    assert state.artifacts_removed and state.stripped_chars == len(published) - len(writing)
    tagged = (
        "<我的生成开始>  \n暮色渐浓。归巢的鸟掠过树梢。\n<我的生成结束>\n<解启开始>说明。<解启结束>"
    )
    assert examine(tagged, "unknown", "completion")[0] == "暮色渐浓。归巢的鸟掠过树梢。"
    # glm-4-plus's infer_1325: 13 titles, the first without its start tag
    titles = "《镜中幻影》\n<我的补全结束>\n\n<我的补全开始>\n《湖底秘境》\n<我的补全结束>\n\n<我的补全开始>\n《暮色"
    writing, state = examine(titles, "unknown", "completion")
    assert writing == "《镜中幻影》" and state.artifacts["later_answers"] == 2
    # a second answer after an explanation (claude-3-haiku's infer_1062), a stray
    # explanation end (Llama-3.3's infer_1073) and a tag cut at the end (gpt-4o's infer_1099)
    second = "第一个答案。\n<解释开始>这段内容补充了观点。<解释结束>\n\n<我的生成开始>第二个答案。"
    assert examine(second, "unknown", "completion")[0] == "第一个答案。"
    for stray in ("答案。\n<解释结束>", "答案。<我的补全结束", "答案。\n\n<我的"):
        writing, state = examine(stray, "unknown", "completion")
        assert (writing, state.artifacts["stray_tags"]) == ("答案。", 1), stray
    # numbered slots: the tags go, their text stays (claude-3-haiku's infer_1089)
    slots = "比如有的品牌，<填充1>忽视双方调性,</填充1> 盲目合作。"
    assert examine(slots, "unknown", "completion")[0] == "比如有的品牌，忽视双方调性, 盲目合作。"


def test_fill_inside_an_explanation_block_is_kept_where_it_continues_the_writing() -> None:
    # claude-3-haiku's infer_1006: the fill's list is inside the tags, after a lead-in
    listed = (
        "究其原因，缺觉的状况往往与以下几个因素有关:\n<解释开始>\n下面从几个方面来解释造成睡眠问题的原因:\n"
        "1. 生活作息不规律。\n2. 压力过大。\n<解释结束>"
    )
    writing, state = examine(listed, "unknown", "completion")
    assert writing.endswith("2. 压力过大。") and state.artifacts == {"explanations_kept": 1}
    # a block that names no part of the text continues it (claude-3-haiku's infer_1017)
    more = "消费者和商家应该相互理解。\n<解释开始>只有互相理解，网购生态才能健康。<解释结束>"
    assert examine(more, "unknown", "completion")[0].endswith("网购生态才能健康。")
    # a block that speaks of the text is an explanation, lead-in or not
    for note in ("这一行补充了鸟群寻找居所的动作。", "此处需要承接上文的批判。"):
        writing, _ = examine(f"找寻栖息之地，\n<解释开始>{note}<解释结束>", "unknown", "completion")
        assert writing == "找寻栖息之地，", note
    # a block that repeats the answer is a second answer (Llama-3.3's infer_1272)
    answer = "蹲点报道的价值在于其深度和真实性，能够让读者了解事件的本质。"
    again = f"{answer}\n<解释开始>{answer}例如，光明日报社选取西海固。<解释结束>"
    assert examine(again, "unknown", "completion")[0] == answer


def test_an_unfilled_blank_is_empty() -> None:
    # claude-3-haiku's infer_1374: the marker, and an explanation
    marker = "[fill in the blank]\n<解释开始>\n作者建议对年轻人摆摊持理解和支持态度。\n<解释结束>"
    writing, state = examine(marker, "unknown", "completion")
    assert (writing, state.state, state.artifacts["marker_only"]) == ("", "empty", 1)
    assert "[fill in the blank] marker" in str(state.note)
    assert state.heavy_strip  # all of it was artifacts
    # kept as published with artifacts=keep, its artifacts counted
    writing, state = examine(marker, "unknown", "completion", artifacts="keep")
    assert writing == marker and state.artifacts and not state.artifacts_removed


def test_guide_and_open_lose_the_frame_tags_only() -> None:
    # the paper's guide and open prompts framed the writing (doubao's guide infer_583)
    framed = f"{WRITING}\n\nXXXX年XX月XX日\n\n<我的写作结束>"
    writing, state = examine(framed, "unknown", "guide")
    assert writing == f"{WRITING}\n\nXXXX年XX月XX日" and state.artifacts == {"generation_tags": 1}
    cut = examine(f"{WRITING}\n\n<我的写作", "unknown", "open")
    assert (cut[0], cut[1].artifacts) == (WRITING, {"stray_tags": 1})
    # an explanation tag in a guide or open writing is prose
    for task in ("guide", "open"):
        prose = PROSE["prose_explained"]
        assert examine(prose, "unknown", task)[0] == prose
        assert examine(f"{WRITING}<解释开始>", "unknown", task)[0] == f"{WRITING}<解释开始>"


def test_a_writing_that_was_mostly_artifacts_is_named() -> None:
    fill = "一句。"
    explained = f"{fill}\n<解释开始>这段内容补充了{'很长的说明' * 10}。<解释结束>"
    state = examine(explained, "unknown", "completion")[1]
    assert state.heavy_strip and state.stripped_chars > 3 * len(fill)
    assert "more than 75% of the writing was artifacts" in str(state.note)
    assert not examine(f"{fill * 30}<解释开始>这段说明。<解释结束>", "unknown", "completion")[
        1
    ].heavy_strip
    assert count_states([state.record()])["heavy_strip"] == 1


def test_the_rules_are_linear_in_the_replys_length() -> None:
    """Hostile replies of 400,000 characters each (one unclosed tag repeated), each
    examined four ways, in a child process stopped after 60 s: all of it takes about 5 s
    on a busy two-core machine (80,000 characters of `<生成开始>` about 35 ms). Task
    version 7's rules took 9.6 s on those 80,000 characters and grow with the square of
    the length: some four minutes on one of these."""
    script = (
        "from howtobench.writing.state import examine\n"
        "n = 400_000\n"
        "for unit in ('<生成开始>', '<我的生成开始>x', '<解释开始>', '<解释结束>', '<think>',"
        " '</think>', 'x<think>', '<填充1>', '[fill in the blank]'):\n"
        "    reply = unit * (n // len(unit))\n"
        "    for task in ('completion', 'open'):\n"
        "        examine(reply, 'unknown', task)\n"
        "        examine('开头。\\n' + reply, 'stop', task)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr


def test_states_are_counted_with_what_was_removed() -> None:
    records = [
        examine(WRITING, "stop", "open")[1].record(),
        examine(WRITING[:5], "max_tokens", "open")[1].record(),
        examine("", "content_filter", "open")[1].record(),
        examine("", "stop", "open")[1].record(),
        examine(f"思考，用户要一篇秋天的文章。\n</think>\n\n{WRITING}", "stop", "open")[1].record(),
        examine(REFUSAL, "stop", "open")[1].record(),
        examine(PROSE["prose_think"], "stop", "open")[1].record(),
    ]
    counts = count_states(records)
    assert (counts["writings"], counts["complete"], counts["cut"]) == (7, 3, 1)
    assert (counts["filtered"], counts["empty"], counts["reasoning"]) == (1, 1, 1)
    assert (counts["refused"], counts["ambiguous_reasoning"]) == (1, 1)


# --- the counts in the log's results ------------------------------------------------------

STATES = ("complete", "cut", "filtered", "empty", "refused")


def state_counts(log: EvalLog) -> dict[str, float]:
    """The `writing_state` counts of the log's results, by state."""
    assert log.results is not None
    [result] = [s for s in log.results.scores if s.scorer == "writing_state"]
    assert {m.group for m in result.metrics.values()} == {"frequency"}
    return {name: metric.value for name, metric in result.metrics.items()}


def counted(log: EvalLog) -> dict[str, float]:
    """The states of the log's writings, counted here from each sample's record."""
    found = Counter(str((s.metadata or {})[SampleKey.WRITING]["state"]) for s in log.samples or [])
    return {state: float(found[state]) for state in STATES}


def test_the_results_count_every_writing_by_state_each_epoch_too(
    writers_data: Path, tmp_path: Path
) -> None:
    """w-c's writings are w-a's cut to two thirds: the results count them by state, with
    w-a's whole ones, over both epochs; `evals_df` has a column per state."""
    logs = run_eval(
        guide(dataset=str(writers_data), scorers="bleu"),
        tmp_path / "logs",
        model=["replay/w-a", "replay/w-c"],
        epochs=2,
    )
    for log in logs:
        assert state_counts(log) == counted(log)
        assert sum(counted(log).values()) == 2 * len(log.eval.dataset.sample_ids or [])
    by_writer = {str(log.eval.model): state_counts(log) for log in logs}
    assert by_writer["replay/w-a"]["cut"] == 0 and by_writer["replay/w-c"]["cut"] > 0
    frame = evals_df(str(tmp_path / "logs"), quiet=True).set_index("model")
    for writer, counts in by_writer.items():
        for state, count in counts.items():
            assert frame.loc[writer, f"score_writing_state_{state}"] == count


# --- live writers over HTTP, judged by the simulator -------------------------------------


@pytest.mark.slow
def test_live_writers_each_state_scored_as_chosen(tmp_path: Path, serve: Serve) -> None:
    """Seven writer servers, one behaviour each, judged by ToW on the simulator: each
    sample's state and score are as chosen, no judge request holds reasoning, each log's
    results count its writing by state, and the writer's server got the task's length
    limit."""
    simulator = serve(record=True)
    with writer_server() as (server, url):
        models = [writer_model(url, name) for name in BEHAVIOURS]
        logs = run_eval(
            open_writing(dataset="demo", scorers=["tow", "rouge_l"]),
            tmp_path / "logs",
            simulator,
            model=models,
            limit=1,
        )
    assert {body["max_tokens"] for body in server.bodies} == {WRITER_MAX_TOKENS}
    states = {}
    for log in logs:
        behaviour = str(log.eval.model).rsplit("/", 1)[-1]
        [sample] = log.samples or []
        record = (sample.metadata or {})[SampleKey.WRITING]
        states[behaviour] = record["state"]
        tow = scores(log)[str(sample.id)]
        if record["state"] != "complete" or record["reasoning_chars"]:
            assert (tow.metadata or {})[ScoreKey.WRITING] == record
            assert (tow.explanation or "").splitlines()[0].endswith(".")
        if behaviour in ("think_closed", "reasoning_field"):
            assert record["reasoning_chars"] >= len(TRACE)
            assert not isinstance(tow.value, float) and tow.value["overall"] >= 0  # scored
        assert log.eval.metadata and log.eval.metadata[TaskKey.CUT] == "scored"
        assert state_counts(log) == {s: float(s == record["state"]) for s in STATES}
    assert states == {
        "whole": "complete",
        "limited": "complete",  # 16,384 tokens are enough for it
        "think_closed": "complete",
        "reasoning_field": "complete",
        "unclosed": "cut",
        "empty": "empty",
        "filtered": "filtered",
    }
    assert simulator.requests
    assert not any("REASONING-MARK" in s.text for r in simulator.requests for s in r.segments)


@pytest.mark.slow
def test_a_cut_writing_is_flagged_or_left_unscored(tmp_path: Path, serve: Serve) -> None:
    """--max-tokens reaches the writer; its cut writings are scored and flagged by
    default, and left unscored with the reason under -T cut=unscored; counted as cut in
    the results either way."""
    simulator = serve()
    with writer_server() as (server, url):
        flagged, unscored = (
            run_eval(
                completion(dataset="demo", scorers=["tow", "rouge_l"], cut=cut),
                tmp_path / cut,
                simulator,
                model=writer_model(url, "limited"),
                limit=2,
                max_tokens=20,  # --max-tokens 20
            )[0]
            for cut in ("scored", "unscored")
        )
    assert {body["max_tokens"] for body in server.bodies} == {20}
    for sample in flagged.samples or []:
        assert (sample.metadata or {})[SampleKey.WRITING]["state"] == "cut"
        tow = (sample.scores or {})["tow"]
        assert isinstance(tow.value, dict)
        assert "cut by the writer's limit (max_tokens) after 20 characters" in str(tow.explanation)
        assert (tow.metadata or {})[ScoreKey.WRITING]["stop_reason"] == "max_tokens"
    for sample in unscored.samples or []:
        for name in ("tow", "rouge_l"):
            score = (sample.scores or {})[name]
            assert score.reason == "scoring_failed"
            assert "-T cut=unscored" in str(score.explanation)
    # the unscored cut writings are left out of the scorers' metrics, not out of the counts
    assert (
        state_counts(flagged)
        == state_counts(unscored)
        == {**dict.fromkeys(STATES, 0.0), "cut": 2.0}
    )


# a tag of the paper's prompts (`<解释开始>` excepted where a writing holds it as prose)
ARTIFACT_TAG = re.compile(r"<\s*/?\s*(?:我的|解[释启决]结束|生成|补全|写作|填充)")


def grader_events(sample: EvalSample) -> list[ModelEvent]:
    """The grader's requests for the sample that judge its writing, read from its log."""
    return [
        event
        for event in resolve_sample_attachments(sample, "full").events
        if isinstance(event, ModelEvent)
        and event.role == "grader"
        and classify(event.input).writing is not None
    ]


def judged(sample: EvalSample) -> list[str]:
    """The user messages of the grader's requests that judge the sample's writing."""
    return [m.text for e in grader_events(sample) for m in e.input if m.role == "user"]


@pytest.mark.slow
def test_live_prose_holding_tags_is_judged_whole_and_refusals_and_filters_named(
    tmp_path: Path,
) -> None:
    """Live writers over HTTP (inspect's `openai-api` provider), judged by ToW on a
    scripted judge: prose whose own words hold `<think>`, `</think>` or `<解释开始>` reaches
    every expert whole (its first and last paragraphs in each request), its state says a
    reasoning tag was kept; a refusal and a writing the filter stopped after some text are
    named, in the state, the score's explanation and the results; a reasoning left in the
    text by a server that also sent it apart is counted once."""
    judge = ScriptedJudge(hashed_judge("tricks"))
    with writer_server() as (_, url):
        logs = run_eval(
            open_writing(dataset="demo", scorers="tow"),
            tmp_path / "logs",
            judge,
            model=[writer_model(url, name) for name in TRICKS],
            limit=1,
        )
    by_writer = {str(log.eval.model).rsplit("/", 1)[-1]: log for log in logs}
    for name, prose in PROSE.items():
        [sample] = by_writer[name].samples or []
        record = (sample.metadata or {})[SampleKey.WRITING]
        assert (record["state"], record["reasoning_chars"]) == ("complete", 0), name
        assert record["ambiguous_reasoning"] == ("think>" in prose), name
        assert sample.output.completion == prose
        first, *_, last = prose.split("\n\n")
        requests = judged(sample)
        assert len(requests) == llm_calls("open"), name
        assert all(first in text and last in text for text in requests), name
    states = {}
    for name in ("refusal", "refusal_field", "filtered_text", "think_twice"):
        [sample] = by_writer[name].samples or []
        record = (sample.metadata or {})[SampleKey.WRITING]
        states[name] = record["state"]
        assert state_counts(by_writer[name])[record["state"]] == 1.0
        tow = (sample.scores or {})["tow"]
        assert (tow.metadata or {})[ScoreKey.WRITING] == record
        assert judged(sample), name  # each is judged as written, and its note says so
        if name != "think_twice":
            assert "judged" in str(tow.explanation).splitlines()[0], name
    assert states == {
        "refusal": "refused",
        "refusal_field": "refused",
        "filtered_text": "filtered",
        "think_twice": "complete",
    }
    [twice] = by_writer["think_twice"].samples or []
    assert twice.output.completion == WRITING
    assert (twice.metadata or {})[SampleKey.WRITING]["reasoning_chars"] == len(TRACE) + 9


# The stored shapes, one per demo record of its task: what the replayed writer wrote, and
# what the judges must read (None: nothing, the writing is empty).
STORED_SHAPES = {
    "completion": [
        # glm-4-plus's infer_1325: 13 titles, the first without its start tag
        (
            "《镜中幻影》\n<我的补全结束>\n\n<我的补全开始>\n《湖底秘境》\n<我的补全结束>\n\n"
            "<我的补全开始>\n《暮色降临》",
            "《镜中幻影》",
        ),
        # claude-3-haiku's infer_1006: the list inside the tags; gpt-4o's cut end tag
        (
            "究其原因，与以下几个因素有关:\n<解释开始>\n下面从几个方面来解释原因:\n"
            "1. 生活作息不规律。\n2. 压力过大。\n<解释结束>\n<我的补全结束",
            "究其原因，与以下几个因素有关:\n\n下面从几个方面来解释原因:\n1. 生活作息不规律。\n2. 压力过大。",
        ),
        # claude-3-haiku's infer_1374: the blank left unfilled, and an explanation
        (
            "[fill in the blank]\n<解释开始>\n作者建议对年轻人摆摊持理解和支持态度。\n<解释结束>",
            None,
        ),
    ],
    "guide": [
        # doubao's guide infer_583: the paper's frame tag
        (f"{WRITING}\n\n<我的写作结束>", WRITING),
        # gpt-4o's guide infer_79
        ("抱歉，我无法完成这个要求。", "抱歉，我无法完成这个要求。"),
        (PROSE["prose_explained"], PROSE["prose_explained"]),
    ],
    "open": [(prose, prose) for name, prose in PROSE.items() if name != "prose_explained"]
    + [(f"{TRACE}\n</think>\n\n{WRITING}", WRITING)],
}


def test_stored_writings_are_judged_on_exactly_their_writing(tmp_path: Path) -> None:
    """Replayed writings in the shapes the published ones have, judged by ToW on a
    scripted judge; the judges' requests are read from the log. A completion is judged on
    its first answer with no tag (the first of several titles; a list written inside the
    explanation tags kept), an unfilled blank not at all (empty); a guide writing without
    the paper's frame tag, a refusal named and judged as written; prose holding
    `<think>`, `</think>` or `<解释开始>` whole (its first and last paragraphs in every
    request), an R1-style trace never."""
    from support.data import demo_records, write_jsonl

    shapes = {}
    rows = []
    for task, given in STORED_SHAPES.items():
        records = [r for r in demo_records() if r.get("task") == task][: len(given)]
        for record, (stored, read) in zip(records, given, strict=True):
            shapes[record["id"]] = (stored, read)
            rows.append({**record, "generations": {"w": stored}})
    data = str(write_jsonl(tmp_path / "stored.jsonl", rows))
    logs = run_eval(
        [make(dataset=data, scorers="tow") for make in (completion, guide, open_writing)],
        tmp_path / "logs",
        ScriptedJudge(hashed_judge("stored")),
        model="replay/w",
    )
    states = Counter()
    for log in logs:
        for sample in log.samples or []:
            stored, read = shapes[str(sample.id)]
            record = (sample.metadata or {})[SampleKey.WRITING]
            states[record["state"]] += 1
            if read is None:  # the log shows the message as an empty writing's completion
                assert (record["state"], record["chars"], judged(sample)) == ("empty", 0, [])
                assert "[fill in the blank] marker" in str((sample.scores or {})["tow"].explanation)
                continue
            assert sample.output.completion == read, sample.id
            seen = {str(classify(event.input).writing).strip() for event in grader_events(sample)}
            assert seen == {read}, sample.id
            paragraphs = read.split("\n\n")
            for text in judged(sample):
                assert paragraphs[0] in text and paragraphs[-1] in text, sample.id
            assert not any(ARTIFACT_TAG.search(text) for text in judged(sample)), sample.id
            assert record["ambiguous_reasoning"] == ("think>" in read), sample.id
            assert "REASONING-MARK" not in str(judged(sample))
    assert states == {"complete": 8, "empty": 1, "refused": 1}


# --- the report ---------------------------------------------------------------------------


def test_the_report_counts_each_writers_states_and_marks_a_cut_writer(
    writers_logs: Path, tmp_path: Path
) -> None:
    """w-c's writings are w-a's cut to two thirds (`support.data.writings`): the report
    counts them per task, marks w-c in the ranking, and both files carry the counts."""
    from howtobench.studies.leaderboard_report import publish, report
    from support.data import demo_records, writings

    expected = Counter()
    for record in demo_records():
        _, state = examine(writings(record)["w-c"], "unknown", record["task"])
        expected[state.state] += 1
    found = report([writers_logs], bootstrap=50)
    states = found.tables["writings"]
    w_c = states.loc[("all", "w-c")]
    assert (w_c["writings"], w_c["cut"], w_c["complete"]) == (
        10,
        expected["cut"],
        expected["complete"],
    )
    assert expected["cut"] >= 5  # the demo's cut copies end mid-sentence, most of them
    assert states.loc[("all", "w-a"), "cut"] == 0
    ranking = found.tables["ranking"]
    assert any(writer.startswith("w-c [cut ") for writer in ranking["writer"])
    assert not any(writer.startswith("w-a [") for writer in ranking["writer"])
    assert any("w-c:" in note and "cut" in note for note in found.notes)
    json_path, html_path = publish(found, tmp_path)
    saved = json.loads(json_path.read_text("utf-8"))["writings"]
    assert {"task": "all", "writer": "w-c", "cut": expected["cut"]}.items() <= next(
        row for row in saved if row["writer"] == "w-c" and row["task"] == "all"
    ).items()
    assert "The writings: whole, cut, filtered, empty, refused" in html_path.read_text("utf-8")


def test_the_ranking_marks_a_writer_whose_writings_were_mostly_artifacts() -> None:
    """`[stripped NN%]` follows a writer whose share of `heavy_strip` writings in the row's
    task reaches the cut mark's threshold, beside `[cut NN%]`, and nothing below it."""
    import pandas as pd

    from howtobench.studies.writings import marks

    writings = pd.DataFrame(
        [
            {"task": "completion", "writer": "w", "cut_share": 0.2, "stripped_share": 0.06},
            {"task": "guide", "writer": "w", "cut_share": 0.0, "stripped_share": 0.04},
        ]
    )
    assert marks(writings, "completion", "w") == " [cut 20%] [stripped 6%]"
    assert marks(writings, "guide", "w") == ""
