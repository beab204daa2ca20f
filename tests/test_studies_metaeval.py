"""Meta-evaluation against human ratings: numbers recomputed here from the raw logs."""

import json
import math
import threading
import zlib
from collections import Counter
from pathlib import Path
from statistics import fmean

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from howtobench import guide
from howtobench.simulator import valid_weights
from howtobench.studies import (
    Samples,
    StudyError,
    StudyResult,
    load_samples,
    metaeval,
    read_ratings,
)
from howtobench.studies.logs import judge_runs
from support.judges import Asked, Reply, ScriptedJudge, hashed, rubric_reply
from support.logs import WRITERS, build_logs, raw_rows, replayed

IDS = [f"demo_completion_{i}" for i in (1, 2, 3)]
IDS += [f"demo_guide_{i}" for i in (1, 2, 3)]
IDS += [f"demo_open_{i}" for i in (1, 2, 3, 4)]
QUALITY = {"w-a": 7, "w-b": 4, "w-c": 6, "w-d": 5}
UNRATED = ("w-c", "demo_open_4")


def ratings() -> pd.DataFrame:
    """Two raters per writing, every writing but one; made-up scores."""
    rows = []
    for sample_id in IDS:
        for model in WRITERS:
            if (model, sample_id) == UNRATED:
                continue
            base = QUALITY[model] + zlib.crc32(sample_id.encode()) % 3
            second = base + zlib.crc32((sample_id + model).encode()) % 3 - 1
            rows.append({"infer_id": sample_id, "model": model, "score": base, "rater": "r1"})
            rows.append({"infer_id": sample_id, "model": model, "score": second, "rater": "r2"})
    return pd.DataFrame(rows)


def expected_points(folder: Path, metric: str) -> list[dict]:
    """(task, model, metric, human) of every rated, scored writing, from the raw logs."""
    table = ratings()
    human = {(i, m): fmean(g["score"]) for (i, m), g in table.groupby(["infer_id", "model"])}
    return [
        {"task": r["task"], "model": r["model"], "x": r[metric], "y": human[(r["id"], r["model"])]}
        for r in raw_rows(folder)
        if (r["id"], r["model"]) in human and not math.isnan(r.get(metric, math.nan))
    ]


def row(result, metric: str, scope: str, level: str) -> pd.Series:
    long = result.tables["correlations"]
    found = long[(long.metric == metric) & (long.scope == scope) & (long.level == level)]
    assert len(found) == 1
    return found.iloc[0]


@pytest.fixture(scope="module")
def samples(writers_logs: Path) -> Samples:
    return load_samples([writers_logs])


@pytest.fixture(scope="module")
def result(samples: Samples) -> StudyResult:
    return metaeval(samples, ratings(), ["tow.overall", "rouge_l"], resamples=100, seed=1)


@pytest.mark.slow
@pytest.mark.parametrize("metric", ["tow.overall", "rouge_l"])
def test_system_level_correlates_model_means_over_all_tasks(writers_logs, result, metric) -> None:
    points = expected_points(writers_logs, metric)
    x = [fmean(p["x"] for p in points if p["model"] == m) for m in WRITERS]
    y = [fmean(p["y"] for p in points if p["model"] == m) for m in WRITERS]
    got = row(result, metric, "all", "system")
    assert got["n"] == 4
    assert got["pearson"] == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert got["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic)
    assert got["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert got["pearson_p"] == pytest.approx(stats.pearsonr(x, y).pvalue)
    assert result.tables["system"].loc[metric, "all pearson"] == pytest.approx(got["pearson"])


def test_sample_level_per_task_leaves_out_unscored_and_unrated(writers_logs, result) -> None:
    points = [p for p in expected_points(writers_logs, "tow.overall") if p["task"] == "guide"]
    assert len(points) == 12 - 1  # the writing the judge could not score
    x, y = [p["x"] for p in points], [p["y"] for p in points]
    got = row(result, "tow.overall", "guide", "sample")
    assert got["n"] == 11
    assert got["pearson"] == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert got["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert result.tables["sample"].loc["tow.overall", "guide kendall"] == pytest.approx(
        stats.kendalltau(x, y).statistic
    )
    everything = row(result, "rouge_l", "all", "sample")
    assert everything["n"] == 40 - 1  # one writing has no rating
    assert "left out unscored samples (tow: 1)" in result.notes
    assert "left out 1 writing(s) of the logs that have no human rating" in result.notes


def test_bootstrap_intervals_are_seeded_and_bracket_the_estimate(samples, result) -> None:
    again = metaeval(samples, ratings(), metrics=["rouge_l"], resamples=100, seed=1)
    other = metaeval(samples, ratings(), metrics=["rouge_l"], resamples=100, seed=2)
    columns = ["pearson_low", "pearson_high", "kendall_low", "spearman_high"]
    mine = result.tables["correlations"]
    mine = mine[mine.metric == "rouge_l"][columns].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, again.tables["correlations"][columns])
    assert not mine.equals(other.tables["correlations"][columns])
    got = row(result, "rouge_l", "all", "sample")
    for method in ("pearson", "kendall", "spearman"):
        assert -1 <= got[f"{method}_low"] <= got[method] <= got[f"{method}_high"] <= 1


def test_rater_agreement(result) -> None:
    table = ratings()
    wide = table.pivot_table(index=["infer_id", "model"], columns="rater", values="score")
    diffs = (wide["r1"] - wide["r2"]).abs()
    raters = result.tables["raters"].iloc[0]
    assert raters["raters"] == 2 and raters["writings"] == 39
    assert raters["writings_rated_twice_or_more"] == 39 and raters["rater_pairs"] == 1
    assert raters["mean_pairwise_pearson"] == pytest.approx(
        np.corrcoef(wide["r1"], wide["r2"])[0, 1]
    )
    assert raters["mean_abs_difference"] == pytest.approx(diffs.mean())
    assert raters["exact_agreement"] == pytest.approx((diffs == 0).mean())


def test_csv_and_jsonl_ratings_files_read_alike(tmp_path: Path) -> None:
    table = ratings()
    table.to_csv(tmp_path / "r.csv", index=False)
    (tmp_path / "r.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in table.to_dict("records")), encoding="utf-8"
    )
    from_csv = read_ratings(tmp_path / "r.csv")
    pd.testing.assert_frame_equal(from_csv, read_ratings(tmp_path / "r.jsonl"))
    pd.testing.assert_frame_equal(from_csv, read_ratings(table))
    no_rater = table.drop(columns="rater")
    no_rater.to_csv(tmp_path / "plain.csv", index=False)
    assert set(read_ratings(tmp_path / "plain.csv")["rater"]) == {""}


def test_unknown_rated_writings_are_named(samples: Samples) -> None:
    extra = pd.DataFrame(
        [
            {"infer_id": f"demo_open_{i}", "model": "w-z", "score": 5, "rater": "r1"}
            for i in range(1, 8)
        ]
    )
    with pytest.raises(StudyError) as err:
        metaeval(samples, pd.concat([ratings(), extra]), resamples=0)
    message = str(err.value)
    assert message.startswith("7 rated (infer_id, model) pair(s) are in no log: (demo_open_1, w-z)")
    assert "... (7 in all)" in message and "models in the logs: w-a, w-b, w-c, w-d" in message


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("infer_id,model,rating\ndemo_open_1,w-a,5\n", "missing column(s) score"),
        (
            "infer_id,model,score\ndemo_open_1,w-a,good\n",
            "ratings.csv, line 2, field 'score': 'good' is not a finite number",
        ),
        ("infer_id,model,score\n", "no ratings in it"),
    ],
)
def test_bad_ratings_files(samples: Samples, tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "ratings.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(StudyError, match=message.replace("(", r"\(").replace(")", r"\)")):
        metaeval(samples, path, resamples=0)
    with pytest.raises(StudyError, match="ratings file not found"):
        metaeval(samples, tmp_path / "none.csv")


def test_a_metric_the_logs_lack(samples: Samples) -> None:
    with pytest.raises(StudyError, match="needs the metric 'rubric'"):
        metaeval(samples, ratings(), metrics=["rubric"], resamples=0)


def test_every_metric_by_default(samples: Samples) -> None:
    result = metaeval(samples, ratings(), resamples=0)
    long = result.tables["correlations"]
    assert list(dict.fromkeys(long["metric"])) == list(result.tables["system"].index)
    assert {"tow.overall", "tow.format", "tow.logic", "rouge_l"} <= set(long["metric"])
    assert long["pearson_low"].isna().all()  # no resamples, no intervals
    completion_format = long[(long.metric == "tow.format") & (long.scope == "completion")]
    # completion has no format node: its rows exist, and hold no writing
    assert len(completion_format) > 0 and (completion_format["n"] == 0).all()


# --- self-consistency: Table 3's worst and best of the SC batch --------------------------

JUDGE_SAMPLES = 3


def sampled_judge() -> ScriptedJudge:
    """A judge whose every reply depends on how often the same question was asked before:
    the judge samples of self-consistency send identical requests (temperature 0.7), so
    the n-th ask of a question is some judge sample's, and each gets its own score."""
    lock = threading.Lock()
    asked: Counter[tuple[str, str]] = Counter()

    def answer(question: Asked) -> Reply:
        if question.kind == "negotiator":
            return valid_weights(question)
        writing = question.writing or ""
        with lock:
            asked[(question.kind, writing)] += 1
            turn = str(asked[(question.kind, writing)])
        high = 3 if question.kind == "paragraphing" else 10
        score = 1 + (hashed("sc", question.kind, writing, turn) + len(writing) // 40) % high
        if question.kind == "rubric":
            return rubric_reply(question, score)
        return {"score": score, "reason": "sampled"}

    return ScriptedJudge(answer, name="sampled")


@pytest.fixture(scope="module")
def sc_logs(tmp_path_factory: pytest.TempPathFactory, writers_data: Path) -> Path:
    """The guide writings of the four writers, tow and rubric with three judge samples."""
    folder = tmp_path_factory.mktemp("self-consistency-logs")
    task = guide(dataset=str(writers_data), scorers="tow,rubric", judge_samples=JUDGE_SAMPLES)
    build_logs([task], folder, sampled_judge(), model=replayed(*WRITERS))
    return folder


def per_run_points(folder: Path, scorer: str, key: str) -> list[list[dict]]:
    """For each judge sample k: (model, value, human) of every rated writing, read from
    the scores' `self_consistency.values` with a plain loop."""
    table = ratings()
    human = {(i, m): fmean(g["score"]) for (i, m), g in table.groupby(["infer_id", "model"])}
    runs: list[list[dict]] = [[] for _ in range(JUDGE_SAMPLES)]
    for row in raw_rows(folder):
        values = row["metadata"][scorer]["self_consistency"]["values"]
        for k, value in enumerate(values):
            runs[k].append(
                {
                    "model": row["model"],
                    "x": value[key] if key else value,
                    "y": human[(row["id"], row["model"])],
                }
            )
    return runs


@pytest.mark.slow
def test_sc_worst_and_best_correlate_each_judge_sample_alone(sc_logs: Path) -> None:
    guide_ratings = ratings()[ratings()["infer_id"].str.startswith("demo_guide")]
    result = metaeval([sc_logs], guide_ratings, ["tow.overall", "rubric"], resamples=50)
    long = result.tables["correlations"]
    assert list(result.tables["sample"].index) == [
        "tow.overall",
        "tow.overall [worst of 3]",
        "tow.overall [best of 3]",
        "rubric",
        "rubric [worst of 3]",
        "rubric [best of 3]",
    ]
    for metric in ("tow.overall", "rubric"):
        scorer, _, key = metric.partition(".")
        runs = per_run_points(sc_logs, scorer, key)
        assert all(len(points) == 12 for points in runs)
        sample = [stats.pearsonr([p["x"] for p in r], [p["y"] for p in r]) for r in runs]
        system = []
        for points in runs:
            x = [fmean(p["x"] for p in points if p["model"] == m) for m in WRITERS]
            y = [fmean(p["y"] for p in points if p["model"] == m) for m in WRITERS]
            system.append(stats.spearmanr(x, y).statistic)
        pearsons = [r.statistic for r in sample]
        assert max(pearsons) - min(pearsons) > 0.01  # the judge samples differ
        for scope in ("guide", "all"):  # one task: both scopes hold the same writings
            low = row(result, f"{metric} [worst of 3]", scope, "sample")
            high = row(result, f"{metric} [best of 3]", scope, "sample")
            assert low["pearson"] == pytest.approx(min(pearsons))
            assert high["pearson"] == pytest.approx(max(pearsons))
            assert low["pearson_p"] == pytest.approx(sample[int(np.argmin(pearsons))].pvalue)
            assert low["n"] == high["n"] == 12
            assert math.isnan(low["pearson_low"]) and math.isnan(high["spearman_high"])
            low = row(result, f"{metric} [worst of 3]", scope, "system")
            high = row(result, f"{metric} [best of 3]", scope, "system")
            assert low["spearman"] == pytest.approx(min(system))
            assert high["spearman"] == pytest.approx(max(system))
            assert low["n"] == 4
    assert long[long.metric == "tow.overall"]["pearson_low"].notna().all()  # the mean's CIs
    assert any("judged with self-consistency: tow.overall (3)" in note for note in result.notes)


def test_metrics_without_self_consistency_get_no_extra_rows(samples: Samples) -> None:
    result = metaeval(samples, ratings(), ["tow.overall", "rouge_l"], resamples=0)
    assert list(result.tables["system"].index) == ["tow.overall", "rouge_l"]
    assert not any("self-consistency" in note for note in result.notes)


def test_judge_runs_pads_a_writing_short_of_usable_samples() -> None:
    record = {"n": 3, "values": [{"overall": 4, "content": 5}, {"overall": 6, "content": 7}]}
    runs = judge_runs("tow", {"self_consistency": record})
    assert runs["tow.content"][:2] == [5.0, 7.0] and math.isnan(runs["tow.content"][2])
    assert runs["tow.overall"][:2] == [4.0, 6.0] and math.isnan(runs["tow.overall"][2])
    assert judge_runs("bleu", {"self_consistency": {"n": 2, "values": [0.5, 0.25]}}) == {
        "bleu": [0.5, 0.25]
    }
    assert judge_runs("tow", {"weights": {}}) == {} and judge_runs("tow", None) == {}
