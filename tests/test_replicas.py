"""One judge role served by two replicas behind nginx (docs/replicas.md), over the real
stack: two simulator processes, nginx with the page's configuration, inspect's
`openai-api` provider pointed at nginx.

inspect gives a model one base URL, so a balancer is how one judge role uses several
replicas. What a user needs from it: the calls spread over the replicas, a replica that
dies mid-run costs retries and nothing else, and the reply store sees one judge (its key
holds the base URL, which is nginx's), so a rerun asks nothing, whichever replica gave
an answer, the dead one included.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from howtobench import guide, open_writing
from howtobench.simulator.process import Served, SimulatorFailed, served
from howtobench.tree.spec import tree_for
from support.balancer import balancing, nginx_or_skip
from support.evals import run_eval, scores

pytestmark = pytest.mark.slow

GRADER = "openai-api/sim/judge"
# the demo: 3 guide and 4 open instructions, one writing each (demo-writer-a)
WRITINGS = {"guide": 3, "open": 4}
# one negotiator call per instruction, one call per LLM leaf of the task's tree (3·8 + 4·8
# on the paper's tree)
QUESTIONS = sum(
    count * (1 + sum(leaf.judge == "llm" for leaf in tree_for(task).leaves))
    for task, count in WRITINGS.items()
)
KILL_AFTER = 10  # calls the doomed replica answers before it is killed
CONNECTIONS = 6
WRITER = "replay/demo-writer-a"


def tasks() -> list[object]:
    return [guide(dataset="demo"), open_writing(dataset="demo")]


def answered_in_store(cache: Path) -> int:
    return sum(1 for _ in (cache / "howtobench" / "replies").rglob("*.json"))


class Killer:
    """Kills a replica with SIGKILL once it has answered `after` calls (read from its
    `/stats`), from a thread, while the run goes on; `calls_at_kill` is its count then."""

    def __init__(self, replica: Served, after: int) -> None:
        self.replica, self.after = replica, after
        self.done = threading.Event()
        self.stop = threading.Event()
        self.calls_at_kill = 0
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self.stop.wait(0.05):
            calls = self.replica.calls()
            if calls >= self.after:
                os.kill(self.replica.process.pid, signal.SIGKILL)
                self.calls_at_kill = calls
                self.done.set()
                return

    def __enter__(self) -> Killer:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join(10)


@pytest.fixture
def nginx() -> Iterator[str]:
    yield nginx_or_skip()


def test_two_replicas_behind_nginx_share_the_calls_survive_a_kill_and_one_store(
    nginx: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "inspect-cache"  # the autouse fixture's INSPECT_CACHE_DIR
    monkeypatch.setenv("SIM_API_KEY", "none")
    with pytest.raises(SimulatorFailed, match=r"exited while it was in use"):
        with served(latency=0.3) as doomed:
            with (
                served(latency=0.3) as survivor,
                balancing([doomed.root_url, survivor.root_url], tmp_path / "nginx") as balancer,
            ):
                monkeypatch.setenv("SIM_BASE_URL", balancer.base_url)
                before = doomed.calls() + survivor.calls()
                probes = len(balancer.passes())  # nginx's readiness check
                with Killer(doomed, KILL_AFTER) as killer:
                    logs = run_eval(
                        tasks(),
                        tmp_path / "logs",
                        GRADER,
                        model=WRITER,
                        max_connections=CONNECTIONS,
                    )
                assert killer.done.is_set(), "the run ended before the replica was killed"

                # every writing scored, as if nothing had happened
                for log, count in zip(logs, WRITINGS.values(), strict=True):
                    judged = scores(log)
                    assert len(judged) == count
                    assert all(isinstance(s.value, dict) for s in judged.values()), judged

                # both replicas answered; the survivor took the rest after the kill
                assert killer.calls_at_kill >= KILL_AFTER
                survived = survivor.calls()
                assert survived >= 1
                assert killer.calls_at_kill + survived - before >= QUESTIONS

                # what the kill cost: requests nginx passed on from the dead replica
                dead = doomed.root_url.removeprefix("http://")
                passes = balancer.passes()
                passed_on = [p for p in passes if len(p) > 1]
                assert passed_on and all(p[0] == dead for p in passed_on)
                assert all(p[-1] != dead for p in passed_on)
                # and each question crossed nginx once: inspect retried none of them
                assert len(passes) - probes == QUESTIONS

                # one store identity: every question answered once, under nginx's URL
                assert answered_in_store(cache) == QUESTIONS
                [rerun_guide, rerun_open] = run_eval(
                    tasks(), tmp_path / "again", GRADER, model=WRITER, max_connections=CONNECTIONS
                )
                assert survivor.calls() == survived  # not one question asked again
                assert len(balancer.passes()) == len(passes)
                for log in (rerun_guide, rerun_open):
                    assert all(isinstance(s.value, dict) for s in scores(log).values())
                print(
                    f"replica calls: killed one {killer.calls_at_kill}, survivor "
                    f"{survived - before}; requests nginx passed on: {len(passed_on)} "
                    f"of {len(passes)}"
                )
