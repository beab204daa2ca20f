"""The judge simulator over real HTTP: inspect's openai-api provider talking to 127.0.0.1."""

from pathlib import Path

from inspect_ai import eval

from howtobench import guide
from howtobench.simulator import Faults


def test_tow_over_http_scores_every_sample(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    simulator = serve()
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


def test_persistently_malformed_replies_end_cleanly_unscored(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    sim = serve(faults=Faults(rate_malformed=1.0))
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
