"""Score changes under disturbances (Table 7), recomputed here from the raw logs."""

import shutil
from pathlib import Path
from statistics import fmean

import pandas as pd
import pytest
from inspect_ai.log import read_eval_log

from howtobench import open_writing
from howtobench.cli import main
from howtobench.studies import StudyError, robustness
from support.evals import run_eval
from support.judges import ScriptedJudge, hashed_judge, tow_metrics
from support.logs import build_logs, log_of, mark_perturbed, raw_rows, replayed

METRICS = ["tow.overall", "tow.content", "rouge_l"]
# The metrics of an open run scored by tow and rouge_l (12 on the paper's tree).
OPEN_METRICS = len(tow_metrics("open")) + 1


def expected_changes(folder: Path) -> dict[tuple[str, str], float]:
    """(metric, disturbance) -> mean perturbed - clean score, matched by id and epoch."""
    rows = raw_rows(folder)
    clean = {(r["id"], r["epoch"]): r for r in rows if r["model"] == "clean"}
    changes = {}
    for disturbance in ("drop", "inject"):
        for metric in METRICS:
            diffs = [
                r[metric] - clean[(r["id"], r["epoch"])][metric]
                for r in rows
                if r["model"] == disturbance
            ]
            changes[(metric, disturbance)] = fmean(diffs)
    return changes


@pytest.mark.slow
def test_mean_change_per_metric_and_disturbance(perturbed_logs: Path) -> None:
    clean = log_of(perturbed_logs, "clean")
    others = [log_of(perturbed_logs, "drop"), log_of(perturbed_logs, "inject")]
    result = robustness(clean, others)
    changes = result.tables["changes"]
    assert list(changes.columns) == ["clean", "drop", "inject"]
    expected = expected_changes(perturbed_logs)
    for (metric, disturbance), change in expected.items():
        assert changes.loc[metric, disturbance] == pytest.approx(change)
    clean_rows = [r for r in raw_rows(perturbed_logs) if r["model"] == "clean"]
    assert changes.loc["rouge_l", "clean"] == pytest.approx(fmean(r["rouge_l"] for r in clean_rows))
    detail = result.tables["detail"].set_index(["metric", "disturbance"])
    assert (detail["pairs"] == 4).all()
    # the reference itself scores 1 on ROUGE-L: injecting it raises the overlap score
    assert detail.loc[("rouge_l", "inject"), "perturbed_mean"] == pytest.approx(1.0)
    raised = {(r.metric, r.disturbance) for r in result.tables["raised"].itertuples()}
    assert ("rouge_l", "inject") in raised
    all_metrics = set(changes.index)
    assert raised == {
        (m, d) for m in all_metrics for d in ("drop", "inject") if changes.loc[m, d] > 0
    }
    assert any(note.startswith("RAISED: rouge_l rises by +") for note in result.notes)


@pytest.mark.slow
def test_a_folder_holding_the_clean_log_too(perturbed_logs: Path) -> None:
    clean = log_of(perturbed_logs, "clean")
    from_folder = robustness(clean, [perturbed_logs]).tables["changes"]
    listed = robustness(
        clean, [log_of(perturbed_logs, "drop"), log_of(perturbed_logs, "inject")]
    ).tables["changes"]
    assert from_folder.sort_index(axis=1).equals(listed.sort_index(axis=1))


@pytest.mark.slow
def test_a_log_without_a_disturbance(perturbed_logs: Path, writers_logs: Path) -> None:
    clean = log_of(perturbed_logs, "clean")
    with pytest.raises(StudyError, match="no 'perturb' in its task metadata"):
        robustness(clean, [log_of(writers_logs, "w-a", "open")])


@pytest.mark.slow
def test_no_sample_in_common(perturbed_logs: Path, writers_logs: Path, tmp_path: Path) -> None:
    other = tmp_path / "guide_drop.eval"
    shutil.copy(log_of(writers_logs, "w-a", "guide"), other)
    mark_perturbed(other, "drop")
    with pytest.raises(
        StudyError,
        match=r"guide_drop.eval: no sample \(writer w-a, task, sample id and epoch\) in common "
        r"with the clean logs \(their writers: clean\)",
    ):
        robustness(log_of(perturbed_logs, "clean"), [other])


@pytest.mark.slow
def test_the_clean_logs_must_be_clean(perturbed_logs: Path) -> None:
    with pytest.raises(StudyError, match="the clean log is itself perturbed \\(perturb=drop\\)"):
        robustness(log_of(perturbed_logs, "drop"), [log_of(perturbed_logs, "inject")])
    with pytest.raises(StudyError) as info:  # the folder holds the perturbed runs too
        robustness(perturbed_logs, [log_of(perturbed_logs, "inject")])
    culprits = {
        f"{log_of(perturbed_logs, p)}: the clean log is itself perturbed (perturb={p})"
        for p in ("drop", "inject")
    }
    assert str(info.value) in culprits


@pytest.mark.slow
def test_one_clean_writer_matches_another_writers_disturbed_log(perturbed_logs: Path) -> None:
    """The fixture's disturbed writings are replayed as writers 'drop' and 'inject': with
    one clean writer they are matched by task, sample id and epoch, and said so."""
    result = robustness(log_of(perturbed_logs, "clean"), [log_of(perturbed_logs, "drop")])
    assert any(
        note.endswith("is by drop, the clean log by clean: matched by task, sample id and epoch")
        for note in result.notes
    )
    # one row per metric (ToW's nodes and leaves, 11 on the paper's tree; rouge_l), each
    # from the one writer
    assert result.tables["detail"]["writers"].tolist() == [1] * OPEN_METRICS


# --- several writers: the paper's design (5 writings of each of 10 models) ---------------

POOLED = ("w-a", "w-b")
DISTURBANCES = ("drop", "repeat")


@pytest.fixture(scope="module")
def two_writers(tmp_path_factory: pytest.TempPathFactory, writers_data: Path) -> Path:
    """Open writings of two writers: a clean run each (in `clean`), and each disturbed by
    the task's own `perturb` (drop, repeat; in `perturbed`), so that a disturbed run's
    writer is the clean one's."""
    folder = tmp_path_factory.mktemp("two-writers-logs")
    data = str(writers_data)
    judge = ScriptedJudge(hashed_judge("judge-1"), name="judge-1")
    writers = replayed(*POOLED)
    clean = [open_writing(dataset=data, scorers="tow,rouge_l")]
    build_logs(clean, folder / "clean", judge, model=writers)
    perturbed = [open_writing(dataset=data, scorers="tow,rouge_l", perturb=p) for p in DISTURBANCES]
    build_logs(perturbed, folder / "perturbed", judge, model=writers)
    return folder


def disturbance_of(path: str) -> str | None:
    return (read_eval_log(path, header_only=True).eval.metadata or {}).get("perturb")


@pytest.mark.slow
def test_two_writers_pooled_pair_each_sample_with_its_own_writers(two_writers: Path) -> None:
    clean = {
        (r["model"], r["task"], r["id"], r["epoch"]): r for r in raw_rows(two_writers / "clean")
    }
    perturbed = raw_rows(two_writers / "perturbed")
    result = robustness(two_writers / "clean", [two_writers / "perturbed"])
    changes = result.tables["changes"]
    detail = result.tables["detail"].set_index(["metric", "disturbance"])
    assert changes.columns[0] == "clean" and sorted(changes.columns[1:]) == sorted(DISTURBANCES)
    told_apart = 0
    for disturbance in DISTURBANCES:
        rows = [r for r in perturbed if disturbance_of(r["log"]) == disturbance]
        assert {r["model"] for r in rows} == set(POOLED)
        for metric in METRICS:
            diffs = [
                r[metric] - clean[(r["model"], r["task"], r["id"], r["epoch"])][metric]
                for r in rows
            ]
            assert changes.loc[metric, disturbance] == pytest.approx(fmean(diffs))
            # the share raised is per pair: pairing by sample id alone would change it
            # (the mean change over both writers would not: the same scores are summed)
            by_id = [
                r[metric] - clean[(other, r["task"], r["id"], r["epoch"])][metric]
                for r in rows
                for other in POOLED
                if other != r["model"]
            ]
            share = fmean(d > 0 for d in diffs)
            assert detail.loc[(metric, disturbance), "raised_share"] == pytest.approx(share)
            told_apart += share != fmean(d > 0 for d in by_id)
            assert detail.loc[(metric, disturbance), "pairs"] == 8  # 2 writers x 4 writings
            assert detail.loc[(metric, disturbance), "writers"] == 2
    assert told_apart > 0
    assert changes.loc["rouge_l", "clean"] == pytest.approx(
        fmean(r["rouge_l"] for r in clean.values())
    )
    assert not any("matched by task, sample id and epoch" in note for note in result.notes)


@pytest.mark.slow
def test_clean_runs_given_one_by_one_equal_a_folder(two_writers: Path, tmp_path: Path) -> None:
    logs = sorted((two_writers / "clean").rglob("*.eval"))
    assert len(logs) == 2
    folder = robustness(two_writers / "clean", [two_writers / "perturbed"]).tables["detail"]
    listed = robustness(logs, [two_writers / "perturbed"]).tables["detail"]
    pd.testing.assert_frame_equal(folder, listed)
    out = tmp_path / "out"
    command = ["robustness", str(logs[0]), str(two_writers / "perturbed"), "--clean", str(logs[1])]
    assert main([*command, "--out", str(out)]) == 0
    written = pd.read_csv(out / "robustness_detail.csv")
    assert written["writers"].tolist() == [2] * OPEN_METRICS * len(DISTURBANCES)
    assert written["mean_change"].tolist() == pytest.approx(folder["mean_change"].tolist())


def test_one_clean_writer_and_another_writers_disturbed_runs(two_writers: Path) -> None:
    """With one clean writer, another writer's disturbed runs are matched by task, id and
    epoch (as before pooling), and said so."""
    result = robustness(log_of(two_writers / "clean", "w-a"), [two_writers / "perturbed"])
    assert sum("is by w-b, the clean log by w-a" in note for note in result.notes) == 2
    assert result.tables["detail"]["pairs"].tolist() == [8] * OPEN_METRICS * len(DISTURBANCES)


def test_a_disturbed_writer_without_a_clean_run(
    two_writers: Path, writers_data: Path, tmp_path: Path
) -> None:
    task = open_writing(dataset=str(writers_data), scorers="rouge_l", perturb="drop")
    [log] = run_eval(task, tmp_path, model="replay/w-c")
    with pytest.raises(
        StudyError,
        match=r"no sample \(writer w-c, task, sample id and epoch\) in common with the clean "
        r"logs \(their writers: w-a, w-b\)",
    ):
        robustness(two_writers / "clean", [log.location])


def test_two_clean_runs_of_one_writer(
    two_writers: Path, writers_data: Path, tmp_path: Path
) -> None:
    run_eval(
        open_writing(dataset=str(writers_data), scorers="rouge_l"), tmp_path, model="replay/w-a"
    )
    with pytest.raises(StudyError, match="^clean logs: .*give one clean run per writer and task$"):
        robustness([two_writers / "clean", tmp_path], [two_writers / "perturbed"])
