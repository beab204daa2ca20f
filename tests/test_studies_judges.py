"""Agreement between judges: a panel inside a log, or grader models across logs."""

import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from howtobench.studies import StudyError, judges
from support.logs import log_of, raw_rows

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.slow
def test_a_panel_inside_one_log(panel_logs: Path) -> None:
    by_judge = [r["metadata"]["tow"]["by_judge"] for r in raw_rows(panel_logs)]
    strict = [b["mockllm/strict"] for b in by_judge]
    kind = [b["mockllm/kind"] for b in by_judge]
    result = judges([panel_logs])
    pearson = result.tables["pearson"]
    assert list(pearson.index) == list(pearson.columns) == ["mockllm/kind", "mockllm/strict"]
    assert pearson.loc["mockllm/strict", "mockllm/kind"] == pytest.approx(
        np.corrcoef(strict, kind)[0, 1]
    )
    assert pearson.loc["mockllm/kind", "mockllm/kind"] == pytest.approx(1)
    assert result.tables["overlap"].loc["mockllm/strict", "mockllm/kind"] == len(by_judge) == 6
    assert set(result.figures) == {"heatmap"}


@pytest.mark.slow
def test_grader_models_across_logs_and_humans(writers_logs: Path, second_judge_logs: Path) -> None:
    first = {(r["model"], r["id"]): r.get("tow.overall", math.nan) for r in raw_rows(writers_logs)}
    second = {(r["model"], r["id"]): r["tow.overall"] for r in raw_rows(second_judge_logs)}
    both = [k for k in second if not math.isnan(first[k])]
    assert len(both) == 11  # the first judge could not score one guide writing
    human = {key: 3 + (i * 7) % 5 for i, key in enumerate(sorted(first))}
    ratings = pd.DataFrame([{"infer_id": i, "model": m, "score": s} for (m, i), s in human.items()])
    result = judges([writers_logs, second_judge_logs], ratings=ratings)
    pearson, overlap = result.tables["pearson"], result.tables["overlap"]
    one, two = "mockllm/judge-1", "mockllm/judge-2"
    assert list(pearson.columns) == [one, two, "human"]
    assert pearson.loc[one, two] == pytest.approx(
        np.corrcoef([first[k] for k in both], [second[k] for k in both])[0, 1]
    )
    scored = [k for k in first if not math.isnan(first[k])]
    assert pearson.loc["human", one] == pytest.approx(
        np.corrcoef([first[k] for k in scored], [human[k] for k in scored])[0, 1]
    )
    assert overlap.loc[one, two] == 11 and overlap.loc[one, "human"] == 39
    assert overlap.loc[two, "human"] == 12


@pytest.mark.slow
def test_heatmap_is_a_png(panel_logs: Path, tmp_path: Path) -> None:
    path = tmp_path / "heatmap.png"
    judges([panel_logs]).figures["heatmap"].savefig(path)
    assert path.read_bytes().startswith(PNG)


def test_one_judge_alone_is_not_an_agreement(writers_logs: Path) -> None:
    with pytest.raises(StudyError, match=r"only one judge \(mockllm/judge-1\)"):
        judges([writers_logs])


@pytest.mark.slow
def test_judges_of_different_writings_do_not_overlap(
    writers_logs: Path, second_judge_logs: Path
) -> None:
    completion = [log_of(writers_logs, w, "completion") for w in ("w-a", "w-b")]
    with pytest.raises(StudyError, match="no two judges share 3 or more writings"):
        judges([*completion, second_judge_logs])


@pytest.mark.slow
def test_the_same_judge_twice_on_the_same_writings(second_judge_logs: Path, tmp_path: Path) -> None:
    one = log_of(second_judge_logs, "w-a", "guide")
    shutil.copy(one, tmp_path / "again.eval")
    with pytest.raises(StudyError, match="judge mockllm/judge-2 scored the same writings"):
        judges([one, tmp_path / "again.eval"])


def test_a_log_without_the_metric_or_a_panel(writers_logs: Path) -> None:
    with pytest.raises(StudyError, match="no judge panel \\(by_judge\\) and no 'rubric'"):
        judges([writers_logs], metric="rubric")
