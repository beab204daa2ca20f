"""The writing under test: what the judges read is the writer's whole, final writing, and
the run says when it is not (reasoning removed, cut, filtered and empty writings named,
and counted in the log's results; the completion artifacts of the paper's prompt
stripped or kept)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai.analysis import evals_df
from inspect_ai.log import EvalLog

from howtobench import completion, guide, open_writing
from howtobench.vocabulary.metadata import SampleKey, ScoreKey, TaskKey
from howtobench.writing.state import (
    completion_artifacts,
    count_states,
    ends_mid_sentence,
    examine,
    remove_reasoning,
    strip_artifacts,
)
from howtobench.writing.writer import WRITER_MAX_TOKENS
from support.evals import run_eval, scores
from support.judges import Serve
from support.writers import BEHAVIOURS, TRACE, WRITING, writer_model, writer_server

# --- the pure core ----------------------------------------------------------------------


def test_every_form_of_reasoning_is_removed() -> None:
    assert remove_reasoning(f"<think>{TRACE}</think>\n\n{WRITING}") == (WRITING, len(TRACE) + 17)
    closed = f"{TRACE}\n</think>\n\n{WRITING}"
    assert remove_reasoning(closed) == (WRITING, len(closed) - len(WRITING))
    # an unclosed trace takes the rest of the reply: nothing is left to judge
    assert remove_reasoning(f"<think>{TRACE}")[0] == ""
    assert remove_reasoning(WRITING) == (WRITING, 0)


def test_states_from_stop_reasons() -> None:
    assert examine(WRITING, "stop")[1].state == "complete"
    assert examine(WRITING[:20], "max_tokens")[1].state == "cut"
    assert examine(WRITING, "model_length")[1].state == "cut"
    assert examine("", "content_filter")[1].state == "filtered"
    assert examine("  \n", "stop")[1].state == "empty"
    # a trace the limit cut before it closed is a cut writing, with nothing left
    writing, state = examine(f"<think>{TRACE}", "max_tokens")
    assert (writing, state.state, state.reasoning_chars) == ("", "cut", len(TRACE) + 7)
    # a provider's reasoning field is counted, the text kept whole
    assert examine(WRITING, "stop", provider_reasoning=12)[1].reasoning_chars == 12


def test_a_stored_writing_is_cut_when_it_ends_mid_sentence() -> None:
    # the last line of a gpt-4o-2024-11-20 open writing, as published, ends so
    cut = "古镇的保护面临挑战。部分古镇居为追求经济效益，过度开发商业活动，甚至将建筑大肆"
    assert examine(f"第一段。\n\n{cut}", "unknown")[1].state == "cut"
    assert examine(f"第一段。\n\n{cut}", "stop")[1].state == "complete"  # the server said so
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


def test_completion_artifacts_are_found_and_the_fill_kept() -> None:
    published = (
        "消费者和商家应该相互理解、互利共赢。\n<解释开始>消费者应该理性地行使自己的权利。<解释结束>"
    )
    assert completion_artifacts(published) == {
        "explanation_blocks": 1,
        "explanation_chars": 6 + 16 + 6,
    }
    assert strip_artifacts(published) == "消费者和商家应该相互理解、互利共赢。"
    tagged = (
        "<我的生成开始>  \n暮色渐浓。归巢的鸟掠过树梢。\n<我的生成结束>\n<解启开始>说明。<解启结束>"
    )
    assert strip_artifacts(tagged) == "暮色渐浓。归巢的鸟掠过树梢。"
    assert completion_artifacts(tagged)["generation_tags"] == 2
    # keep: the writing as published, its artifacts counted
    writing, state = examine(published, "unknown", artifacts="keep")
    assert writing == published and state.artifacts and not state.artifacts_removed


def test_states_are_counted_with_what_was_removed() -> None:
    records = [
        examine(WRITING, "stop")[1].record(),
        examine(WRITING[:5], "max_tokens")[1].record(),
        examine("", "content_filter")[1].record(),
        examine("", "stop")[1].record(),
        examine(f"思考</think>{WRITING}", "stop")[1].record(),
    ]
    counts = count_states(records)
    assert (counts["writings"], counts["complete"], counts["cut"]) == (5, 2, 1)
    assert (counts["filtered"], counts["empty"], counts["reasoning"]) == (1, 1, 1)


# --- the counts in the log's results ------------------------------------------------------

STATES = ("complete", "cut", "filtered", "empty")


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
        _, state = examine(writings(record)["w-c"], "unknown")
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
    assert "The writings: whole, cut, filtered, empty" in html_path.read_text("utf-8")
