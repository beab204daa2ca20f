"""The judge simulator over real HTTP: inspect's openai-api provider talking to 127.0.0.1."""

from pathlib import Path

import pytest
from inspect_ai import eval

from howtobench import guide
from howtobench.simulator import Faults, JudgeSimulator


@pytest.fixture
def simulator(monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    with JudgeSimulator() as sim:
        monkeypatch.setenv("SIM_BASE_URL", sim.base_url)
        monkeypatch.setenv("SIM_API_KEY", "none")
        yield sim


def test_tow_over_http_scores_every_sample(simulator: JudgeSimulator, tmp_path: Path) -> None:
    [log] = eval(
        guide(dataset="demo", replay="demo-writer-a"),
        model="none",
        model_roles={"grader": "openai-api/sim/judge"},
        log_dir=str(tmp_path),
        display="none",
    )
    assert log.status == "success"
    assert all(isinstance(s.scores["tow"].value, dict) for s in log.samples)
    assert simulator.calls == {
        "negotiator": 3,
        **dict.fromkeys(
            [
                "opening_ending",
                "rhetoric",
                "logic",
                "emotion",
                "plots",
                "paragraphing",
                "impression",
            ],
            3,
        ),
    }
    assert log.stats.model_usage["openai-api/sim/judge"].input_tokens == simulator.tokens["prompt"]


def test_persistently_malformed_replies_end_cleanly_unscored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with JudgeSimulator(faults=Faults(rate_malformed=1.0)) as sim:
        monkeypatch.setenv("SIM_BASE_URL", sim.base_url)
        monkeypatch.setenv("SIM_API_KEY", "none")
        [log] = eval(
            guide(dataset="demo", replay="demo-writer-b"),
            model="none",
            model_roles={"grader": "openai-api/sim/judge"},
            log_dir=str(tmp_path),
            display="none",
        )
    assert log.status == "success"
    assert len(log.samples) == 3
    for sample in log.samples:
        score = sample.scores["tow"]
        assert score.reason.startswith(
            "negotiator (openai-api/sim/judge): the reply holds no JSON object"
        )
    assert sim.calls["negotiator"] == 3 * 3
