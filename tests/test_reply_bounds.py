"""Judge replies bounded, through the real stack (inspect, the openai client, HTTP, the
simulator): every judge request carries `max_tokens`, a reply past the size a judge may
give is refused with its size named and never sent back, and an unusable reply is sent
back in its re-ask by its last part only."""

from __future__ import annotations

from pathlib import Path

import pytest

from howtobench import guide
from howtobench.judge.defaults import ECHOED_REPLY, JUDGE_MAX_TOKENS, LONGEST_REPLY
from howtobench.judge.reply_size import body_limit
from howtobench.simulator import Asked, Fault
from howtobench.simulator.server import Request
from support.evals import run_eval, scores
from support.judges import Serve, simulator_model

# The leaves this file's judge answers badly, each its own way
RUNAWAY, HUGE, RAMBLING = "logic", "rhetoric", "emotion"
HUGE_REPLY = "好" * (LONGEST_REPLY + 50_000)  # a whole reply, past the characters allowed
RAMBLE = "我先想一想这篇作品。" * 1_000  # 10,000 characters and no JSON: unusable


def misbehaving(question: Asked) -> str | Fault | None:
    """A body without end for one leaf, a whole reply too long for another, a long
    unusable reply for a third the first time (then the simulator's own valid reply)."""
    if question.kind == RUNAWAY:
        return Fault("runaway")
    if question.kind == HUGE:
        return HUGE_REPLY
    if question.kind == RAMBLING and question.attempt == 1:
        return RAMBLE
    return None


def asked(simulator_requests: list[Request], kind: str) -> list[Request]:
    return [r for r in simulator_requests if r.kind == kind]


@pytest.mark.slow
def test_a_runaway_or_huge_reply_is_refused_by_its_size_and_not_sent_back(
    serve: Serve, tmp_path: Path
) -> None:
    simulator = serve(script=misbehaving, record=True)
    [log] = run_eval(
        guide(dataset="demo"), tmp_path, simulator, model="replay/demo-writer-a", limit=1
    )
    [score] = scores(log).values()
    reason = str(score.explanation)
    # the body without end: read no further than its bound, which the reason names
    assert f"ran past {body_limit('application/json'):,} bytes" in reason
    # the whole reply too long: refused by its characters, named; not the context's fault
    assert f"has {len(HUGE_REPLY):,} characters, more than the {LONGEST_REPLY:,}" in reason
    assert "context" not in reason
    requests = simulator.requests
    runaway, huge = asked(requests, RUNAWAY), asked(requests, HUGE)
    assert [r.fault for r in runaway] == ["runaway"] * 3  # asked its three tries
    assert len(huge) == 3
    # no re-ask sent a refused reply back: each is the question as first asked
    for request in runaway + huge:
        assert [s.role for s in request.segments if s.role == "assistant"] == []
    # the long unusable reply went back by its last part, saying what was left out
    first, again = asked(requests, RAMBLING)
    [echo] = [s.text for s in again.segments if s.role == "assistant"]
    left_out = len(RAMBLE) - ECHOED_REPLY
    assert echo.startswith(f"（你的回复开头的 {left_out:,} 个字符在此略去）\n")
    assert echo.endswith(RAMBLE[-ECHOED_REPLY:])
    assert len(echo) < ECHOED_REPLY + 100
    assert not any(s.role == "assistant" for s in first.segments)
    # the other questions were answered as usual, and every judge request was bounded
    leaves = score.metadata["leaves"]
    assert leaves["opening_ending"]["judges"][0]["score"] is not None
    assert leaves[RAMBLING]["judges"][0]["score"] is not None  # its re-ask answered
    assert {r.max_tokens for r in requests if r.kind != "writer"} == {JUDGE_MAX_TOKENS}


@pytest.mark.slow
def test_judge_requests_carry_max_tokens_the_roles_own_wins(serve: Serve, tmp_path: Path) -> None:
    """4,096 by default, the paper code's; the role's own `max_tokens` wins; the eval's
    `--max-tokens` is the writer's, which inspect does not pass on to the grader role; a
    kept reply answers whatever the limit."""
    simulator = serve(record=True)
    data = "demo"
    run_eval(guide(dataset=data), tmp_path / "a", simulator, model="replay/demo-writer-a", limit=1)
    assert {r.max_tokens for r in simulator.requests} == {JUDGE_MAX_TOKENS}
    kinds = {r.kind for r in simulator.requests}
    assert {"negotiator", "logic", "impression"} <= kinds
    simulator.requests.clear()
    own = simulator_model(simulator, max_tokens=16_384)
    run_eval(
        guide(dataset=data, scorers="rubric"),
        tmp_path / "b",
        own,
        model="replay/demo-writer-a",
        limit=1,
        max_tokens=100,  # the writer's: a replay writer has no use for it
    )
    assert [r.max_tokens for r in simulator.requests] == [16_384]
    simulator.requests.clear()
    rubric = guide(dataset=data, scorers="rubric")
    run_eval(rubric, tmp_path / "c", simulator, model="replay/demo-writer-a", limit=1)
    # the reply kept at 16,384 answers at 4,096: it finished within its limit
    assert simulator.requests == []
    fresh = tmp_path / "fresh-store"
    run_eval(
        rubric,
        tmp_path / "d",
        simulator,
        model="replay/demo-writer-a",
        limit=1,
        cache_dir=fresh,
        max_tokens=100,  # the writer's, again: not the grader's
    )
    assert [r.max_tokens for r in simulator.requests] == [JUDGE_MAX_TOKENS]
