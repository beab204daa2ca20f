"""What a run says and learns about its judges belongs to that run (`judge/runs.py`).

Two runs in one Python process (a notebook, an eval set's passes, a script) are each told
once that their reply store cannot be written and that no judge is bound, and each learns
for itself that an endpoint refuses a system message; `inspect score` is a run of its
own. A negotiation that fails is asked once in a run, and again in the next. Over HTTP
to the simulator, and with a scripted live writer, through inspect.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import anyio
import pytest
from inspect_ai import eval, score

from howtobench import guide
from howtobench.judge.defaults import TRIES
from howtobench.judge.runs import RunNotes, this_run
from howtobench.simulator import get_profile
from howtobench.simulator.replies import valid_reply
from howtobench.tree.scorer import tree_of_writing
from support.evals import run_eval, scores, store_blocked_by_files
from support.judges import ScriptedJudge, Serve, llm_calls, simulator_model


def said(caplog: pytest.LogCaptureFixture, logger: str, words: str) -> list[str]:
    """The warnings of `logger` so far that contain `words`."""
    return [r.getMessage() for r in caplog.records if r.name == logger and words in r.getMessage()]


def test_a_run_is_its_event_loop_until_a_sample_names_it() -> None:
    """Outside any sample the notes are the event loop's: the same throughout one loop,
    new in the next (`inspect score`, each `score()` call), and outside any loop there is
    no run, so nothing is kept."""

    async def notes_twice() -> tuple[RunNotes, RunNotes]:
        return this_run(), this_run()

    first, again = anyio.run(notes_twice)
    later, _ = anyio.run(notes_twice)
    assert first is again and later is not first
    assert this_run() is not this_run()
    first.warn_once(logging.getLogger(__name__), ("x",), "once")
    assert first.said == {("x",)} and later.said == set()


@pytest.mark.slow
def test_every_run_is_told_once_that_its_store_cannot_be_written(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Files where the store's folders belong (one cause, "Not a directory", for the lock
    files and the replies alike): two evals in one process and then a re-score of the
    first log each give the warning, once each."""
    judge = serve()
    cache = store_blocked_by_files(tmp_path, monkeypatch)
    store = f"reply store {cache / 'howtobench'}"
    told: list[int] = []
    with caplog.at_level(logging.WARNING, logger="howtobench.judge.store"):
        for run in ("first", "second"):
            [log] = run_eval(
                guide(dataset="demo"), tmp_path / run, judge, model="replay/demo-writer-a"
            )
            assert all(isinstance(s.value, dict) for s in scores(log).values())
            told.append(len(said(caplog, "howtobench.judge.store", store)))
        rescored = score(log, [tree_of_writing()], action="overwrite", display="none")
        told.append(len(said(caplog, "howtobench.judge.store", store)))
    assert told == [1, 2, 3]
    assert all(isinstance(s.value, dict) for s in scores(rescored).values())
    # nothing kept, so all asked again: 3 · (3 + 3·7) on the paper's tree
    assert sum(judge.calls.values()) == 3 * (3 + 3 * llm_calls("guide"))


@pytest.mark.slow
def test_every_run_learns_for_itself_that_an_endpoint_refuses_a_system_role(
    serve: Serve, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The same judge model (one memoized instance) in two evals: the second run does
    not inherit the first's folding; it is refused again, learns it again, and says so."""
    simulator = serve(profile=get_profile("vllm", context=100_000, system_role=False))
    judge = simulator_model(simulator)
    refused: list[int] = []
    with caplog.at_level(logging.WARNING, logger="howtobench.judge.calls"):
        for run in ("first", "second"):
            [log] = run_eval(
                guide(dataset="demo"),
                tmp_path / run,
                judge,
                cache_dir=tmp_path / run / "cache",  # no reply kept for the second to read
                limit=1,
                model="replay/demo-writer-a",
            )
            assert all(isinstance(s.value, dict) for s in scores(log).values())
            refused.append(simulator.refused["system_role"])
    first, second = refused[0], refused[1] - refused[0]
    # a writing's questions (the negotiator and an expert per LLM leaf: 8 on the paper's
    # tree) start together, so up to all of them are refused before one returns
    questions = 1 + llm_calls("guide")
    assert 1 <= first <= questions and 1 <= second <= questions
    assert len(said(caplog, "howtobench.judge.calls", "refuses system messages")) == 2
    # each question answered once a run, each refused one sent again once, folded
    assert sum(simulator.calls.values()) == 2 * questions + refused[1]


@pytest.mark.slow
def test_every_run_is_told_once_that_no_judge_is_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A live writer and no grader, twice in one process: once per run. The second run
    builds its task inside the eval (by name, as `inspect eval` does), where the task's
    check meets the missing judge before any sample: the run's samples do not say it again."""
    writer = ScriptedJudge(answer=valid_reply, name="writer")
    words = "no judge bound: mockllm/writer will judge its own writing"
    with caplog.at_level(logging.WARNING, logger="howtobench.judge.models"):
        run_eval(guide(dataset="demo"), tmp_path / "first", model=writer.model(), limit=2)
        assert len(said(caplog, "howtobench.judge.models", words)) == 1
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "second-cache"))  # judge anew
        [log] = eval(
            "howtobench/guide",
            task_args={"dataset": "demo"},
            model=writer.model(),
            limit=2,
            log_dir=str(tmp_path / "second"),
            display="none",
        )
    assert log.status == "success"
    told = said(caplog, "howtobench.judge.models", words)
    assert len(told) == 2
    assert told[1].startswith(words)  # said by the task build: no sample id in front
    assert writer.count("negotiator") == 4  # both runs did judge with the writer


def test_a_failed_negotiation_is_asked_once_per_run_and_again_in_the_next(tmp_path: Path) -> None:
    """A negotiator that never answers with weights, two tasks over the same two
    instructions in two epochs (eight judgings): each instruction's question is asked
    once in a run, with its re-asks, and every other judging is unscored with its reason,
    said as not asked again. The failure is not kept in the reply store: the next run,
    with the same store, asks again."""
    judge = ScriptedJudge(
        lambda question: (
            "权重无法给出。" if question.kind == "negotiator" else valid_reply(question)
        )
    )
    for run in ("first", "second"):
        logs = run_eval(
            [guide(dataset="demo"), guide(dataset="demo", perturb="drop")],
            tmp_path / run,
            judge,
            cache_dir=tmp_path / "cache",  # one reply store for both runs
            model="replay/demo-writer-a",
            limit=2,
            epochs=2,
        )
        reasons = [
            str((sample.scores or {})["tow"].explanation)
            for log in logs
            for sample in log.samples or []
        ]
        assert len(reasons) == 8 and all("negotiator (mockllm/judge)" in r for r in reasons)
        assert sum("asked earlier in this run; not again" in r for r in reasons) == 8 - 2
    asks = [q.attempt for q in judge.questions if q.kind == "negotiator"]
    assert Counter(asks) == Counter(dict.fromkeys(range(1, TRIES + 1), 2 * 2))  # 2 runs
