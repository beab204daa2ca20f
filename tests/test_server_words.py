"""The server's own words, whatever shape its refusal takes, and a check that measures
the server: over real HTTP against the judge simulator, or against `support.odd_servers`
for the shapes the simulator does not play (plain-text and HTML error bodies, a redirect
loop).

- a 200 answer with an error object, a text or HTML error body, a redirect loop: quoted
  (or named) by `judge-check` and by the judge's calls in a run;
- `--time-limit` stops a judge that hangs, with the table of what was judged;
- `--max-connections` as the server sees it (requests in flight at once), and each
  call's time apart from its wait in the client;
- a server that reads only 1,024 tokens of a longer prompt: the probe and the unscored
  reason name the context settings, and the question is not asked again;
- a judge whose negotiator alone fails is told how it can serve without one.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from pathlib import Path

import pytest
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model

from howtobench.cli import main
from howtobench.dataset.jsonl import DEMO_FILE
from howtobench.judge.calls import generate_reply
from howtobench.judge.failures import CallFailed, JudgeUnavailable
from howtobench.judge.redirects import REDIRECTS_AT_MOST
from howtobench.judge_check.writings import build_tasks
from howtobench.simulator import Asked, Fault, Faults
from howtobench.simulator.faults import ERROR_OBJECT_MESSAGE
from howtobench.simulator.profiles import get_profile
from howtobench.vocabulary.words import replay_model
from support.evals import run_eval, scores
from support.judges import Serve, llm_calls
from support.odd_servers import HTML_502, REDIRECT_CHAIN, REDIRECT_LOOP, TEXT_500, odd_server

JUDGE = "grader=openai-api/sim/judge"
WRITER = "demo-writer-a"


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run `howtobench judge-check ARGS`: (exit status, stdout, stderr)."""
    status = main(["judge-check", *args])
    out, err = capsys.readouterr()
    return status, out, err


def point_at(monkeypatch: pytest.MonkeyPatch, base_url: str) -> None:
    monkeypatch.setenv("SIM_BASE_URL", base_url)
    monkeypatch.setenv("SIM_API_KEY", "none")


def ask_once(text: str = "请评分。", retries: int = 0) -> str:
    """One judge call as the scorers make it (`generate_reply`), with no retries unless
    asked."""
    model = get_model("openai-api/sim/judge", memoize=False)
    config = GenerateConfig(max_retries=retries, attempt_timeout=20, timeout=20)
    return asyncio.run(generate_reply(model, [ChatMessageUser(content=text)], config))


def guide_writings() -> list[str]:
    """The replayed writer's guide writings, in the demo file's order."""
    records = [json.loads(line) for line in DEMO_FILE.read_text().splitlines()]
    return [r["generations"][WRITER] for r in records if r["task"] == "guide"]


# --- the server's words ---------------------------------------------------------------


@pytest.mark.slow
def test_a_200_with_an_error_object_is_quoted_by_judge_check(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    serve(script=lambda question: Fault("error_object"))
    status, out, err = check(capsys, "--model-role", JUDGE, "--json")
    assert status == 1
    report = json.loads(out)
    plain = report["probes"]["plain"]
    assert plain["state"] == f"refused: HTTP 200: {ERROR_OBJECT_MESSAGE}"
    assert report["stopped"].endswith(
        f"refused a plain one-message request (HTTP 200: {ERROR_OBJECT_MESSAGE})"
    )
    assert "NoneType" not in out + err
    assert err.splitlines() == [f"howtobench judge-check: {report['stopped']}"]


@pytest.mark.slow
def test_a_200_with_an_error_object_is_the_unscored_reason_of_a_tow_run(
    serve: Serve, tmp_path: Path
) -> None:
    def script(question: Asked) -> Fault | None:
        return Fault("error_object") if question.kind == "emotion" else None

    simulator = serve(script=script)
    tasks = build_tasks("demo", WRITER, ["guide"])
    [log] = run_eval(tasks, tmp_path, simulator, model=replay_model(WRITER), limit=1)
    [score] = scores(log).values()
    assert not isinstance(score.value, dict)  # unscored
    said = f"the judge answered HTTP 200 with an error instead of a reply: {ERROR_OBJECT_MESSAGE}"
    assert said in str(score.explanation)
    assert simulator.calls["emotion"] == 3  # asked again (it may pass), then given up


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "said"),
    [("text_500", f"HTTP 500: {TEXT_500}"), ("html_502", "HTTP 502: 502 Bad Gateway")],
)
def test_text_and_html_error_bodies_are_quoted(
    mode: str,
    said: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    role = "grader={model: openai-api/sim/judge, max_retries: 0}"
    with odd_server(mode) as (_, base_url):
        point_at(monkeypatch, base_url)
        status, out, err = check(capsys, "--model-role", role, "--json")
        with pytest.raises(JudgeUnavailable) as ended:
            ask_once()
    report = json.loads(out)
    assert status == 1
    assert report["probes"]["plain"]["state"] == f"refused: {said}"
    assert report["probes"]["plain"]["answered"] is True  # it answered, with an error
    assert report["stopped"].endswith(f"refused a plain one-message request ({said})")
    assert "<" not in report["stopped"] and HTML_502 not in out
    # a run's call: the server answers even a tiny request with the same error
    assert f"every request, a tiny one too, got an error ({said})" in str(ended.value)


@pytest.mark.slow
def test_an_html_refusal_of_one_question_is_quoted(monkeypatch: pytest.MonkeyPatch) -> None:
    with odd_server("html_400") as (_, base_url):
        point_at(monkeypatch, base_url)
        with pytest.raises(CallFailed) as failed:
            ask_once()
    assert str(failed.value) == (
        "the judge refused the request (HTTP 400: Request rejected prompt & body too odd)"
    )
    assert failed.value.final


@pytest.mark.slow
def test_a_redirect_loop_is_named_after_a_handful_of_requests(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with odd_server(REDIRECT_LOOP) as (server, base_url):
        point_at(monkeypatch, base_url)
        # the role's default retries: the probes' own, then the SDK's
        status, out, err = check(capsys, "--model-role", "grader=openai-api/sim/judge")
        with pytest.raises(JudgeUnavailable) as ended:
            ask_once()
    chat = f"{base_url}/chat/completions"
    loop = f"the server redirects in a loop: {chat} -> {chat}/ -> {chat}"
    [line] = err.splitlines()
    assert status == 1 and line.startswith("howtobench judge-check: ") and loop in line
    assert "Connection error" not in line
    assert loop in str(ended.value) and "Check the base URL" in str(ended.value)
    # each run follows the loop once round (2 requests) and then sends nothing to it
    # (was 2,079 requests for one guide writing, 20 hops a request, retried by the SDK
    # and by inspect). The check and the call after it are two runs, or one where an
    # earlier test of the session left nest_asyncio's one event loop for the process
    round_trip = ["POST /v1/chat/completions", "POST /v1/chat/completions/"]
    assert server.requests in (round_trip, round_trip * 2)


@pytest.mark.slow
def test_a_run_against_a_redirect_loop_ends_after_a_round_per_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with odd_server(REDIRECT_LOOP) as (server, base_url):
        point_at(monkeypatch, base_url)
        tasks = build_tasks("demo", WRITER, ["guide"])
        roles = {"grader": "openai-api/sim/judge"}  # inspect's retries and the SDK's
        [log] = run_eval(tasks, tmp_path, model=replay_model(WRITER), roles=roles, limit=1,
                         status="error")  # fmt: skip
    assert log.error is not None and "the server redirects in a loop" in log.error.message
    # at most one round of the loop for each question asked before the first came back
    # (the negotiator and the guide's experts); none after (was 2,079 requests, 59 s)
    assert len(server.requests) <= 2 * (1 + llm_calls("guide"))


@pytest.mark.slow
def test_a_long_redirect_chain_stops_at_a_handful_of_hops(monkeypatch: pytest.MonkeyPatch) -> None:
    with odd_server(REDIRECT_CHAIN) as (server, base_url):
        point_at(monkeypatch, base_url)
        with pytest.raises(JudgeUnavailable) as ended:
            ask_once(retries=2)  # a retry sends nothing: the run has learnt the chain
    chat = f"{base_url}/chat/completions"
    chain = " -> ".join(chat + "/x" * hop for hop in range(REDIRECTS_AT_MOST + 2))
    assert f"the server redirects more than {REDIRECTS_AT_MOST} times: {chain}" in str(ended.value)
    assert len(server.requests) == REDIRECTS_AT_MOST + 1  # the request and its redirects, once


# --- the check's bounds ---------------------------------------------------------------


@pytest.mark.slow
def test_the_time_limit_stops_a_hanging_judge_with_the_partial_table(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    first = guide_writings()[0].strip()

    def script(question: Asked) -> Fault | None:
        # the first writing is judged; every question on the second hangs
        writing = (question.writing or "").strip()
        return Fault("hang") if writing and writing != first else None

    simulator = serve(script=script, faults=Faults(hang_seconds=120))
    started = time.monotonic()
    status, out, err = check(
        capsys, "--model-role", JUDGE, "--tasks", "guide", "--limit", "2", "--time-limit", "15"
    )
    took = time.monotonic() - started
    assert status == 1
    assert 15 <= took < 75  # stopped at the limit, not after the hung calls' timeouts
    lines = out.splitlines()
    assert lines[2].startswith("1 writing, 1 instruction, ")  # the judged one, no more
    rows = {line.split()[0]: line.split() for line in lines if line.split()[:1]}
    assert rows["logic"][1:5] == ["1", "1", "0", "0"]  # asked, at once, re-asked, unusable
    assert "verdict: not known, the check ran out of time:" in lines
    [said] = err.splitlines()
    assert said.startswith("howtobench judge-check: the check ran out of time (--time-limit 15 s)")
    assert "before it judged its 2 writings" in said
    assert simulator.faults_sent["hang"] >= 1


@pytest.mark.slow
def test_max_connections_bounds_the_requests_in_flight_and_latency_is_the_servers(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    one = serve(latency=0.3)
    status, out, err = check(
        capsys, "--model-role", JUDGE, "--tasks", "guide", "--limit", "1", "--json"
    )
    assert status == 0, err
    assert one.peak == 1  # the default: one request in flight at a time
    kinds = json.loads(out)["kinds"]
    assert all(0.3 <= k["median_latency_s"] < 3 for k in kinds.values())
    # the five questions of a writing are asked at once; four of them wait for the slot
    waits = sorted(k["median_wait_s"] for k in kinds.values())
    assert waits[0] < 0.3 <= waits[-2] < waits[-1]

    three = serve(latency=0.3)
    status, out, err = check(
        capsys, "--model-role", JUDGE, "--tasks", "guide", "--limit", "1",
        "--max-connections", "3",
    )  # fmt: skip
    assert status == 0, err
    assert 2 <= three.peak <= 3


def test_bad_bounds_are_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    point_at(monkeypatch, "http://127.0.0.1:9/v1")  # never reached
    for args, says in (
        (["--max-connections", "0"], "--max-connections 0: give the judge server's"),
        (["--time-limit", "0"], "--time-limit 0: give the check's seconds"),
    ):
        status, out, err = check(capsys, "--model-role", JUDGE, *args)
        assert status == 2 and out == ""
        [line] = err.splitlines()
        assert line.startswith("howtobench judge-check: error: ") and says in line


# --- a prompt the server did not read -------------------------------------------------


@pytest.mark.slow
def test_a_server_that_reads_1024_tokens_of_a_longer_prompt_is_named(
    serve: Serve, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    simulator = serve(profile=get_profile("ollama", context=1024, usage_read=True))
    status, out, err = check(
        capsys, "--model-role", JUDGE, "--tasks", "guide", "--limit", "1", "--json"
    )
    report = json.loads(out)
    long = report["probes"]["long_prompt"]
    assert long["accepted"] is False and long["answered"] is True and long["cut"] is True
    assert long["state"].startswith("answered, but read 1,024 of at least ")
    assert status == 1
    [reason] = report["reasons"]  # the demo's short prompts fit; the benchmark's would not
    assert reason.startswith("the server read 1,024 of at least ")
    assert "num_ctx" in reason and "--ctx-size" in reason and "--max-model-len" in reason
    assert simulator.truncated >= 1

    # in a run, with a context too small for the demo's prompts: the reason is recorded,
    # and the question is not asked again
    cut = serve(profile=get_profile("ollama", context=512, usage_read=True))
    tasks = build_tasks("demo", WRITER, ["guide"])
    [log] = run_eval(tasks, tmp_path, cut, model=replay_model(WRITER), limit=1)
    [score] = scores(log).values()
    assert not isinstance(score.value, dict)
    assert "read 512 prompt tokens of a prompt of at least" in str(score.explanation)
    assert "not asked again" in str(score.explanation)
    assert "num_ctx" in str(score.explanation)
    asked = Counter(r.segments for r in cut.requests if r.truncated)
    assert asked and set(asked.values()) == {1}  # each cut prompt sent once


@pytest.mark.slow
def test_a_server_counting_only_uncached_prompt_tokens_is_read_whole(
    serve: Serve, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server that counts only the prompt tokens past the prefix it reused (Ollama
    0.30.x) reports a fraction of every leaf prompt after the first, since ToW's leaf
    prompts share their start: its replies are scored, and the run says once what the
    server does. Cut to a context as well, a prompt is still named cut."""
    simulator = serve(profile=get_profile("ollama", uncached_usage=True))
    tasks = build_tasks("demo", WRITER, ["guide"])
    [log] = run_eval(tasks, tmp_path / "uncached", simulator, model=replay_model(WRITER))
    judged = scores(log)
    assert judged and all(isinstance(score.value, dict) for score in judged.values())
    said = [r.message for r in caplog.records if "counts only the prompt tokens past" in r.message]
    assert len(said) == 1

    cut = serve(profile=get_profile("ollama", context=512, usage_read=True, uncached_usage=True))
    [log] = run_eval(tasks, tmp_path / "cut", cut, model=replay_model(WRITER), limit=1)
    [score] = scores(log).values()
    assert not isinstance(score.value, dict)
    assert "read 512 prompt tokens of a prompt of at least" in str(score.explanation)


# --- a judge whose negotiator alone fails ---------------------------------------------


@pytest.mark.slow
def test_a_failing_negotiator_alone_is_told_how_the_judge_can_serve(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(question: Asked) -> str | None:
        return "权重无法给出。" if question.kind == "negotiator" else None

    serve(script=script)
    status, out, err = check(capsys, "--model-role", JUDGE, "--tasks", "guide", "--limit", "2")
    assert status == 1
    [line] = err.splitlines()
    assert "negotiator: usable in 0 of 2 asks" in line
    assert "its experts are usable, so it can serve without negotiating" in line
    assert "-T weights=uniform" in line and "howtobench plan export" in line
    assert 'docs/large-runs.md, "Scale out"' in line


@pytest.mark.slow
def test_a_failing_expert_gets_no_such_advice(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(question: Asked) -> str | None:
        return "无法评分。" if question.kind in ("negotiator", "logic") else None

    serve(script=script)
    status, out, err = check(capsys, "--model-role", JUDGE, "--tasks", "guide", "--limit", "1")
    assert status == 1 and "negotiator: usable in 0 of 1 asks" in err
    assert "weights=uniform" not in out + err
