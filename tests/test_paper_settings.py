"""The paper's settings over HTTP: Average scoring (ToW w/o plan), node ablation with the
full tree's weights, and the judges' temperature (section 5.3's sampled trials)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from howtobench import guide
from howtobench.simulator import Asked
from support.data import INSTRUCTIONS, OTHER, WRITINGS, write_guide_data
from support.evals import run_eval, scores
from support.judges import Serve, simulator_model

LEAVES = {
    "opening_ending": 7,
    "rhetoric": 5,
    "logic": 8,
    "emotion": 4,
    "plots": 9,
    "paragraphing": 2,
    "impression": 6,
}


def fixed(q: Asked) -> dict[str, Any] | None:
    return {"score": LEAVES[q.kind], "reason": "按脚本"} if q.kind in LEAVES else None


@pytest.mark.slow
def test_uniform_weights_make_no_negotiator_call(serve: Serve, tmp_path: Path) -> None:
    simulator = serve(script=fixed)
    data = write_guide_data(tmp_path / "data.jsonl")
    [log] = run_eval(
        guide(dataset=str(data), replay="m", weights="uniform"), tmp_path / "logs", simulator
    )
    assert simulator.calls["negotiator"] == 0
    score = scores(log)["a"]
    # content = (7 + 5 + 8 + 4) / 4 = 6; format = (10 [plots 9 -> 10] + 5 [2 -> 5] + 10) / 3
    assert score.value["content"] == pytest.approx(6)
    assert score.value["format"] == pytest.approx(25 / 3)
    assert score.value["overall"] == pytest.approx((4 * 6 + 25 + 6) / 8)
    assert set(score.metadata["weights"].values()) == {0.25, 1 / 3}
    assert score.metadata["negotiator"]["model"] == "none"
    assert log.eval.task_args["weights"] == "uniform"


@pytest.mark.slow
def test_an_ablation_keeps_the_full_trees_weights(serve: Serve, tmp_path: Path) -> None:
    simulator = serve(script=fixed)
    data = write_guide_data(tmp_path / "data.jsonl")
    [full] = run_eval(guide(dataset=str(data), replay="m"), tmp_path / "logs", simulator)
    asked = simulator.calls["negotiator"]
    [ablated] = run_eval(
        guide(dataset=str(data), replay="m", nodes="content,impression"),
        tmp_path / "logs",
        simulator,
    )
    assert simulator.calls["negotiator"] == asked  # the same question: answered from the store
    for key in INSTRUCTIONS:
        before, after = scores(full)[key], scores(ablated)[key]
        assert after.metadata["weights"] == before.metadata["weights"]
        assert after.value["content"] == pytest.approx(before.value["content"])
        assert "format" not in after.value
    [only] = run_eval(
        guide(dataset=str(data), replay="m", nodes="impression"), tmp_path / "logs", simulator
    )
    assert simulator.calls["negotiator"] == asked  # no negotiated node kept: no call
    assert scores(only)["a"].value == {"overall": 6, "impression": 6}


@pytest.mark.slow
def test_the_judges_temperature(serve: Serve, tmp_path: Path) -> None:
    simulator = serve(script=fixed)
    data = write_guide_data(tmp_path / "data.jsonl")
    logs = tmp_path / "logs"
    run_eval(guide(dataset=str(data), replay="m", genre="prose"), logs, simulator)
    assert {t for (_, t) in simulator.temperatures} == {0}  # default: deterministic
    simulator.temperatures.clear()
    task = guide(dataset=str(data), replay="n", judge_temperature=0.7, reuse_weights=False)
    run_eval(task, logs, simulator)
    assert {t for (_, t) in simulator.temperatures} == {0.7}
    # both runs judged what they replayed: m's writings, then n's
    judged = {w for (kind, w) in simulator.questions if kind == "logic"}
    assert judged == {*WRITINGS.values(), *OTHER.values()}
    # a temperature set on the judge role is honoured ...
    simulator.temperatures.clear()
    hot = simulator_model(simulator, temperature=0.4)
    run_eval(guide(dataset=str(data), replay="m", scorers="rubric"), logs, hot)
    assert {t for (_, t) in simulator.temperatures} == {0.4}
    # ... and one that disagrees with -T judge_temperature stops the run, naming both
    task = guide(dataset=str(data), replay="m", scorers="rubric", judge_temperature=0.7)
    [clash] = run_eval(task, tmp_path / "clash", hot, status="error")
    assert "-T judge_temperature=0.7 and the temperature 0.4" in str(clash.error.message)
