"""The judge against each server it is pointed at, played by the simulator's profiles.

First the profiles themselves over HTTP (each refuses in its own status and error body,
adds its own reply fields, and `openai` stays the simulator as it always was); then ToW
through inspect against each of them: every writing the server would answer is scored,
a writing over a small context costs only itself, and a deterministic judge that fails
the negotiator at temperature 0 changes its answer when the re-ask is sampled.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog

from howtobench import guide
from howtobench.judge.defaults import JUDGE_MAX_TOKENS
from howtobench.simulator import PROFILES, Asked, Fault, JudgeSimulator, get_profile
from howtobench.simulator.process import served
from howtobench.simulator.wire import THINK_TEXT
from howtobench.tree.prompts import tree_prompt
from howtobench.tree.spec import LEAVES, tree_for
from support.data import demo_record, write_jsonl
from support.evals import run_eval, scores
from support.judges import Serve, simulator_model

LLM_LEAVES = [leaf.id for leaf in LEAVES if leaf.judge == "llm"]
SYSTEM = {"role": "system", "content": "你是评审。"}
PARTS = {
    "role": "user",
    "content": [{"type": "text", "text": "材料"}, {"type": "text", "text": "问题"}],
}


def post(simulator: JudgeSimulator, body: dict[str, Any]) -> tuple[int, Any]:
    """POST a chat request; the status and the JSON body, whatever the status."""
    request = urllib.request.Request(
        f"{simulator.base_url}/chat/completions",
        json.dumps({"model": "judge", **body}).encode(),
        {"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def message(body: Any) -> str:
    """The error message, wherever the server's body puts it."""
    inner = body.get("error", body)
    return inner if isinstance(inner, str) else str(inner["message"])


LONG_PROMPT = [SYSTEM, {"role": "user", "content": "长" * 400}]  # 13 + 406 characters: 210 tokens
REFUSALS = [
    # (profile, changes, request, status, words of the message, a field of the body)
    (
        "llama-cpp-python",
        {},
        {"messages": [SYSTEM, PARTS]},
        500,
        'can only concatenate str (not "list") to str',
        ("error", "type", "internal_server_error"),
    ),
    (
        "openai",
        {"context": 200},
        {"messages": LONG_PROMPT},
        400,
        "maximum context length is 200 tokens",
        ("error", "code", "context_length_exceeded"),
    ),
    (
        "vllm",
        {"context": 200},
        {"messages": LONG_PROMPT},
        400,
        "maximum context length is 200 tokens. However, your request has 210 input tokens",
        ("error", "code", 400),
    ),
    (
        "sglang",
        {"context": 200},
        {"messages": LONG_PROMPT},
        400,
        "The input (210 tokens) is longer than the model's context length (200 tokens).",
        ("object", None, "error"),
    ),
    (
        "llama-cpp",
        {"context": 200},
        {"messages": LONG_PROMPT},
        400,
        "request (210 tokens) exceeds the available context size (200 tokens)",
        ("error", "n_ctx", 200),
    ),
    (
        "llama-cpp-python",
        {"context": 200},
        {"messages": LONG_PROMPT},
        400,
        "maximum context length is 200 tokens. However, you requested 210 tokens",
        ("error", "code", "context_length_exceeded"),
    ),
    (
        "lmstudio",
        {"context": 200},
        {"messages": LONG_PROMPT},
        400,
        "greater than the context length (n_keep: 210>= n_ctx: 200)",
        ("error", None, str),
    ),
    (
        "tgi",
        {"context": 200},
        {"messages": LONG_PROMPT},
        422,
        "`inputs` tokens + `max_new_tokens` must be <= 200",
        ("error_type", None, "validation"),
    ),
    (
        "tgi-1",
        {},
        {"messages": [SYSTEM], "temperature": 0.0},
        422,
        "`temperature` must be strictly positive",
        ("error_type", None, "validation"),
    ),
    (
        "vllm",
        {"context": 300},
        {"messages": LONG_PROMPT, "max_tokens": 200},
        400,
        "'max_tokens' or 'max_completion_tokens' is too large: 200",
        ("error", "type", "BadRequestError"),
    ),
    (
        "vllm",
        {"system_role": False},
        {"messages": [SYSTEM, PARTS]},
        400,
        "System role not supported",
        ("error", "code", 400),
    ),
    (
        "llama-cpp",
        {},
        {"messages": [SYSTEM], "n": 2},
        500,
        "Only one completion choice is allowed",
        ("error", "type", "server_error"),
    ),
    (
        "tgi",
        {},
        {"messages": [SYSTEM], "stop": list("abcde")},
        422,
        "`stop` supports up to 4 stop sequences. Given: 5",
        ("error_type", None, "validation"),
    ),
]


@pytest.mark.parametrize(("name", "changes", "request_body", "status", "words", "shape"), REFUSALS)
def test_each_server_refuses_in_its_own_status_and_error_body(
    name: str,
    changes: dict[str, Any],
    request_body: dict[str, Any],
    status: int,
    words: str,
    shape: tuple[str, str | None, Any],
) -> None:
    with JudgeSimulator(profile=get_profile(name, **changes)) as simulator:
        got, body = post(simulator, request_body)
        assert sum(simulator.refused.values()) == 1 and not simulator.faults_sent
    assert got == status
    assert words in message(body)
    key, inner, expected = shape
    value = body[key] if inner is None else body[key][inner]
    assert isinstance(value, expected) if isinstance(expected, type) else value == expected


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_each_server_answers_what_it_accepts_with_its_own_reply_fields(name: str) -> None:
    profile = PROFILES[name]
    with JudgeSimulator(profile=name) as simulator:
        got, body = post(
            simulator,
            {
                "messages": [SYSTEM, {"role": "user", "content": "写吧"}],
                "temperature": 0.7,
                "max_tokens": 100,
            },
        )
    assert got == 200, body
    reply = body["choices"][0]["message"]
    assert reply["content"].endswith("第二段：这是一段用于测试的文字。")  # the writer's reply
    if profile.reasoning == "think-tags":
        assert reply["content"].startswith(f"<think>\n{THINK_TEXT}\n</think>")
    elif profile.reasoning:
        assert reply[profile.reasoning] == THINK_TEXT
    assert ("prompt_tokens_details" in body["usage"]) == profile.cached_tokens
    assert set(profile.reply_extra) <= set(body)


def test_the_openai_profile_is_the_simulator_as_it_always_was() -> None:
    with JudgeSimulator() as simulator:
        _, body = post(simulator, {"messages": [SYSTEM, PARTS], "temperature": 0})
        assert simulator.stats()["profile"] == "openai" and not simulator.refused
    assert set(body) == {"id", "object", "created", "model", "choices", "usage"}
    assert body["choices"][0]["message"].keys() == {"role", "content"}
    assert body["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}
    # a simulated fault's body is as it was too
    assert get_profile("openai").error_body(500, "simulated 500") == {
        "error": {"message": "simulated 500", "type": "simulated"}
    }


def test_ollama_cuts_an_overlong_prompt_instead_of_refusing_it() -> None:
    negotiator = tree_prompt("negotiator_system", "zh")
    with JudgeSimulator(profile=get_profile("ollama", context=100)) as simulator:
        got, _ = post(
            simulator,
            {
                "messages": [
                    {"role": "system", "content": negotiator},
                    {"role": "user", "content": "任务" * 200},
                ]
            },
        )
        # the system prompt was cut away: the model no longer knows it negotiates
        assert got == 200 and simulator.truncated == 1 and simulator.calls == {"writer": 1}
        assert simulator.requests[0].truncated
    with JudgeSimulator(profile="ollama") as simulator:  # within its context: read whole
        post(
            simulator,
            {
                "messages": [
                    {"role": "system", "content": negotiator},
                    {"role": "user", "content": "任务"},
                ]
            },
        )
        assert simulator.truncated == 0 and simulator.calls == {"negotiator": 1}


@pytest.mark.parametrize(
    ("name", "status", "words"),
    [
        ("openai", 400, "This model's maximum context length is 4096 tokens."),
        ("ollama", 400, "This model's maximum context length is 4096 tokens."),
        ("llama-cpp", 400, "exceeds the available context size (4096 tokens)"),
        ("tgi", 422, "`inputs` tokens + `max_new_tokens` must be <= 4096."),
    ],
)
def test_a_scripted_context_fault_is_the_refusal_of_the_server_played(
    name: str, status: int, words: str
) -> None:
    with JudgeSimulator(profile=name, script=lambda q: Fault("context")) as simulator:
        got, body = post(simulator, {"messages": [SYSTEM]})
        assert simulator.faults_sent == {"context": 1} and not simulator.refused
    assert got == status and words in message(body)


def test_scripts_read_the_temperature_each_request_asked_for() -> None:
    seen: list[float | None] = []

    def script(question: Asked) -> None:
        seen.append(question.temperature)

    with JudgeSimulator(script=script) as simulator:
        post(simulator, {"messages": [SYSTEM], "temperature": 0.0})
        post(simulator, {"messages": [SYSTEM], "temperature": 0.7})
        post(simulator, {"messages": [SYSTEM]})
    assert seen == [0.0, 0.7, None]


@pytest.mark.slow
def test_the_command_line_serves_a_profile() -> None:
    with served(profile="tgi-1", context=1000, no_system_role=True) as simulator:
        assert "as text-generation-inference < 2.0.2" in simulator.announced
        assert simulator.stats()["profile"] == "tgi-1"


# --- ToW through inspect against each server ------------------------------------------------


def scored(log: EvalLog) -> dict[str, Any]:
    return {k: s for k, s in scores(log).items() if isinstance(s.value, dict)}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_tow_scores_every_writing_each_server_answers(
    name: str, serve: Serve, tmp_path: Path
) -> None:
    simulator = serve(profile=name)
    # the older TGI refuses temperature 0: its users sample the judge
    config = {"temperature": 0.7} if name == "tgi-1" else {}
    task = guide(dataset="demo")
    [log] = run_eval(
        task, tmp_path, simulator_model(simulator, **config), limit=1, model="replay/demo-writer-a"
    )
    [score] = scores(log).values()
    assert isinstance(score.value, dict), score.explanation
    tree = tree_for("guide")
    assert len(score.value) == len(
        {"overall", *tree.nodes, *(leaf.id for leaf in tree.leaves)}
    ) and all(not math.isnan(v) for v in score.value.values())
    assert not simulator.truncated
    assert {kind for kind, _ in simulator.questions} == {"negotiator", *LLM_LEAVES}
    # a server whose context cannot hold a prompt and our max_tokens beside it refuses
    # each question once, which is then asked without max_tokens (its context bounds
    # the reply, less than ours); no other refusal
    profile = PROFILES[name]
    cramped = profile.max_tokens_error is not None and profile.context < 8_000
    assert set(simulator.refused) == ({"max_tokens"} if cramped else set())
    assert simulator.refused["max_tokens"] <= 8  # once a question, at most: then learnt
    asked_again = [r for r in simulator.requests if r.fault is None]
    assert {r.max_tokens for r in asked_again} == ({None} if cramped else {JUDGE_MAX_TOKENS})


@pytest.mark.slow
def test_llama_cpp_python_scores_every_expert(serve: Serve, tmp_path: Path) -> None:
    """Its Jinja templates concatenate strings: a list of text parts would be a 500 for
    every expert (each expert prompt has the materials and the criterion as two parts)."""
    simulator = serve(profile="llama-cpp-python")
    task = guide(dataset="demo")
    [log] = run_eval(
        task, tmp_path, simulator, limit=2, max_retries=1, model="replay/demo-writer-a"
    )
    assert len(scored(log)) == 2
    assert set(simulator.refused) == {"max_tokens"}  # its 2,048 tokens: no list content
    writings = {sample.output.completion for sample in log.samples or []}
    answered = Counter(
        (r.kind, writing)
        for r in simulator.requests
        if r.fault is None
        for writing in writings
        if any(writing in s.text for s in r.segments)
    )
    for leaf in LLM_LEAVES:
        assert all(answered[(leaf, writing)] == 1 for writing in writings), leaf
    for score in scored(log).values():
        assert set(LLM_LEAVES) <= set(score.value)


def long_writing_data(path: Path) -> Path:
    """The first demo guide record, and a copy of it whose writing is 12,000 characters."""
    record = demo_record("demo_guide_1")
    writing = record["generations"]["demo-writer-a"]
    long = {**record, "id": "long", "generations": {"demo-writer-a": (writing * 30)[:12_000]}}
    return write_jsonl(path, [record, long])


@pytest.mark.slow
# every server that refuses an overlong prompt (Ollama cuts it instead: see above)
@pytest.mark.parametrize(
    "name", ["openai", "vllm", "sglang", "llama-cpp", "llama-cpp-python", "lmstudio", "tgi"]
)
def test_a_writing_over_the_context_costs_only_itself_with_the_limit_named(
    name: str, serve: Serve, tmp_path: Path
) -> None:
    context = 4000  # tokens: the demo writing's prompts fit, the long one's (6,000+) do not
    simulator = serve(profile=get_profile(name, context=context))
    data = long_writing_data(tmp_path / "long.jsonl")
    [log] = run_eval(
        guide(dataset=str(data)), tmp_path / "logs", simulator, model="replay/demo-writer-a"
    )
    found = scores(log)
    assert set(scored(log)) == {"demo_guide_1"}
    reason = str(found["long"].explanation)
    assert "\n" not in reason and "context" in reason
    assert str(context) in reason or f"{context:,}" in reason
    # refused once per expert, never asked again: a context refusal is no passing fault
    long = next(w for k, w in simulator.questions if k == "logic" and len(w) > 10_000)
    assert all(simulator.questions[(leaf, long)] == 1 for leaf in LLM_LEAVES)
    assert simulator.refused["context"] == len(LLM_LEAVES)
    # the other writing's prompts fit, not beside our max_tokens: asked without it
    assert set(simulator.refused) <= {"context", "max_tokens"}


@pytest.mark.slow
def test_a_deterministic_judge_changes_its_answer_when_the_reask_is_sampled(
    serve: Serve, tmp_path: Path
) -> None:
    """Greedy decoding repeats itself: the same prompt and a short correction give the
    same bad answer at temperature 0. Sampled, it answers."""

    def script(question: Asked) -> str | None:
        if question.kind == "negotiator" and not question.temperature:
            return "这项任务的各项都很重要，我无法给出权重。"
        return None

    simulator = serve(profile="vllm", script=script)
    task = guide(dataset="demo")
    [log] = run_eval(task, tmp_path, simulator, limit=1, model="replay/demo-writer-a")
    [score] = scores(log).values()
    assert isinstance(score.value, dict), score.explanation
    asked = {t for kind, t in simulator.temperatures if kind == "negotiator"}
    assert 0.0 in asked and any(t and t > 0 for t in asked)
    assert {t for kind, t in simulator.temperatures if kind in LLM_LEAVES} == {0.0}


@pytest.mark.slow
def test_a_refused_temperature_leaves_each_writing_unscored_with_the_servers_words(
    serve: Serve, tmp_path: Path
) -> None:
    simulator = serve(profile="tgi-1")
    started = time.monotonic()
    task = guide(dataset="demo")
    [log] = run_eval(task, tmp_path, simulator, limit=1, model="replay/demo-writer-a")
    assert time.monotonic() - started < 30  # a refusal is not waited out as an outage
    [score] = scores(log).values()
    reason = str(score.explanation)
    assert not isinstance(score.value, dict)
    assert "HTTP 422" in reason and "temperature` must be strictly positive" in reason
    assert all(n == 1 for n in simulator.questions.values())  # not asked again


def test_the_profiles_cover_the_servers_users_point_the_judge_at() -> None:
    assert set(PROFILES) >= {
        "openai",
        "vllm",
        "sglang",
        "llama-cpp",
        "llama-cpp-python",
        "ollama",
        "lmstudio",
        "tgi",
    }


@pytest.mark.slow
@pytest.mark.parametrize("profile", ["vllm", "llama-cpp-python"])
def test_a_template_without_a_system_role_still_scores(
    profile: str, serve: Serve, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A Gemma-like chat template refuses a system message (400 on vLLM, 500 on
    llama-cpp-python): the first refusal is remembered, the system prompt travels at the
    head of the first user message, and every writing is scored."""
    simulator = serve(profile=get_profile(profile, context=100_000, system_role=False))
    with caplog.at_level("WARNING", logger="howtobench.judge.calls"):
        [log] = run_eval(
            guide(dataset="demo"),
            tmp_path,
            "openai-api/sim/judge",
            limit=2,
            max_retries=0,
            model="replay/demo-writer-a",
        )
    assert all(isinstance(s.value, dict) for s in scores(log).values())
    warned = [r.getMessage() for r in caplog.records if "refuses system messages" in r.getMessage()]
    assert len(warned) == 1
    assert simulator.refused.get("system_role", 0) >= 1
