"""The paper's settings over HTTP: Average scoring (ToW w/o plan), node ablation with the
full tree's weights, and the judges' temperature (section 5.3's sampled trials)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval
from test_trust import INSTRUCTIONS, WRITINGS, grader, run, scores, write_data

from howtobench import guide
from howtobench.simulator import Question

LEAVES = {
    "opening_ending": 7,
    "rhetoric": 5,
    "logic": 8,
    "emotion": 4,
    "plots": 9,
    "paragraphing": 2,
    "impression": 6,
}


def fixed(q: Question) -> dict[str, Any] | None:
    return {"score": LEAVES[q.kind], "reason": "按脚本"} if q.kind in LEAVES else None


def test_uniform_weights_make_no_negotiator_call(serve: Any, tmp_path: Path) -> None:
    simulator = serve(script=fixed)
    data = write_data(tmp_path / "data.jsonl")
    log = run(guide(dataset=str(data), replay="m", weights="uniform"), tmp_path, simulator)
    assert simulator.calls["negotiator"] == 0
    score = scores(log)["a"]
    # content = (7 + 5 + 8 + 4) / 4 = 6; format = (10 [plots 9 -> 10] + 5 [2 -> 5] + 10) / 3
    assert score.value["content"] == pytest.approx(6)
    assert score.value["format"] == pytest.approx(25 / 3)
    assert score.value["overall"] == pytest.approx((4 * 6 + 25 + 6) / 8)
    assert set(score.metadata["weights"].values()) == {0.25, 1 / 3}
    assert score.metadata["negotiator"]["model"] == "none"
    assert log.eval.task_args["weights"] == "uniform"


def test_an_ablation_keeps_the_full_trees_weights(serve: Any, tmp_path: Path) -> None:
    simulator = serve(script=fixed)
    data = write_data(tmp_path / "data.jsonl")
    full = run(guide(dataset=str(data), replay="m"), tmp_path, simulator)
    asked = simulator.calls["negotiator"]
    ablated = run(
        guide(dataset=str(data), replay="m", nodes="content,impression"), tmp_path, simulator
    )
    assert simulator.calls["negotiator"] == asked  # the same question: answered from the store
    for key in INSTRUCTIONS:
        before, after = scores(full)[key], scores(ablated)[key]
        assert after.metadata["weights"] == before.metadata["weights"]
        assert after.value["content"] == pytest.approx(before.value["content"])
        assert "format" not in after.value
    only = run(guide(dataset=str(data), replay="m", nodes="impression"), tmp_path, simulator)
    assert simulator.calls["negotiator"] == asked  # no negotiated node kept: no call
    assert scores(only)["a"].value == {"overall": 6, "impression": 6}


def test_the_judges_temperature(serve: Any, tmp_path: Path) -> None:
    simulator = serve(script=fixed)
    data = write_data(tmp_path / "data.jsonl")
    run(guide(dataset=str(data), replay="m", genre="prose"), tmp_path, simulator)
    assert {t for (_, t) in simulator.temperatures} == {0}  # default: deterministic
    simulator.temperatures.clear()
    run(
        guide(dataset=str(data), replay="n", judge_temperature=0.7, reuse_weights=False),
        tmp_path,
        simulator,
    )
    assert {t for (_, t) in simulator.temperatures} == {0.7}
    # a temperature set on the judge role is honoured ...
    simulator.temperatures.clear()
    hot = grader(simulator, temperature=0.4)
    log = run(
        guide(dataset=str(data), replay="m", scorers="rubric"),
        tmp_path,
        simulator,
        model_roles={"grader": hot},
    )
    assert log.status == "success" and {t for (_, t) in simulator.temperatures} == {0.4}
    # ... and one that disagrees with -T judge_temperature stops the run, naming both
    [clash] = eval(
        guide(dataset=str(data), replay="m", scorers="rubric", judge_temperature=0.7),
        model="none",
        model_roles={"grader": hot},
        log_dir=str(tmp_path / "clash"),
        display="none",
    )
    assert clash.status == "error"
    assert "-T judge_temperature=0.7 and the temperature 0.4" in str(clash.error.message)
    assert WRITINGS  # the data the runs judged
