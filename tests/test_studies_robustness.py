"""Score changes under disturbances (Table 7), recomputed here from the raw logs."""

import shutil
from pathlib import Path
from statistics import fmean

import pytest
from study_logs import (  # noqa: F401 (fixtures)
    log_of,
    mark_perturbed,
    perturbed_logs_fixture,
    raw_rows,
    writers_logs_fixture,
)

from howtobench.studies import StudyError, robustness

METRICS = ["tow.overall", "tow.content", "rouge_l"]


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


def test_a_folder_holding_the_clean_log_too(perturbed_logs: Path) -> None:
    clean = log_of(perturbed_logs, "clean")
    from_folder = robustness(clean, [perturbed_logs]).tables["changes"]
    listed = robustness(
        clean, [log_of(perturbed_logs, "drop"), log_of(perturbed_logs, "inject")]
    ).tables["changes"]
    assert from_folder.sort_index(axis=1).equals(listed.sort_index(axis=1))


def test_a_log_without_a_disturbance(perturbed_logs: Path, writers_logs: Path) -> None:
    clean = log_of(perturbed_logs, "clean")
    with pytest.raises(StudyError, match="no 'perturb' in its task metadata"):
        robustness(clean, [log_of(writers_logs, "w-a", "open")])


def test_no_sample_in_common(perturbed_logs: Path, writers_logs: Path, tmp_path: Path) -> None:
    other = tmp_path / "guide_drop.eval"
    shutil.copy(log_of(writers_logs, "w-a", "guide"), other)
    mark_perturbed(other, "drop")
    with pytest.raises(StudyError, match="guide_drop.eval: no sample \\(id and epoch\\) in common"):
        robustness(log_of(perturbed_logs, "clean"), [other])


def test_the_clean_log_must_be_one_clean_log(perturbed_logs: Path) -> None:
    with pytest.raises(StudyError, match="the clean log is itself perturbed \\(perturb=drop\\)"):
        robustness(log_of(perturbed_logs, "drop"), [log_of(perturbed_logs, "inject")])
    with pytest.raises(StudyError, match="give exactly one clean run .*, not 3"):
        robustness(perturbed_logs, [log_of(perturbed_logs, "inject")])
