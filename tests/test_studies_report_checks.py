"""The report's checks on ToW scores: nodes clipped to their scale, and writers judged
with different weights (refused).

The writers' logs are real runs of the current scorer; copies of them get the score
metadata `clipped` and `weights_fingerprint` set (or removed, as in older logs) through
inspect's log API, so that every expected number is known here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

from howtobench.cli import main
from howtobench.studies import StudyError, report
from support.logs import BROKEN, log_of


def copy(writers_logs: Path, writer: str, task: str, out: Path) -> tuple[EvalLog, Path]:
    path = out / f"{writer}_{task}.eval"
    return read_eval_log(str(log_of(writers_logs, writer, task))), path


def tow_scored(log: EvalLog) -> int:
    return sum(1 for s in log.samples if isinstance(s.scores["tow"].value, dict))


@pytest.mark.slow
def test_the_writers_logs_record_clipping_and_weights(writers_logs: Path) -> None:
    """What the tests below rely on: the scorer writes both keys, one run one weights."""
    prints: dict[str, set[str]] = {}
    for path in writers_logs.rglob("*.eval"):
        for sample in read_eval_log(str(path)).samples:
            meta = sample.scores["tow"].metadata
            assert isinstance(meta["clipped"], dict)
            prints.setdefault(str(sample.id), set()).add(meta["weights_fingerprint"])
    assert len(prints) == 10  # the demo's instructions
    assert all(len(p) == 1 and len(next(iter(p))) == 12 for p in prints.values())
    tables = {"ranking", "method", "leaderboard", "counts", "nodes"}
    assert not report([writers_logs], bootstrap=10).tables.keys() - tables - {"writings"}


@pytest.mark.slow
def test_clipped_samples_are_counted_with_their_nodes(
    writers_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, a_path = copy(writers_logs, "w-a", "guide", tmp_path)
    for sample in a.samples:
        sample.scores["tow"].metadata["clipped"] = {
            "demo_guide_1": {"overall": 10.6, "content": 11.2},
            "demo_guide_3": {"content": 10.4},
        }.get(str(sample.id), {})
    write_eval_log(a, str(a_path))
    b, b_path = copy(writers_logs, "w-b", "guide", tmp_path)
    for sample in b.samples:  # an older log: no record, so not clipped
        del sample.scores["tow"].metadata["clipped"]
    write_eval_log(b, str(b_path))
    result = report([a_path, b_path])
    table = result.tables["clipped"].set_index(["task", "model"])
    assert table.loc[("guide", "w-a")].tolist() == [tow_scored(a), 2, "content: 2, overall: 1"]
    assert table.loc[("guide", "w-b")].tolist() == [tow_scored(b), 0, ""]
    assert (
        f"2 of {tow_scored(a) + tow_scored(b)} tow-scored samples had a raw aggregate outside "
        "its scale, clipped by the scorer (content: 2, overall: 1): see table 'clipped'"
    ) in result.notes
    assert main(["report", str(a_path), str(b_path), "--out", str(tmp_path / "out")]) == 0
    assert "report: clipped" in capsys.readouterr().out
    assert "clipped by the scorer" in (tmp_path / "out" / "report_notes.txt").read_text("utf-8")


@pytest.mark.slow
def test_writers_judged_with_different_weights_are_refused(
    writers_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    logs = {}
    for writer in ("w-a", "w-b", "w-c"):
        logs[writer] = copy(writers_logs, writer, "guide", tmp_path)
    b = logs["w-b"][0]
    for sample in b.samples:
        if sample.id == "demo_guide_2":
            sample.scores["tow"].metadata["weights_fingerprint"] = "0123456789ab"
    for sample in logs["w-c"][0].samples:  # an older log: nothing to compare
        sample.scores["tow"].metadata.pop("weights_fingerprint")
    for log, path in logs.values():
        write_eval_log(log, str(path))
    real = {
        str(s.id): s.scores["tow"].metadata["weights_fingerprint"] for s in logs["w-a"][0].samples
    }
    with pytest.raises(StudyError) as refused:
        report([path for _, path in logs.values()])
    message = str(refused.value)
    assert message.startswith(
        "1 instruction(s) were judged with different weights for different writers"
    )
    assert f"guide/demo_guide_2 (w-a: {real['demo_guide_2']}; w-b: 0123456789ab)" in message
    assert "howtobench plan export" in message
    assert main(["report", *(str(path) for _, path in logs.values())]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("howtobench report: error: 1 instruction(s)")
    # without the writer judged differently, the same logs make a leaderboard
    assert "w-a" in report([logs["w-a"][1], logs["w-c"][1]]).tables["leaderboard"]


def test_many_mismatches_list_a_few(writers_logs: Path, tmp_path: Path) -> None:
    paths = []
    for writer in ("w-a", "w-b"):
        for task in ("guide", "open"):
            log, path = copy(writers_logs, writer, task, tmp_path)
            if writer == "w-b":
                for sample in log.samples:
                    sample.scores["tow"].metadata["weights_fingerprint"] = f"{sample.id[-1]:0>12}"
            write_eval_log(log, str(path))
            paths.append(path)
    with pytest.raises(StudyError) as refused:
        report(paths)
    expected = 3 + 4  # every guide and open instruction of the demo
    message = str(refused.value)
    assert message.startswith(f"{expected} instruction(s)")
    assert f"... ({expected} in all)" in message
    assert message.count("w-b: 0000000000") == 3


def test_logs_scored_from_two_plans_are_refused(writers_logs: Path, tmp_path: Path) -> None:
    paths = []
    for writer, digest in (("w-a", "a" * 64), ("w-b", "b" * 64)):
        log, path = copy(writers_logs, writer, "guide", tmp_path)
        for sample in log.samples:
            sample.scores["tow"].metadata["plan"] = digest
        write_eval_log(log, str(path))
        paths.append(path)
    with pytest.raises(StudyError, match="scored from 2 different plans") as refused:
        report(paths)
    assert "aaaaaaaaaaaa" in str(refused.value) and "bbbbbbbbbbbb" in str(refused.value)


def test_an_unscored_sample_is_not_counted(writers_logs: Path, tmp_path: Path) -> None:
    """The broken writing is unscored: neither clipped nor compared."""
    log, path = copy(writers_logs, BROKEN[0], "guide", tmp_path)
    for sample in log.samples:
        sample.scores["tow"].metadata["clipped"] = {"overall": 0.2}
    write_eval_log(log, str(path))
    table = report([path]).tables["clipped"]
    assert table["clipped"].tolist() == [tow_scored(log)] == [len(log.samples) - 1]
