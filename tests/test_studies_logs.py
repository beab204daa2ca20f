"""Loading logs into the studies' table: one row per sample and epoch, read from real runs."""

import math
import shutil
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.scorer import Score, match

from howtobench.studies import StudyError, load_samples, report
from support.evals import run_eval
from support.judges import ScriptedJudge
from support.logs import BROKEN, WRITERS, log_of, raw_rows


def test_one_row_per_sample_with_its_writer_judge_lengths_and_scores(writers_logs: Path) -> None:
    samples = load_samples([writers_logs])
    frame = samples.frame.set_index(["model", "id"])
    raw = raw_rows(writers_logs)
    assert len(frame) == len(raw) == 4 * 10
    assert set(samples.frame["model"]) == set(WRITERS)
    assert set(samples.frame["grader"]) == {"mockllm/judge-1"}
    assert samples.metrics[:4] == ("tow.overall", "tow.content", "tow.format", "tow.impression")
    assert {"tow.logic", "tow.formatting", "rouge_l"} <= set(samples.metrics)
    for row in raw:
        mine = frame.loc[(row["model"], row["id"])]
        assert mine["task"] == row["task"] and mine["genre"] == row["genre"]
        assert mine["output_length"] == row["output_length"]
        assert mine["input_length"] == row["input_length"]
        assert mine["rouge_l"] == pytest.approx(row["rouge_l"])
        if (row["model"], row["id"]) != BROKEN:
            assert mine["tow.overall"] == pytest.approx(row["tow.overall"])
            assert mine["weights"] == row["metadata"]["tow"]["weights"]
        if row["task"] == "completion":
            assert math.isnan(mine["tow.format"])


def test_unscored_samples_stay_nan_and_are_counted(writers_logs: Path) -> None:
    samples = load_samples([writers_logs])
    broken = samples.frame.set_index(["model", "id"]).loc[BROKEN]
    assert math.isnan(broken["tow.overall"]) and not math.isnan(broken["rouge_l"])
    assert samples.unscored == {"tow": 1}
    assert samples.notes() == ["left out unscored samples (tow: 1)"]


def test_files_and_folders_name_the_same_logs_once(writers_logs: Path) -> None:
    one = log_of(writers_logs, "w-a", "guide")
    samples = load_samples([one, writers_logs])
    assert len(samples.frame) == 40
    assert len(load_samples([one]).frame) == 3


def test_a_log_of_another_task_is_refused(tmp_path: Path) -> None:
    other = Task(dataset=[Sample(input="hi", target="hi")], scorer=match(), name="other")
    writer = ScriptedJudge(lambda _: "hi", name="writer")  # usage given: no tokenizer download
    [log] = run_eval(other, tmp_path, model=writer.model())
    with pytest.raises(StudyError, match="a log of task 'other', not of a howtobench task"):
        load_samples([log.location])


def test_missing_paths_empty_folders_and_other_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match="nowhere.eval: no such file or folder"):
        load_samples([tmp_path / "nowhere.eval"])
    (tmp_path / "empty").mkdir()
    with pytest.raises(StudyError, match="no inspect logs in this folder"):
        load_samples([tmp_path / "empty"])
    text = tmp_path / "notes.eval"
    text.write_text("not a log")
    with pytest.raises(StudyError, match="cannot read it as an inspect log"):
        load_samples([text])


def test_the_same_writings_in_two_logs_are_not_counted_twice(
    writers_logs: Path, tmp_path: Path
) -> None:
    one = log_of(writers_logs, "w-a", "guide")
    copy = tmp_path / "copy.eval"
    shutil.copy(one, copy)
    with pytest.raises(
        StudyError,
        match=r"3 sample\(s\) of w-a's guide are scored by 'tow' in 2 logs .*the same log in 2 files",
    ):
        report([one, copy])


def test_the_judge_of_a_log(writers_logs: Path, tmp_path: Path) -> None:
    """The grader role, or the one model of a panel named in the task arguments."""
    log = read_eval_log(str(log_of(writers_logs, "w-a", "open")))
    log.eval.task_args = {**log.eval.task_args, "judges": "openai/solo"}
    write_eval_log(log, str(tmp_path / "solo.eval"))
    assert set(load_samples([tmp_path / "solo.eval"]).frame["grader"]) == {"openai/solo"}
    assert set(load_samples([log_of(writers_logs, "w-a", "open")]).frame["grader"]) == {
        "mockllm/judge-1"
    }


def test_a_score_left_unscored_everywhere_says_so(writers_logs: Path, tmp_path: Path) -> None:
    log = read_eval_log(str(log_of(writers_logs, "w-a", "open")))
    for sample in log.samples:
        sample.scores["tow"] = Score(value=math.nan)
    write_eval_log(log, str(tmp_path / "unscored.eval"))
    samples = load_samples([tmp_path / "unscored.eval"])
    with pytest.raises(StudyError, match="'tow.overall', which the logs do not have; it left 4"):
        samples.require("tow.overall")
