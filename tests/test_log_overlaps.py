"""One verdict on a log folder: where `report` refuses samples scored in several logs,
`check-logs` fails with the same account, naming exactly the logs that hold them and
which to keep (`studies.runs.overlaps`)."""

import shutil
import time
from pathlib import Path

import pytest

from howtobench import guide, open_writing
from howtobench.cli import main
from support.evals import run_eval

WRITER = "replay/demo-writer-a"
JUDGE = "towsim/judge"


def judged(folder: Path, task: str = "guide", **kwargs: object) -> Path:
    build = guide if task == "guide" else open_writing
    [log] = run_eval(build(dataset="demo"), folder, JUDGE, model=WRITER, **kwargs)
    return Path(log.location)


def verdicts(
    folder: Path, capsys: pytest.CaptureFixture[str], out: Path
) -> tuple[int, str, int, str]:
    """check-logs' status and output, report's status and error line."""
    capsys.readouterr()
    checked = main(["check-logs", str(folder)])
    check_out = capsys.readouterr().out
    reported = main(["report", str(folder), "--out", str(out)])
    report_err = capsys.readouterr().err
    return checked, check_out, reported, report_err


def test_two_runs_of_one_writer_fail_check_logs_as_report_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "logs"
    first = judged(folder)
    judged(folder, task="open")  # another task of the writer: not part of the clash
    time.sleep(1.1)  # a header's times are in whole seconds: the second run is newer
    second = judged(folder)
    checked, out, reported, err = verdicts(folder, capsys, tmp_path / "report")
    assert checked == 1 and reported != 0
    [line] = [row for row in out.splitlines() if "scored by 'tow'" in row]
    assert line.startswith("3 sample(s) of demo-writer-a's guide are scored by 'tow' in 2 logs")
    named = line.split(" logs (", 1)[1].split("): ", 1)[0].split(", ")
    assert named == [str(first), str(second)]  # exactly the two guide logs, oldest first
    assert f"keep the newest ({second})" in line
    assert line in err  # report refuses with the same account
    assert "report` refuses the folder" in out.splitlines()[-1]


def test_a_copied_log_is_named_beside_its_original(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "logs"
    original = judged(folder)
    copy = folder / f"copy-{original.name}"
    shutil.copy(original, copy)
    checked, out, reported, err = verdicts(folder, capsys, tmp_path / "report")
    assert checked == 1 and reported != 0
    [line] = [row for row in out.splitlines() if "scored by 'tow'" in row]
    assert str(original) in line and str(copy) in line and line in err
    assert "the same log in 2 files" in line


def test_runs_judged_differently_say_what_differs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "logs"
    judged(folder)
    time.sleep(1.1)  # a header's times are in whole seconds: the second judge's run is newer
    [other] = run_eval(guide(dataset="demo"), folder, "towsim/second-judge", model=WRITER)
    checked, out, _, _ = verdicts(folder, capsys, tmp_path / "report")
    [line] = [row for row in out.splitlines() if "scored by 'tow'" in row]
    assert checked == 1
    assert "judged differently (grader: towsim/judge vs towsim/second-judge)" in line
    assert "howtobench judges" in line


def test_pieces_of_one_task_and_split_scorers_are_no_overlap(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A task cut by sample range (as `shards split` cuts it) is one task in two logs."""
    folder = tmp_path / "logs"
    judged(folder, limit=(0, 2))
    judged(folder, limit=(2, 3))
    checked, out, reported, _ = verdicts(folder, capsys, tmp_path / "report")
    assert (checked, reported) == (0, 0), out
    assert out.strip().splitlines()[-1] == "all 2 run(s) finished"
