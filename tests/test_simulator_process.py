"""The simulator as a child process (`howtobench.simulator.process.served`): started on a
port of its own, ready when entered, stopped on leaving, and a child that fails is an
error that quotes its stderr."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from howtobench.simulator.process import SimulatorFailed, served
from howtobench.tree.prompts import tree_prompt

pytestmark = pytest.mark.slow


def ask(base_url: str, system: str) -> dict[str, object]:
    request = urllib.request.Request(
        f"{base_url}/chat/completions",
        data=json.dumps(
            {
                "model": "judge",
                "messages": [
                    {"role": "system", "content": system},
                    {"role": "user", "content": "任务：写一篇议论文。"},
                ],
            }
        ).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as answer:
        return dict(json.load(answer))


def test_two_served_simulators_answer_on_ports_of_their_own_and_stop() -> None:
    with served(profile="vllm") as first, served() as second:
        assert first.root_url != second.root_url
        ask(first.base_url, tree_prompt("negotiator_system", "zh"))
        ask(first.base_url, "You are a writer.")
        assert first.stats()["calls"] == {"negotiator": 1, "writer": 1}
        assert first.stats()["profile"] == "vllm" and first.calls() == 2
        assert second.calls() == 0
    for simulator in (first, second):
        assert simulator.process.returncode is not None  # reaped
        with pytest.raises(urllib.error.URLError):
            ask(simulator.base_url, "You are a writer.")


def test_a_simulator_that_cannot_start_says_why() -> None:
    with pytest.raises(SimulatorFailed, match="(?s)exited before it was ready.*invalid choice"):
        with served(profile="no-such-server"):
            pass


def test_a_simulator_that_dies_in_use_is_reported() -> None:
    with pytest.raises(SimulatorFailed, match=r"judge simulator exited \(exit status -9\)"):
        with served() as simulator:
            simulator.process.kill()
            simulator.process.wait()
            simulator.stats()
    # leaving the block notices it too, when nothing asked it since
    with pytest.raises(SimulatorFailed, match="exited while it was in use"):
        with served() as simulator:
            simulator.process.kill()
            simulator.process.wait()
