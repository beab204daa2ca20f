"""`howtobench judge-check` against the judge simulator over HTTP: a healthy judge, one
leaf answered unusably, answers usable only after a re-ask, a refused probe, a dead port,
bad input, and the JSON shape. Expected counts come from the demo file and from what the
simulator itself saw and billed, not from the check's own reading of the log."""

from __future__ import annotations

import json
import socket
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from howtobench.cli import main
from howtobench.dataset.jsonl import DEMO_FILE
from howtobench.judge_check.writings import default_replay, present_tasks
from howtobench.simulator import Asked, Fault, JudgeSimulator
from howtobench.tree.spec import tree_for
from support.judges import Serve

JUDGE = "grader=openai-api/sim/judge"
PROBE_KIND = "writer"  # the probes ask no judge question: the simulator reads them as a writer's


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run `howtobench judge-check ARGS`: (exit status, stdout, stderr)."""
    status = main(["judge-check", *args])
    out, err = capsys.readouterr()
    return status, out, err


def demo_writings(tasks: tuple[str, ...], limit: int) -> dict[str, int]:
    """Writings per task the check judges: the demo's records of it, up to `limit`."""
    counts = Counter(json.loads(line)["task"] for line in DEMO_FILE.read_text().splitlines())
    return {task: min(counts[task], limit) for task in tasks}


def expected_questions(writings: dict[str, int]) -> dict[str, int]:
    """One negotiator question per instruction (one writer: one writing each) and one
    question per LLM leaf of each writing's tree."""
    asked: Counter[str] = Counter(negotiator=sum(writings.values()))
    for task, n in writings.items():
        for leaf in tree_for(task).leaves:
            if leaf.judge == "llm":
                asked[leaf.id] += n
    return dict(asked)


def judge_usage(simulator: JudgeSimulator) -> dict[str, int]:
    """What the simulator billed for the judge's questions (the probes left out)."""
    billed: Counter[str] = Counter()
    for request in simulator.requests:
        if request.kind != PROBE_KIND and request.usage is not None:
            billed.update(
                input=request.usage.input,
                cache_read=request.usage.cache_read,
                cache_write=request.usage.cache_write,
                output=request.usage.output,
            )
    return dict(billed)


@pytest.mark.slow
def test_a_healthy_judge_serves_every_kind_at_once(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    simulator = serve(latency=0.05)
    status, out, err = check(capsys, "--model-role", JUDGE, "--json")
    assert status == 0, err
    assert err == ""
    report = json.loads(out)
    writings = demo_writings(("guide", "open", "completion"), 2)
    asked = expected_questions(writings)
    assert report["ok"] is True and report["exit_status"] == 0 and report["reasons"] == []
    assert report["tasks"] == ["guide", "open", "completion"]
    assert report["replay"] == "demo-writer-a"
    assert report["writings"] == report["instructions"] == sum(writings.values()) == 6
    assert {k: v["asked"] for k, v in report["kinds"].items()} == asked
    for name, kind in report["kinds"].items():
        assert kind["usable_at_once"] == kind["asked"] == simulator.calls[name], name
        assert kind["usable_after_reask"] == kind["unusable"] == kind["from_store"] == 0
        assert kind["calls"] == kind["asked"] and kind["median_latency_s"] >= 0.05
    assert report["judge_calls"] == sum(asked.values())
    assert simulator.calls[PROBE_KIND] == 6  # one request per probe, nothing else
    assert all(p["accepted"] for p in report["probes"].values())
    billed = judge_usage(simulator)
    each = report["per_writing"]
    assert each["output_tokens"] == round(billed["output"] / 6)
    assert each["input_tokens"] == round(billed["input"] / 6)
    assert each["cache_read_tokens"] == round(billed["cache_read"] / 6)
    assert each["dollars"] is None


@pytest.mark.slow
def test_the_text_report_fits_a_terminal_and_prices_a_writing(
    serve: Serve, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    simulator = serve()
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "openai-api/sim/judge: {input: 1.0, output: 2.0, input_cache_write: 1.25, "
        "input_cache_read: 0.1}\n"
    )
    status, out, err = check(
        capsys, "--model-role", JUDGE, "--tasks", "guide", "--limit", "1", "--prices", str(prices)
    )
    assert status == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100
    rows = {line.split()[0]: line.split() for line in lines if line.split()[:1]}
    for leaf in expected_questions({"guide": 1}):
        assert rows[leaf][1:5] == ["1", "1", "0", "0"], leaf  # asked, at once, re-asked, unusable
    billed = judge_usage(simulator)
    dollars = (
        billed["input"] * 1.0
        + billed["output"] * 2.0
        + billed["cache_read"] * 0.1
        + billed["cache_write"] * 1.25
    ) / 1e6
    assert f"cost per writing: ${dollars:.4f} (estimated)" in lines
    assert f"  {'temperature 0.7':<36} answered" in lines
    assert lines[-1].startswith("verdict: can serve Tree-of-Writing")


@pytest.mark.slow
def test_a_leaf_answered_unusably_fails_the_check_naming_it(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(question: Asked) -> str | None:
        return "I would rather not give a number." if question.kind == "emotion" else None

    simulator = serve(script=script)
    status, out, err = check(capsys, "--model-role", JUDGE, "--tasks", "guide,open")
    assert status == 1
    [line] = err.splitlines()
    assert line.startswith("howtobench judge-check: the judge cannot serve Tree-of-Writing: ")
    assert "emotion: usable in 0 of 4 asks: the reply holds no JSON object (4)" in line
    assert "  emotion, 4 unusable: the reply holds no JSON object" in out.splitlines()
    assert simulator.calls["emotion"] == 4 * 3  # every question asked three times in all
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()[:1]}
    assert rows["emotion"][1:5] == ["4", "0", "0", "4"]
    assert rows["logic"][1:5] == ["4", "4", "0", "0"]
    assert "4 of 4 writings left unscored" in out


@pytest.mark.slow
def test_a_judge_usable_after_a_reask_serves_and_a_refused_probe_is_reported(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(question: Asked) -> str | Fault | None:
        if question.kind == "logic" and question.attempt == 1:
            return '{"verdict": "good"}'  # JSON, but not the answer asked for
        if "probe (temperature_0.7)" in question.text:
            return Fault("400")
        return None

    simulator = serve(script=script)
    status, out, err = check(
        capsys, "--model-role", JUDGE, "--tasks", "guide", "--limit", "2", "--json"
    )
    assert status == 0, err
    report = json.loads(out)
    logic = report["kinds"]["logic"]
    assert logic["asked"] == logic["usable_after_reask"] == 2 and logic["usable_at_once"] == 0
    assert logic["calls"] == simulator.calls["logic"] == 4
    assert report["kinds"]["rhetoric"]["usable_at_once"] == 2
    refused = report["probes"]["temperature_0.7"]
    assert refused == {
        "label": "temperature 0.7",
        "accepted": False,
        "state": "refused: HTTP 400: simulated 400",
        "answered": True,
        "cut": False,
        "status": 400,
        "message": "simulated 400",
    }
    assert report["probes"]["system"]["accepted"] is True


@pytest.mark.slow
def test_a_dead_port_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as free:  # a port nothing listens on
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    monkeypatch.setenv("SIM_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("SIM_API_KEY", "none")
    role = "grader={model: openai-api/sim/judge, max_retries: 0}"
    status, out, err = check(capsys, "--model-role", role)
    assert status == 1 and out == ""
    [line] = err.splitlines()
    assert line.startswith(
        f"howtobench judge-check: no answer from openai-api/sim/judge at http://127.0.0.1:{port}/v1"
    )
    assert line.endswith("check the base URL, the key, and that the server is running")


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--model-role", "grader=nowhere/model"], "cannot use 'nowhere/model'"),
        (["--model-role", "grader=openai-api/sim/judge"], "No SIM_BASE_URL defined"),
        (["--model-role", JUDGE, "--dataset", "no-such-data"], "dataset not found"),
        (["--model-role", JUDGE, "--dataset", "hub"], "no stored writings to replay"),
        (["--model-role", JUDGE, "--replay", "nobody"], "no stored writings of 'nobody'"),
        (["--model-role", JUDGE, "--tasks", "essay"], "unknown task essay"),
        (["--model-role", JUDGE, "--limit", "0"], "--limit 0"),
        (["--model-role", "grader=a/b,c/d"], "one judge, not a list"),
        (["--model-role", "critic=openai-api/sim/judge"], "the grader role only"),
        (["--model-role", "grader={model: openai-api/sim/judge, temprature: 1}"], "temprature"),
    ],
)
def test_bad_input_is_one_line_and_status_2(
    args: list[str],
    says: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    if "No SIM_BASE_URL" in says:
        monkeypatch.delenv("SIM_BASE_URL", raising=False)
        monkeypatch.setenv("SIM_API_KEY", "none")
    else:
        monkeypatch.setenv("SIM_BASE_URL", "http://127.0.0.1:9/v1")  # never reached
        monkeypatch.setenv("SIM_API_KEY", "none")
    status, out, err = check(capsys, *args)
    assert status == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith("howtobench judge-check: error: ") and says in line


def test_json_shape_of_a_stopped_check(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, serve: Serve
) -> None:
    """A judge that refuses even a plain request stops the check before the eval, and
    the JSON still has every key scripts read."""

    def script(question: Asked) -> Fault | None:
        return Fault("400") if question.kind == PROBE_KIND else None

    simulator = serve(script=script)
    status, out, err = check(capsys, "--model-role", JUDGE, "--json")
    assert status == 1
    report: dict[str, Any] = json.loads(out)
    assert set(report) >= {
        "judge", "endpoint", "dataset", "replay", "tasks", "limit", "ok", "exit_status",
        "rule", "reasons", "stopped", "writings", "judge_calls", "kinds", "per_writing",
        "probes", "logs",
    }  # fmt: skip
    assert report["ok"] is False and report["exit_status"] == 1 and report["kinds"] == {}
    assert report["stopped"].endswith(
        "refused a plain one-message request (HTTP 400: simulated 400)"
    )
    assert list(report["probes"]) == [
        "plain",
        "text_parts",
        "system",
        "temperature_0",
        "temperature_0.7",
        "long_prompt",
    ]
    assert simulator.calls == Counter({PROBE_KIND: 6})  # no judge question was asked
    assert err.splitlines() == [f"howtobench judge-check: {report['stopped']}"]


def test_a_data_folder_replays_its_first_writer_stored_for_every_task(data_folder: Path) -> None:
    folder = str(data_folder)  # guide only, with model-a and model-b
    assert present_tasks(folder, ["guide", "open", "completion"]) == ["guide"]
    assert default_replay(folder, ["guide"]) == "model-a"
