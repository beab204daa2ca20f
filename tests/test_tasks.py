"""The tasks end to end through inspect: replay, live writing, scorer selection, task names."""

import inspect as inspect_module
import math
import re
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage, get_model

from howtobench import completion, guide, open_writing
from howtobench.dataset.records import WritingRecord
from howtobench.parameters.scorers import check_names
from howtobench.parameters.writing import writing_parameters
from howtobench.tasks import TASK_VERSION
from howtobench.vocabulary.parameter_values import ParameterError, names
from howtobench.writing.writer import writer_prompt
from support.data import MARKER
from support.evals import run_eval


def test_replay_scores_every_sample_including_an_empty_writing(
    data_folder: Path, tmp_path: Path
) -> None:
    task = guide(dataset=str(data_folder), scorers="rouge_l,bleu")
    [log] = run_eval(task, tmp_path / "logs", model="replay/model-a")
    samples = {s.id: s for s in log.samples}
    assert set(samples) == {"infer_1", "infer_2"}
    first = samples["infer_1"]
    # jieba: 公园/让/城市/更/宜居/。 (6 words) inside the reference's 11: LCS 6.
    expected = 2 * 6 / (6 + 11)
    assert first.scores["rouge_l"].value == pytest.approx(expected)
    # on characters (the default): all 9 of 公园让城市更宜居。 occur in the 17-character
    # reference 公园让城市更宜居。我们要爱护公园。; brevity penalty exp(1 - 17/9)
    assert first.scores["bleu"].value["bleu_1"] == pytest.approx(math.exp(1 - 17 / 9))
    empty = samples["infer_2"]
    assert empty.output.completion == ""
    assert empty.scores["rouge_l"].value == 0.0
    assert log.eval.model == "replay/model-a"
    assert empty.metadata["genre"] == "speech"
    metrics = log.results.scores[0].metrics
    assert metrics["mean"].value == pytest.approx(expected / 2)
    assert metrics["speech"].value == 0.0


def test_list_and_string_scorer_parameters() -> None:
    assert names(["rouge_l", "bleu"], "scorers") == names("rouge_l, bleu", "scorers")
    assert check_names(names("rouge_l, bleu,", "scorers")) == ("rouge_l", "bleu")
    assert check_names(()) == ("tow",)
    with pytest.raises(ParameterError, match="-T scorers: unknown scorer"):
        check_names(names("rouge_l,bertscore", "scorers"))


def test_sample_without_reference_is_unscored_with_reason(tmp_path: Path) -> None:
    data = tmp_path / "mine.jsonl"
    data.write_text('{"instruction": "写一首诗", "generations": {"m": "春风"}}\n', encoding="utf-8")
    [log] = run_eval(open_writing(dataset=str(data), scorers="rouge_l"), tmp_path, model="replay/m")
    score = log.samples[0].scores["rouge_l"]
    assert score.reason == "scoring_failed" and "no reference" in str(score.explanation)


def test_live_writer_receives_the_task_prompt(tmp_path: Path) -> None:
    prompts: list[str] = []

    def write(messages: list[ChatMessage], *_: object) -> ModelOutput:
        prompts.append(messages[-1].text)
        output = ModelOutput.from_content("mockllm/model", "修好的旧物带着时间的温度。")
        output.usage = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)
        return output

    model = get_model("mockllm/model", custom_outputs=write)
    [log] = run_eval(completion(dataset="demo", scorers="rouge_l"), tmp_path, model=model)
    assert len(prompts) == len(log.samples) == 3
    assert all(MARKER in p and "只输出这段补写的文字" in p for p in prompts)
    assert all(s.output.completion == "修好的旧物带着时间的温度。" for s in log.samples)
    assert all(0 <= s.scores["rouge_l"].value <= 1 for s in log.samples)


def test_writer_prompts_follow_task_and_language() -> None:
    zh = WritingRecord(
        id="1",
        task="guide",
        genre_raw="",
        instruction="写信",
        grounding="- 问候",
        reference="",
        language="zh",
    )
    assert "写作提纲与素材：\n- 问候" in writer_prompt(zh)
    en = WritingRecord(
        id="2",
        task="open",
        genre_raw="",
        instruction="Write a letter.",
        grounding="",
        reference="",
        language="en",
    )
    assert writer_prompt(en).startswith("Please complete the writing task below.")
    assert "Write a letter." in writer_prompt(en)


def test_genre_parameter(tmp_path: Path) -> None:
    task = open_writing(dataset="demo", genre="poem", scorers="bleu")
    [log] = run_eval(task, tmp_path, model="replay/demo-writer-a")
    assert [s.metadata["genre"] for s in log.samples] == ["poem"]


@pytest.mark.slow
def test_cli_resolves_package_task_names(tmp_path: Path) -> None:
    inspect = Path(sys.executable).with_name("inspect")
    result = subprocess.run(
        [
            str(inspect),
            "eval",
            "howtobench/open",
            "-T",
            "dataset=demo",
            "-T",
            "scorers=rouge_l,bleu",
            "--model",
            "replay/demo-writer-b",
            "--log-dir",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert result.returncode == 0, result.stderr
    [log_file] = tmp_path.glob("*.eval")
    log = read_eval_log(str(log_file))
    assert log.eval.task == "howtobench/open"
    assert len(log.samples) == 4
    assert all(set(s.scores) == {"rouge_l", "bleu", "writing_state"} for s in log.samples)
    # the results table that ends the run counts the writings by state
    complete = sum(s.metadata["writing"]["state"] == "complete" for s in log.samples)
    assert "writing_state" in result.stdout
    assert re.search(rf"\bcomplete +{complete}\.000\b", result.stdout), result.stdout
    # the shared signature: inspect records every parameter, defaults included
    given = set(inspect_module.signature(writing_parameters).parameters) - {"unknown"}
    assert set(log.eval.task_args) == given
    assert log.eval.task_args["anchor"] == "human" and log.eval.task_args["judge_samples"] == 1
    assert "replay" not in log.eval.task_args and log.eval.model == "replay/demo-writer-b"
    assert log.eval.metadata["replay"] == "demo-writer-b"  # known as inspect built the task
    assert log.eval.task_version == TASK_VERSION


def test_the_writing_tasks_share_one_signature_and_refuse_unknown_names() -> None:
    expected = inspect_module.signature(writing_parameters).parameters
    for factory in (completion, guide, open_writing):
        assert inspect_module.signature(factory).parameters == expected
    with pytest.raises(ParameterError, match=r"^-T judge_sample: .*did you mean judge_samples\?$"):
        guide(dataset="demo", judge_sample=3)
    with pytest.raises(ParameterError, match=r"^-T reference: renamed anchor"):
        guide(dataset="demo", reference="none")


def test_the_viewer_fields_name_the_writer_and_the_writing(tmp_path: Path) -> None:
    """Read back from the log: a replay run's model names its writer (the log list's MODEL
    column; no tag), and each judging score's answer is the start of the writing."""
    [log] = run_eval(
        open_writing(dataset="demo", scorers="rouge_l,bleu"), tmp_path, model="replay/demo-writer-b"
    )
    stored = read_eval_log(str(next(tmp_path.glob("*.eval"))))
    assert not stored.eval.tags and stored.eval.model == "replay/demo-writer-b"
    for sample in stored.samples or []:
        writing = sample.output.completion.strip()
        for name, score in sample.scores.items():
            if name == "writing_state":  # its value is the writing's state, not a judgement
                assert score.value == sample.metadata["writing"]["state"]
                continue
            assert score.answer and writing.startswith(score.answer.removesuffix("…"))
            assert len(score.answer) <= 201
