"""Fluctuation of ToW weights and autoplan shares across epochs (delta and sigma, sec. 5.3).

The ToW negotiator reuses an instruction's weights across epochs, so the five-epoch run
is rewritten here with weights and shares that move from epoch to epoch.
"""

import math
from pathlib import Path
from statistics import fmean

import pytest
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.scorer import Score

from howtobench.studies import StudyError, consistency
from howtobench.studies.weight_consistency import fluctuation


def tow_weights(s: int, t: int) -> dict[str, float]:
    """Weights of sample s in epoch t; each group sums to 1."""
    return {
        "opening_ending": 0.10 + 0.01 * t,
        "rhetoric": 0.20,
        "logic": 0.40 - 0.01 * t - 0.005 * s * t,
        "emotion": 0.30 + 0.005 * s * t,
        "plots": 0.5 + 0.02 * (t % 2),
        "paragraphing": 0.3 - 0.02 * (t % 2),
        "formatting": 0.2,
    }


def shares(s: int, t: int) -> dict[str, float]:
    swing = 0.05 * ((t + s) % 3 - 1)
    planned = {"content": 0.5 + swing, "structure": 0.3, "language": 0.2 - swing}
    if (s, t) == (0, 3):  # this trial did not plan a language dimension
        del planned["language"]
    return planned


def by_hand(runs: list[dict[str, float]]) -> tuple[float, float]:
    """The paper's delta and sigma of one sample, averaged over its keys."""
    keys = sorted({k for run in runs for k in run})
    deltas, sigmas = [], []
    for key in keys:
        values = [run.get(key, 0.0) for run in runs]
        mu = sum(values) / len(values)
        deltas.append(sum(abs(v - values[0]) for v in values[1:]))
        sigmas.append(math.sqrt(sum((v - mu) ** 2 for v in values)))
    return fmean(deltas), fmean(sigmas)


def negotiate_every_time(log: EvalLog) -> None:
    """What a `-T reuse_weights=false` run records: the setting, and no weights reused."""
    log.eval.task_args["reuse_weights"] = False
    for spec in log.eval.scorers:
        if spec.name == "tow":
            spec.options["reuse_weights"] = False
    for sample in log.samples:
        sample.scores["tow"].metadata["negotiator"]["reused"] = False


@pytest.fixture
def fluctuating(epochs_logs: Path, tmp_path: Path) -> Path:
    """The five-epoch run as if each epoch had negotiated its own weights."""
    [path] = epochs_logs.glob("*.eval")
    log = read_eval_log(str(path))
    negotiate_every_time(log)
    ids = sorted({s.id for s in log.samples})
    for sample in log.samples:
        s, t = ids.index(sample.id), sample.epoch
        sample.scores["tow"].metadata["weights"] = tow_weights(s, t)
        sample.scores["autoplan"] = Score(value={"overall": 5.0}, metadata={"shares": shares(s, t)})
    out = tmp_path / "fluctuating.eval"
    write_eval_log(log, str(out))
    return out


def test_fluctuation_of_one_sample_by_hand() -> None:
    table = fluctuation([{"a": 0.5, "b": 0.5}, {"a": 0.7, "b": 0.3}, {"a": 0.5, "b": 0.5}])
    # delta_a = |.7 - .5| + |.5 - .5|; sigma_a = sqrt(2 (1/15)^2 + (2/15)^2)
    assert table.loc["a", "delta"] == pytest.approx(0.2)
    assert table.loc["a", "sigma"] == pytest.approx(math.sqrt(6) / 15)
    # b moves by the same amounts the other way: |.3 - .5| + 0, and the same spread
    assert table.loc["b", "delta"] == pytest.approx(0.2)
    assert table.loc["b", "sigma"] == pytest.approx(math.sqrt(6) / 15)


def test_delta_and_sigma_of_weights_and_shares(fluctuating: Path) -> None:
    result = consistency([fluctuating])
    summary = result.tables["summary"].set_index(["source", "task"])
    tow = [by_hand([tow_weights(s, t) for t in range(1, 6)]) for s in range(3)]
    autoplan = [by_hand([shares(s, t) for t in range(1, 6)]) for s in range(3)]
    for source, expected in (("tow", tow), ("autoplan", autoplan)):
        for task in ("guide", "all"):
            row = summary.loc[(source, task)]
            assert row["samples"] == 3 and row["epochs"] == "5"
            assert row["delta"] == pytest.approx(fmean(d for d, _ in expected))
            assert row["sigma"] == pytest.approx(fmean(s for _, s in expected))
    keys = result.tables["keys"].set_index(["source", "key"])
    logic = [[tow_weights(s, t)["logic"] for t in range(1, 6)] for s in range(3)]
    assert keys.loc[("tow", "logic"), "delta"] == pytest.approx(
        fmean(sum(abs(v - w[0]) for v in w[1:]) for w in logic)
    )
    assert keys.loc[("tow", "rhetoric"), "sigma"] == 0
    assert keys.loc[("autoplan", "language"), "samples"] == 3


REUSE_NOTE = (
    "tow: {} of {} sample(s) reuse their instruction's weights across epochs (the scorer's "
    "default reuse_weights=true negotiates once per instruction): their delta = sigma = 0 "
    "of the weights is by design, not a finding; run with -T reuse_weights=false to "
    "measure the negotiator's fluctuation"
)


@pytest.mark.slow
def test_the_negotiator_reuses_weights_across_epochs(epochs_logs: Path) -> None:
    """The real run (default reuse_weights=true): zero fluctuation, and the study says why."""
    result = consistency([epochs_logs])
    summary = result.tables["summary"]
    assert summary["delta"].tolist() == [0, 0]
    assert summary["sigma"].tolist() == pytest.approx([0, 0], abs=1e-12)
    assert summary["reused_weights"].tolist() == [3, 3]
    assert REUSE_NOTE.format(3, 3) in result.notes


def test_no_reuse_note_when_every_epoch_negotiates(fluctuating: Path) -> None:
    result = consistency([fluctuating])
    assert not any("reuse" in note for note in result.notes)
    tow = result.tables["summary"].set_index(["source", "task"]).loc[("tow", "all")]
    assert tow["reused_weights"] == 0


def test_a_log_without_the_setting_goes_by_the_negotiator(
    fluctuating: Path, tmp_path: Path
) -> None:
    """Older logs do not record reuse_weights: a sample whose negotiator says it reused
    the weights counts as reused."""
    log = read_eval_log(str(fluctuating))
    del log.eval.task_args["reuse_weights"]
    for spec in log.eval.scorers:
        spec.options.pop("reuse_weights", None)
    for sample in log.samples:
        if sample.id == "demo_guide_2" and sample.epoch > 1:
            sample.scores["tow"].metadata["negotiator"]["reused"] = True
    write_eval_log(log, str(tmp_path / "older.eval"))
    result = consistency([tmp_path / "older.eval"])
    assert REUSE_NOTE.format(1, 3) in result.notes
    summary = result.tables["summary"].set_index(["source", "task"])
    assert summary.loc[("tow", "all"), "reused_weights"] == 1


def test_epochs_without_weights_are_left_out(fluctuating: Path, tmp_path: Path) -> None:
    log = read_eval_log(str(fluctuating))
    for sample in log.samples:
        if sample.id == "demo_guide_1" and sample.epoch > 1:
            sample.scores["tow"].metadata["weights"] = None
        if sample.id == "demo_guide_2" and sample.epoch == 5:
            sample.scores["tow"].metadata["weights"] = None
    write_eval_log(log, str(tmp_path / "gaps.eval"))
    result = consistency([tmp_path / "gaps.eval"])
    assert (
        result.tables["summary"].set_index(["source", "task"]).loc[("tow", "all"), "samples"] == 2
    )
    assert (
        "tow: left out 5 epoch(s) without weights and 1 sample(s) with fewer than two epochs left"
        in result.notes
    )
    sample_2 = by_hand([tow_weights(1, t) for t in range(1, 5)])
    sample_3 = by_hand([tow_weights(2, t) for t in range(1, 6)])
    row = result.tables["summary"].set_index(["source", "task"]).loc[("tow", "all")]
    assert row["epochs"] == "4-5"
    assert row["delta"] == pytest.approx((sample_2[0] + sample_3[0]) / 2)


@pytest.mark.slow
def test_a_single_epoch_is_refused(writers_logs: Path) -> None:
    with pytest.raises(
        StudyError, match=r"needs repeated judge runs.*40 sample\(s\) have one epoch"
    ):
        consistency([writers_logs])


@pytest.mark.slow
def test_logs_without_weights_or_shares(fluctuating: Path, tmp_path: Path) -> None:
    log = read_eval_log(str(fluctuating))
    for sample in log.samples:
        sample.scores["tow"].metadata["weights"] = None
        del sample.scores["autoplan"]
    write_eval_log(log, str(tmp_path / "bare.eval"))
    with pytest.raises(StudyError, match="needs ToW weights .* or autoplan shares"):
        consistency([tmp_path / "bare.eval"])
