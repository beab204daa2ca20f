"""Judging in batch mode, offline: the simulator's batch APIs, ToW judged through inspect's
OpenAI and Anthropic batchers, and the bounded wait.

A judge batches only with its own settings (`--model-role 'grader={model: ..., batch:
...}'`; inspect's `--batch` reaches the evaluated model alone), and inspect polls a batch
with no bound: these tests check that every judge call really went through a batch
(the simulator counts them), that each was answered as it would be directly, and that a
batch that never ends, or an endpoint without a batch API, ends the run with one line
within `HOWTOBENCH_BATCH_WAIT`.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from inspect_ai import eval_retry
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import GenerateConfig, compute_model_cost, get_model

from howtobench import guide, open_writing
from howtobench.cli import main
from howtobench.judge import lost_batches
from howtobench.judge.batching import BATCH_WAIT_VARIABLE, batch_wait
from howtobench.judge.defaults import DEFAULT_BATCH_WAIT, JUDGE_ATTEMPT_TIMEOUT
from howtobench.judge.lost_batches import LOST_WITH_BATCH
from howtobench.judge.prices import load_prices
from howtobench.judge.settings import judge_config
from howtobench.simulator import Faults
from howtobench.simulator.protocol import Asked
from howtobench.simulator.server import Fault, JudgeSimulator
from howtobench.studies.token_costs import cost
from howtobench.tree.spec import LEAVES
from howtobench.vocabulary.errors import UserError
from support.evals import run_eval, scores
from support.judges import Serve, batch_judge, llm_calls

EXPERTS = [leaf.id for leaf in LEAVES if leaf.judge == "llm"]
# a run over the demo's 4 open writings of demo-writer-a: one negotiator call and each
# expert's per writing, all in one batch
OPEN_CALLS = 4 * (1 + llm_calls("open"))
# Each API: the grader, the model arguments, the environment variables' prefix, the base
# URL it takes, and the route its requests name inside a batch. Under `openai/` an
# unknown model name is taken for a newest (GPT-5 class) model, which gets the Responses
# API and a `developer` system prompt; gpt-4o-mini gets chat completions, stated anyway.
APIS: dict[str, tuple[str, dict[str, Any], str, str]] = {
    "anthropic": ("anthropic/claude-sim-judge", {}, "ANTHROPIC", "/v1/messages"),
    "openai": ("openai/gpt-4o-mini", {"responses_api": False}, "OPENAI", "/v1/chat/completions"),
}
BATCH_ID = {"anthropic": r"msgbatch_sim\d+", "openai": r"batch_sim\d+"}
PRICES = (
    "{model}:\n  input: 2.0\n  output: 8.0\n  input_cache_write: 2.5\n  input_cache_read: 0.5\n"
)


def point_at(api: str, simulator: JudgeSimulator, monkeypatch: pytest.MonkeyPatch) -> None:
    """The provider's SDK talks to the simulator (Anthropic's base URL has no /v1)."""
    _, _, service, _ = APIS[api]
    url = simulator.root_url if api == "anthropic" else simulator.base_url
    monkeypatch.setenv(f"{service}_BASE_URL", url)
    monkeypatch.setenv(f"{service}_API_KEY", "none")


def judged_in_batches(
    api: str,
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    folder: Path,
    *,
    size: int = 100,
    max_size: int | None = None,
    task: str = "open",
    status: str = "success",
    **options: Any,
) -> tuple[EvalLog, JudgeSimulator, float]:
    """The demo's open (or guide) writings of demo-writer-a, judged in batches through
    `api`: the log, the simulator and the seconds the run took."""
    grader, args, _, _ = APIS[api]
    simulator = serve(**options)
    point_at(api, simulator, monkeypatch)
    build = open_writing if task == "open" else guide
    start = time.monotonic()
    [log] = run_eval(
        build(dataset="demo"),
        folder,
        batch_judge(grader, size=size, max_size=max_size, **args),
        status=status,
        model="replay/demo-writer-a",
    )
    return log, simulator, time.monotonic() - start


def one_line(log: EvalLog) -> str:
    assert log.status == "error" and log.error is not None
    message = log.error.message.strip()
    assert "\n" not in message
    return message


# --- the simulator's batch APIs, read by the providers' own SDKs --------------------------


def test_openai_batches_are_answered_as_direct_calls(serve: Serve) -> None:
    simulator = serve()
    client = openai.OpenAI(base_url=simulator.base_url, api_key="none")
    body = {"model": "m", "messages": [{"role": "user", "content": "写一首短诗。"}]}
    direct = client.chat.completions.create(**body)  # type: ignore[call-overload]
    lines = [
        {"custom_id": f"r{i}", "method": "POST", "url": "/v1/chat/completions", "body": body}
        for i in range(3)
    ]
    upload = client.files.create(
        file=("in.jsonl", "\n".join(map(json.dumps, lines)).encode()),
        purpose="batch",
    )
    batch = client.batches.create(
        input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h"
    )
    for _ in range(50):
        batch = client.batches.retrieve(batch.id)
        if batch.status == "completed":
            break
        time.sleep(0.05)
    assert batch.status == "completed" and batch.output_file_id
    assert batch.request_counts is not None and batch.request_counts.completed == 3
    results = [
        json.loads(line) for line in client.files.content(batch.output_file_id).text.splitlines()
    ]
    assert sorted(r["custom_id"] for r in results) == ["r0", "r1", "r2"]
    for result in results:
        assert result["error"] is None and result["response"]["status_code"] == 200
        reply = openai.types.chat.ChatCompletion.model_validate(result["response"]["body"])
        assert reply.choices[0].message.content == direct.choices[0].message.content
    assert simulator.calls == {"writer": 4} and simulator.batched == {"openai": 3}
    assert simulator.stats()["batches"] == {"openai": 1}
    assert [r.batch for r in simulator.requests] == [None] + [batch.id] * 3
    assert [b.id for b in client.batches.list(limit=5)] == [batch.id]


def test_anthropic_batches_are_answered_as_direct_calls(serve: Serve) -> None:
    simulator = serve()
    client = anthropic.Anthropic(base_url=simulator.root_url, api_key="none")
    params: dict[str, Any] = {
        "model": "m",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "写一首短诗。"}],
    }
    direct = client.messages.create(**params)
    batch = client.messages.batches.create(
        requests=[{"custom_id": f"r{i}", "params": params} for i in range(2)]  # type: ignore[misc]
    )
    assert batch.processing_status == "in_progress" and batch.request_counts.processing == 2
    for _ in range(50):
        batch = client.messages.batches.retrieve(batch.id)
        if batch.processing_status == "ended":
            break
        time.sleep(0.05)
    assert batch.processing_status == "ended" and batch.request_counts.succeeded == 2
    results = list(client.messages.batches.results(batch.id))
    assert sorted(r.custom_id for r in results) == ["r0", "r1"]
    for result in results:
        assert result.result.type == "succeeded"
        assert result.result.message.content == direct.content
    assert simulator.calls == {"writer": 3} and simulator.batched == {"anthropic": 2}
    assert simulator.stats()["batches"] == {"anthropic": 1}


def test_batches_that_never_end_and_servers_without_batch_apis(serve: Serve) -> None:
    stuck = serve(batch_delay=math.inf)
    client = anthropic.Anthropic(base_url=stuck.root_url, api_key="none")
    params: dict[str, Any] = {
        "model": "m",
        "max_tokens": 9,
        "messages": [{"role": "user", "content": "x"}],
    }
    batch = client.messages.batches.create(requests=[{"custom_id": "a", "params": params}])  # type: ignore[misc]
    time.sleep(0.3)
    assert client.messages.batches.retrieve(batch.id).processing_status == "in_progress"
    assert stuck.batch_ids(unfinished=True) == [batch.id] and stuck.calls == {}
    cancelled = client.messages.batches.cancel(batch.id)
    assert cancelled.processing_status == "ended" and cancelled.request_counts.canceled == 1

    none = serve(batch_api=False)
    with pytest.raises(openai.NotFoundError, match="no batch API"):
        openai.OpenAI(base_url=none.base_url, api_key="none").files.create(
            file=("in.jsonl", b"{}"), purpose="batch"
        )
    with pytest.raises(anthropic.NotFoundError, match="no batch API"):
        anthropic.Anthropic(base_url=none.root_url, api_key="none").messages.batches.list()
    assert none.calls == {} and none.stats()["batches"] == {}


# --- the wait and the judge's settings -------------------------------------------------------


def test_batch_wait_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(BATCH_WAIT_VARIABLE, raising=False)
    assert batch_wait() == DEFAULT_BATCH_WAIT == 24 * 3600
    monkeypatch.setenv(BATCH_WAIT_VARIABLE, "90.5")
    assert batch_wait() == 90.5
    monkeypatch.setenv(BATCH_WAIT_VARIABLE, "inf")
    assert batch_wait() == math.inf
    for bad in ("0", "-3", "soon", "nan"):
        monkeypatch.setenv(BATCH_WAIT_VARIABLE, bad)
        with pytest.raises(UserError, match=BATCH_WAIT_VARIABLE):
            batch_wait()


def test_a_batched_judge_gets_no_attempt_timeout_of_ours(monkeypatch: pytest.MonkeyPatch) -> None:
    """inspect's attempt timeout also cuts a batched call: at 180 s every question would
    be abandoned and queued again in a new batch while the first one runs. A provider
    that never batches (`openai-api/...`) keeps it, `batch` setting or not."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "none")
    monkeypatch.setenv("SIM_API_KEY", "none")
    monkeypatch.setenv("SIM_BASE_URL", "http://127.0.0.1:9/v1")
    direct = get_model("anthropic/claude-sim-judge", memoize=False)
    assert judge_config(direct, None, 0.0).attempt_timeout == JUDGE_ATTEMPT_TIMEOUT
    in_batches = batch_judge("anthropic/claude-sim-judge")
    assert judge_config(in_batches, None, 0.0).attempt_timeout is None
    own = get_model(
        "anthropic/claude-sim-judge",
        config=GenerateConfig(batch=True, attempt_timeout=7),
        memoize=False,
    )
    assert judge_config(own, None, 0.0).attempt_timeout == 7
    never = batch_judge("openai-api/sim/judge")
    assert judge_config(never, None, 0.0).attempt_timeout == JUDGE_ATTEMPT_TIMEOUT


# --- ToW judged in batches -----------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("api", list(APIS))
def test_tow_is_judged_through_each_batch_api(
    api: str, serve: Serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    grader, args, _, route = APIS[api]
    simulator = serve()
    point_at(api, simulator, monkeypatch)
    tasks = [
        guide(dataset="demo"),
        open_writing(dataset="demo"),
    ]
    start = time.monotonic()
    logs = run_eval(
        tasks, tmp_path / "logs", batch_judge(grader, **args), model="replay/demo-writer-a"
    )
    took = time.monotonic() - start
    assert took < 45

    # every writing scored: 3 guide and 4 open
    assert [len(log.samples or []) for log in logs] == [3, 4]
    for log in logs:
        assert all(isinstance(s.value, dict) for s in scores(log).values())

    # ToW's calls: each expert per writing, 1 negotiator per instruction, all in batches
    writings = 3 + 4
    assert simulator.calls == {"negotiator": writings, **dict.fromkeys(EXPERTS, writings)}
    calls = sum(simulator.calls.values())
    assert calls == writings * (1 + len(EXPERTS))  # the negotiator and each expert
    stats = simulator.stats()
    assert stats["batched"] == {api: calls} and stats["batches"][api] >= 1
    assert all(r.batch is not None for r in simulator.requests)  # no direct chat call
    assert {(r.api, r.path) for r in simulator.requests} == {(api, route)}
    assert set(simulator.batch_ids()) == {r.batch for r in simulator.requests}

    # the cost study prices them as batch calls: half the standard rate by default
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES.format(model=grader))
    table = cost([tmp_path / "logs"], prices).tables["usage"]
    standard = load_prices(prices)[grader].standard
    for row, log in zip(table.to_dict("records"), logs, strict=True):
        usage = log.stats.role_usage["grader"]
        assert (row["role"], row["model"], row["batch"]) == ("grader", grader, True)
        assert row["dollars"] == pytest.approx(compute_model_cost(standard, usage) / 2)


@pytest.mark.slow
@pytest.mark.parametrize(
    "api",
    [
        "anthropic",
        pytest.param(
            "openai",
            marks=pytest.mark.nightly(
                "in CI test_openai_requests_refused_in_batches_cost_only_their_samples runs "
                "this eval and checks the same, and more"
            ),
        ),
    ],
)
def test_a_request_refused_inside_a_batch_costs_only_its_sample(
    api: str, serve: Serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A 400 for one writing's logic question comes back as that request's error in the
    batch results (each API's own shape); the other writings are scored, and no request
    is sent twice. (inspect gives an errored Anthropic batch result the class of its error
    type but status 500, which `_classified` once took for an outage that ends the run;
    inspect's OpenAI batcher fails the whole batch on the error line, whose answers are
    then read back from the batch's files: `howtobench.judge.lost_batches`.)"""

    def script(question: Asked) -> Fault | None:
        refused = question.kind == "logic" and "菜市场" in (question.writing or "")
        return Fault("400") if refused else None

    log, simulator, _ = judged_in_batches(api, serve, monkeypatch, tmp_path, script=script)
    assert simulator.faults_sent == {"400": 1} and simulator.batched[api] == OPEN_CALLS
    judged = scores(log)
    broken = judged.pop("demo_open_1")
    assert broken.reason == "grader_failed" and "HTTP 400" in str(broken.explanation)
    assert all(isinstance(s.value, dict) for s in judged.values()) and len(judged) == 3


# --- the bound: a batch that never ends, an endpoint without a batch API ----------------


@pytest.mark.slow
@pytest.mark.parametrize("api", list(APIS))
def test_a_batch_that_never_ends_stops_the_run_within_the_wait(
    api: str, serve: Serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(BATCH_WAIT_VARIABLE, "3")
    log, simulator, took = judged_in_batches(
        api, serve, monkeypatch, tmp_path, status="error", batch_delay=math.inf
    )
    assert took < 25  # the wait, plus starting and closing the eval
    message = one_line(log)
    url = simulator.root_url if api == "anthropic" else simulator.base_url
    assert f"judge {APIS[api][0]} at {url}: batch " in message
    [stuck] = simulator.batch_ids(unfinished=True)
    assert re.findall(BATCH_ID[api], message) == [stuck]
    assert f"did not finish within {BATCH_WAIT_VARIABLE}=3 s" in message
    assert "inspect eval-retry" in message
    assert simulator.calls == {}  # the provider never worked on it


@pytest.mark.slow
@pytest.mark.parametrize("api", list(APIS))
def test_an_endpoint_without_a_batch_api_stops_the_run_at_once(
    api: str, serve: Serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log, simulator, took = judged_in_batches(
        api, serve, monkeypatch, tmp_path, status="error", batch_api=False
    )
    assert took < 20  # no polling, no retries
    message = one_line(log)
    url = simulator.root_url if api == "anthropic" else simulator.base_url
    assert f"judge {APIS[api][0]} at {url} runs in batch mode, but it has no batch API" in message
    assert "HTTP 404" in message
    assert simulator.calls == {} and simulator.batches == {}


@pytest.mark.slow
def test_after_an_unfinished_batch_eval_retry_asks_only_the_unanswered(
    serve: Serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """One request per batch; the batches of one writing's expert questions hang. The run
    stops at the wait naming exactly those batches; the retry asks those questions again
    and nothing else (the writing's weights, answered in a batch that ended, are kept)."""
    monkeypatch.setenv(BATCH_WAIT_VARIABLE, "4")
    hanging = {"on": True}
    lock = threading.Lock()
    hung: set[str] = set()

    def script(question: Asked) -> Fault | None:
        if hanging["on"] and "菜市场" in (question.writing or ""):
            with lock:
                hung.add(question.kind)
            return Fault("hang")
        return None

    log, simulator, _ = judged_in_batches(
        "anthropic",
        serve,
        monkeypatch,
        tmp_path,
        size=1,
        max_size=1,
        status="error",
        script=script,
        faults=Faults(hang_seconds=60),  # far beyond the wait and the test
    )
    assert hung <= set(EXPERTS)
    stuck = set(simulator.batch_ids(unfinished=True))
    assert set(re.findall(BATCH_ID["anthropic"], one_line(log))) == stuck
    assert len(stuck) == len(hung) == len(EXPERTS)
    answered = Counter(simulator.questions)

    hanging["on"] = False
    [retried] = eval_retry(log, log_dir=str(tmp_path), display="none")
    assert retried.status == "success"
    assert all(isinstance(s.value, dict) for s in scores(retried).values())
    asked_again = Counter(simulator.questions) - answered
    assert sorted(kind for kind, _ in asked_again) == sorted(EXPERTS)
    assert all("菜市场" in writing for _, writing in asked_again)
    assert all(count == 1 for count in asked_again.values())


# --- OpenAI: batches that inspect fails as a whole ------------------------------------------


@pytest.mark.slow
def test_openai_requests_refused_in_batches_cost_only_their_samples(
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A request refused (HTTP 400) inside a batch: inspect fails every batch that holds
    one, and the questions asked again went into new batches that failed the same way
    (issue 27 measured three rounds, 210 requests billed, nothing scored, at one request
    in ten refused). Read back from the batches' own files, every question is sent once,
    the refused one costs its sample alone, with the provider's error and its batch
    named, the others are scored, and `check-logs` passes the log: asking a refused
    question again would not help. The judge refuses by what is asked (the logic
    question of one writing), not by the order the batch's requests arrive in."""

    def script(question: Asked) -> Fault | None:
        refused = question.kind == "logic" and "菜市场" in (question.writing or "")
        return Fault("400") if refused else None

    log, simulator, _ = judged_in_batches("openai", serve, monkeypatch, tmp_path, script=script)
    assert simulator.faults_sent == {"400": 1}
    assert set(Counter(simulator.questions).values()) == {1}  # no question sent twice
    assert simulator.batched["openai"] == sum(simulator.calls.values()) == OPEN_CALLS
    judged = scores(log)
    unscored = {key: s for key, s in judged.items() if not isinstance(s.value, dict)}
    assert list(unscored) == ["demo_open_1"] and len(judged) == 4  # the other three scored
    for score in unscored.values():
        assert score.reason == "grader_failed" and "HTTP 400" in str(score.explanation)
        assert re.search(r"of batch batch_sim\d+", str(score.explanation))
    capsys.readouterr()
    assert main(["check-logs", str(log.location)]) == 0


@pytest.mark.slow
def test_a_lost_batch_that_cannot_be_read_back_is_named_and_fails_check_logs(
    serve: Serve,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """When the lost batch's files cannot be read (here the files API fails), every
    question of it is left unscored with a reason that names the batch, its id, what
    inspect raised and the refused request's error, none is asked again in the run, and
    `check-logs` exits 1 with a line saying a rerun can score them. The re-score the
    reason names asks each lost question once more; its batch is lost again (the 400
    still comes), but read back this time: the refused question costs its sample alone,
    and `check-logs` passes (asking a refused question again would not help)."""

    async def unreadable(client: object, batch_id: str) -> object:
        raise OSError("the files API is down")

    def script(question: Asked) -> Fault | None:
        refused = question.kind == "logic" and "菜市场" in (question.writing or "")
        return Fault("400") if refused else None

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lost_batches, "_batch_files", unreadable)
        log, simulator, _ = judged_in_batches("openai", serve, monkeypatch, tmp_path, script=script)
    assert simulator.faults_sent == {"400": 1} and simulator.batched["openai"] == OPEN_CALLS
    [lost] = simulator.batch_ids()  # every question of the run, weights and experts
    judged = scores(log)
    assert judged and all(not isinstance(s.value, dict) for s in judged.values())
    for score in judged.values():
        reason = str(score.explanation)
        assert (
            LOST_WITH_BATCH in reason and f"OpenAI batch {lost} of {OPEN_CALLS} requests" in reason
        )
        assert "inspect raised ValidationError" in reason
        assert "the first failed request: the provider's error" in reason
        assert "the files API is down" in reason and "A rerun asks" in reason

    capsys.readouterr()
    assert main(["check-logs", str(log.location)]) == 1
    line, summary = capsys.readouterr().out.splitlines()
    assert line.startswith(f"{log.location}: success: 4 score(s) left unscored, a rerun")
    assert summary == "1 of 1 run(s) left samples unscored with their lost batch"

    # the re-score the reason names, with the judge answering everything now
    grader, args, _, _ = APIS["openai"]
    role = {
        "model": grader,
        "model_args": args,
        "batch": {"size": OPEN_CALLS, "send_delay": 0.5, "tick": 0.2},
    }
    rescore = [
        *("inspect", "score", str(log.location), "--scorer", "howtobench/tow"),
        *("--action", "overwrite", "--overwrite", "--display", "none"),
        *("--model-role", f"grader={json.dumps(role)}"),
    ]
    done = subprocess.run(
        rescore, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert simulator.batched["openai"] == 2 * OPEN_CALLS  # each lost question asked once more
    rescored = scores(read_eval_log(str(log.location)))
    broken = rescored.pop("demo_open_1")
    assert "HTTP 400" in str(broken.explanation) and LOST_WITH_BATCH not in str(broken.explanation)
    assert len(rescored) == 3 and all(isinstance(s.value, dict) for s in rescored.values())
    capsys.readouterr()
    assert main(["check-logs", str(log.location)]) == 0
