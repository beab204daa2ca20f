"""Length against score (Table 6) and the leaderboard (Table 4), from the raw logs."""

import math
from pathlib import Path
from statistics import fmean

import numpy as np
import pytest
from scipy import stats

from howtobench import open_writing
from howtobench.studies import StudyError, StudyResult, lengths, report
from support.evals import run_eval
from support.judges import negotiated
from support.logs import WRITERS, raw_rows


def scored(rows: list[dict], metric: str) -> list[dict]:
    return [r for r in rows if not math.isnan(r.get(metric, math.nan))]


@pytest.fixture(scope="module")
def rows(writers_logs: Path) -> list[dict]:
    return raw_rows(writers_logs)


@pytest.fixture(scope="module")
def length_result(writers_logs: Path) -> StudyResult:
    return lengths([writers_logs])


@pytest.fixture(scope="module")
def report_result(writers_logs: Path) -> StudyResult:
    return report([writers_logs])


@pytest.mark.parametrize(
    ("task", "x", "y"),
    [
        ("open", "input_length", "output_length"),
        ("guide", "output_length", "tow.overall"),
        ("completion", "input_length", "tow.content"),
    ],
)
@pytest.mark.slow
def test_length_correlations_per_task(length_result: StudyResult, rows, task, x, y) -> None:
    points = (
        [r for r in scored(rows, y) if r["task"] == task]
        if y.startswith("tow")
        else [r for r in rows if r["task"] == task]
    )
    xs, ys = [p[x] for p in points], [p[y] for p in points]
    result = length_result
    long = result.tables["correlations"].set_index(["task", "x", "y"])
    got = long.loc[(task, x, y)]
    expected = stats.pearsonr(xs, ys)
    assert got["n"] == len(points)
    assert got["pearson"] == pytest.approx(np.corrcoef(xs, ys)[0, 1])
    assert got["pearson_p"] == pytest.approx(expected.pvalue)
    assert got["slope"] == pytest.approx(np.polyfit(xs, ys, 1)[0])
    stars = "**" if expected.pvalue < 0.05 else "*" if expected.pvalue < 0.1 else ""
    label = f"{x.removesuffix('_length')} ~ {y.removesuffix('_length')}"
    assert result.tables["table"].loc[task, label] == f"{expected.statistic:.2f}{stars}"


def test_one_figure_per_task_and_the_missing_guide_writing(length_result: StudyResult) -> None:
    result = length_result
    assert set(result.figures) == {"completion", "guide", "open"}
    long = result.tables["correlations"].set_index(["task", "x", "y"])
    assert long.loc[("guide", "input_length", "output_length"), "n"] == 12
    assert long.loc[("guide", "input_length", "tow.overall"), "n"] == 11
    assert list(result.tables["table"].index) == ["completion", "guide", "open"]


@pytest.mark.slow
def test_leaderboard_by_task_genre_and_all(report_result: StudyResult, rows) -> None:
    result = report_result
    board, counts = result.tables["leaderboard"], result.tables["counts"]
    good = scored(rows, "tow.overall")

    def mean(model: str, key: str | None = None, value: str | None = None) -> float:
        picked = [
            r["tow.overall"]
            for r in good
            if r["model"] == model and (key is None or r[key] == value)
        ]
        return fmean(picked) if picked else math.nan

    order = sorted(WRITERS, key=lambda m: -mean(m))
    assert list(board.columns) == ["average", *order]
    genres = ["argumentative", "poem", "prose", "fiction", "letters", "speech", "report", "plan"]
    assert list(board.index) == ["completion", "guide", "open", *genres, "All"]
    for model in WRITERS:
        assert board.loc["All", model] == pytest.approx(mean(model))
        assert board.loc["guide", model] == pytest.approx(mean(model, "task", "guide"), nan_ok=True)
        assert board.loc["prose", model] == pytest.approx(mean(model, "genre", "prose"))
    assert math.isnan(board.loc["letters", "w-d"])  # its only letter could not be scored
    assert counts.loc["letters", "w-d"] == 0 and counts.loc["All", "w-a"] == 10
    assert board.loc["open", "average"] == pytest.approx(
        fmean(mean(m, "task", "open") for m in WRITERS)
    )
    # the ranking with intervals: the same means, writers in the same order
    ranked = result.tables["ranking"]
    overall = ranked[ranked["task (instr.)"] == "all (10)"]
    # w-c and w-d end most writings mid-sentence (`support.data.writings`): marked [cut]
    writers = [writer.split(" [cut ")[0] for writer in overall["writer"]]
    assert writers == order
    for writer, shown in zip(writers, overall["mean [95% CI]"], strict=True):
        assert shown.startswith(f"{mean(writer):.3f} ")
    nodes = result.tables["nodes"]
    content = [r["tow.content"] for r in good if r["model"] == "w-b" and r["task"] == "guide"]
    assert nodes.loc[("guide", "tow.content"), "w-b"] == pytest.approx(fmean(content))
    assert ("completion", "tow.format") not in nodes.index
    assert ("guide", "tow.formatting") in nodes.index


def test_weight_box_plots_per_genre(report_result: StudyResult, rows) -> None:
    result = report_result
    genres = {r["genre"] for r in rows}
    assert set(result.figures) == {f"weights_{g}" for g in genres}
    figure = result.figures["weights_fiction"]  # a completion and an open writing
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert labels == list(negotiated("guide"))  # the negotiated leaves in the spec's order


def test_a_score_the_logs_do_not_have(tmp_path: Path) -> None:
    [log] = run_eval(
        open_writing(dataset="demo", scorers="rouge_l"), tmp_path, model="replay/demo-writer-a"
    )
    with pytest.raises(StudyError, match="needs the metric 'tow.overall'.*metrics here: rouge_l"):
        report([log.location])
    with pytest.raises(StudyError, match="needs the metric 'tow.overall'"):
        lengths([log.location])
    overlap = report([log.location], metric="rouge_l")
    assert list(overlap.tables["leaderboard"].columns) == ["average", "demo-writer-a"]
    assert "no ToW weights in the logs: no weight plots" in overlap.notes
