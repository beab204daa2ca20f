"""The paper's settings over HTTP: Average scoring (ToW w/o plan), node ablation with the
full tree's weights, and the judges' temperature (section 5.3's sampled trials)."""

from __future__ import annotations

import re
from pathlib import Path
from statistics import fmean
from typing import Any

import pytest

from howtobench import guide
from howtobench.simulator import Asked
from howtobench.tree.spec import tree_for
from support.data import INSTRUCTIONS, OTHER, WRITINGS, write_guide_data
from support.evals import run_eval, scores
from support.judges import Serve, experts, root_of, simulator_model

# A leaf added to the tree since these were written scores 6 (content's mean here).
LEAVES = dict.fromkeys(experts(), 6) | {
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
        guide(dataset=str(data), weights="uniform"), tmp_path / "logs", simulator, model="replay/m"
    )
    assert simulator.calls["negotiator"] == 0
    score = scores(log)["a"]
    # content = (7 + 5 + 8 + 4) / 4 = 6; format = (10 [plots 9 -> 10] + 5 [2 -> 5] + 10) / 3;
    # overall = (4·6 + 25 + 6) / 8 on the paper's tree
    tree = tree_for("guide")
    value = score.value
    nodes = {node: fmean(value[leaf.id] for leaf in tree.leaves_of(node)) for node in tree.nodes}
    assert value["content"] == pytest.approx(6)
    assert value["content"] == pytest.approx(nodes["content"])
    assert value["format"] == pytest.approx(nodes["format"])
    assert [value[i] for i in ("plots", "paragraphing")] == [10, 5]
    assert value["overall"] == pytest.approx(root_of("guide", nodes))
    groups = tree.negotiated.values()
    assert set(score.metadata["weights"].values()) == {1 / len(ids) for ids in groups}
    assert score.metadata["negotiator"]["model"] == "none"
    assert log.eval.task_args["weights"] == "uniform"


@pytest.mark.slow
def test_an_ablation_keeps_the_full_trees_weights(serve: Serve, tmp_path: Path) -> None:
    simulator = serve(script=fixed)
    data = write_guide_data(tmp_path / "data.jsonl")
    [full] = run_eval(guide(dataset=str(data)), tmp_path / "logs", simulator, model="replay/m")
    asked = simulator.calls["negotiator"]
    [ablated] = run_eval(
        guide(dataset=str(data), nodes="content,impression"),
        tmp_path / "logs",
        simulator,
        model="replay/m",
    )
    assert simulator.calls["negotiator"] == asked  # the same question: answered from the store
    for key in INSTRUCTIONS:
        before, after = scores(full)[key], scores(ablated)[key]
        assert after.metadata["weights"] == before.metadata["weights"]
        assert after.value["content"] == pytest.approx(before.value["content"])
        assert "format" not in after.value
    [only] = run_eval(
        guide(dataset=str(data), nodes="impression"), tmp_path / "logs", simulator, model="replay/m"
    )
    assert simulator.calls["negotiator"] == asked  # no negotiated node kept: no call
    assert scores(only)["a"].value == {"overall": 6, "impression": 6}


@pytest.mark.slow
def test_the_judges_temperature(serve: Serve, tmp_path: Path) -> None:
    simulator = serve(script=fixed)
    data = write_guide_data(tmp_path / "data.jsonl")
    logs = tmp_path / "logs"
    run_eval(guide(dataset=str(data), genre="prose"), logs, simulator, model="replay/m")
    assert {t for (_, t) in simulator.temperatures} == {0}  # default: deterministic
    simulator.temperatures.clear()
    task = guide(dataset=str(data), judge_temperature=0.7, reuse_weights=False)
    run_eval(task, logs, simulator, model="replay/n")
    assert {t for (_, t) in simulator.temperatures} == {0.7}
    # both runs judged what they replayed: m's writings, then n's
    judged = {w for (kind, w) in simulator.questions if kind == "logic"}
    assert judged == {*WRITINGS.values(), *OTHER.values()}
    # a temperature set on the judge role is honoured ...
    simulator.temperatures.clear()
    hot = simulator_model(simulator, temperature=0.4)
    run_eval(guide(dataset=str(data), scorers="rubric"), logs, hot, model="replay/m")
    assert {t for (_, t) in simulator.temperatures} == {0.4}
    # ... and one that disagrees with -T judge_temperature stops the run, naming both
    task = guide(dataset=str(data), scorers="rubric", judge_temperature=0.7)
    [clash] = run_eval(task, tmp_path / "clash", hot, status="error", model="replay/m")
    assert "-T judge_temperature=0.7 and the temperature 0.4" in str(clash.error.message)


@pytest.mark.slow
def test_the_paper_codes_framing_no_system_prompt_and_no_task_or_genre_line(
    tmp_path: Path, serve: Serve
) -> None:
    """-T judge_system=false sends the negotiator and the experts the question alone, and
    -T genre_line=false leaves the task-type and genre lines out of every judge's and the
    negotiator's prompt, as the paper's code does; by default all are sent."""
    simulator = serve(record=True)
    run_eval(
        guide(dataset="demo", judge_system=False, genre_line=False),
        tmp_path / "paper",
        simulator,
        model="replay/demo-writer-a",
        limit=1,
    )
    plain = list(simulator.requests)
    run_eval(
        guide(dataset="demo"), tmp_path / "ours", simulator, model="replay/demo-writer-a", limit=1
    )
    ours = simulator.requests[len(plain) :]
    for requests, framed in ((plain, False), (ours, True)):
        judged = [r for r in requests if r.kind != "writer"]
        assert {"negotiator", "logic", "impression"} <= {r.kind for r in judged}
        for request in judged:
            assert any(s.role == "system" for s in request.segments) is framed, request.kind
            text = "\n".join(s.text for s in request.segments)
            assert bool(re.search(r"(?m)^任务类型：", text)) is framed, request.kind
            assert bool(re.search(r"(?m)^体裁：", text)) is framed, request.kind
