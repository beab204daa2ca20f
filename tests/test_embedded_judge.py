"""The judge simulator in process, `towsim/<name>`: the HTTP simulator's replies with no
server.

The same ToW run of a replayed writer judged through both carriers gives the same
scores, the same reply texts and the same tokens; each profile's reply reads back the
same; a model argument the provider does not take is refused in one line; and the
README's first command runs from an empty folder and leaves a log of ToW scores.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ContentReasoning,
    GenerateConfig,
    Model,
    ModelOutput,
    get_model,
)

from howtobench import open_writing
from howtobench.simulator import PROFILES, Faults, JudgeSimulator, classify, get_profile
from howtobench.simulator.embedded import SimulatorArgumentError
from howtobench.simulator.replies import MALFORMED_REPLY
from howtobench.simulator.wire import THINK_TEXT
from howtobench.tree.prompts import tree_prompt
from support.doc_pages import Pages, matching, reads_page
from support.evals import run_eval, scores
from support.judges import Serve, simulator_model

WRITER = "replay/demo-writer-a"
FIRST_COMMAND = (
    "inspect eval howtobench/open -T dataset=demo --model replay/demo-writer-a "
    "--model-role grader=towsim/judge"
)


def judge_replies(log: EvalLog) -> dict[str, Counter[tuple[str, str]]]:
    """Per sample, the grader's calls: (what each asked, the reply's text)."""
    return {
        str(sample.id): Counter(
            (classify(event.input).kind, event.output.completion)
            for event in sample.events
            if isinstance(event, ModelEvent) and event.role == "grader"
        )
        for sample in log.samples or []
    }


def prompt_tokens(log: EvalLog, model: str) -> tuple[int, int]:
    """The judge's prompt tokens (cached or not) and output tokens: the same whatever
    order the prompt cache saw the calls in."""
    usage = log.stats.model_usage[model]
    return usage.input_tokens + (usage.input_tokens_cache_read or 0), usage.output_tokens


def test_in_process_and_over_http_the_judge_answers_alike(serve: Serve, tmp_path: Path) -> None:
    simulator = serve()
    [http] = run_eval(
        open_writing(dataset="demo"),
        tmp_path / "http",
        simulator,
        model=WRITER,
        cache_dir=tmp_path / "http-cache",
    )
    [embedded] = run_eval(
        open_writing(dataset="demo"),
        tmp_path / "embedded",
        "towsim/judge",
        model=WRITER,
        cache_dir=tmp_path / "embedded-cache",
    )
    http_scores, embedded_scores = scores(http), scores(embedded)
    assert len(embedded_scores) == 4
    assert all(isinstance(s.value, dict) and "overall" in s.value for s in http_scores.values())
    assert {i: s.value for i, s in embedded_scores.items()} == {
        i: s.value for i, s in http_scores.items()
    }
    replies = judge_replies(embedded)
    assert replies == judge_replies(http)
    assert sum(sum(calls.values()) for calls in replies.values()) == sum(simulator.calls.values())
    assert prompt_tokens(embedded, "towsim/judge") == prompt_tokens(http, "openai-api/sim/judge")


# (profile, its changes): none, a reasoning field (vLLM), think tags in the content
# (TGI), no cached tokens (SGLang), a prompt cut to a small context (Ollama)
PROFILED = [
    ("openai", {}),
    ("vllm", {}),
    ("tgi", {}),
    ("sglang", {}),
    ("ollama", {"context": 100}),
]


def generated(model: Model, messages: list[ChatMessage], times: int = 1) -> list[ModelOutput]:
    """The model's outputs for `messages`, asked `times` times one after another."""

    async def ask() -> list[ModelOutput]:
        return [await model.generate(messages) for _ in range(times)]

    return anyio.run(ask)


@pytest.mark.parametrize(("profile", "changes"), PROFILED, ids=[p for p, _ in PROFILED])
def test_each_profile_reads_back_as_over_http(profile: str, changes: dict[str, Any]) -> None:
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=tree_prompt("negotiator_system", "zh")),
        ChatMessageUser(content="写一篇关于春天的散文。" * 60),
    ]
    with JudgeSimulator(profile=get_profile(profile, **changes)) as simulator:
        [http] = generated(simulator_model(simulator, temperature=0), messages)
    towsim = get_model(
        "towsim/judge",
        config=GenerateConfig(temperature=0),
        memoize=False,
        profile=profile,
        **changes,
    )
    [embedded] = generated(towsim, messages)
    assert embedded.completion == http.completion
    assert embedded.message.content == http.message.content
    assert embedded.usage is not None and http.usage is not None
    assert embedded.usage.model_dump(exclude={"total_cost"}) == http.usage.model_dump(
        exclude={"total_cost"}
    )
    thinks = [c for c in embedded.message.content if isinstance(c, ContentReasoning)]
    assert [c.reasoning for c in thinks] == ([THINK_TEXT] if PROFILES[profile].reasoning else [])
    # Ollama cut the negotiator's system prompt away: its model answered as a writer
    assert (simulator.calls == {"writer": 1}) == (profile == "ollama")


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        ({"latancy": 1}, "-M latancy: not a model argument of towsim/judge; did you mean latency?"),
        (
            {"profil": "vllm"},
            "-M profil: not a model argument of towsim/judge; did you mean profile?",
        ),
        (
            {"rate_429": 0.1},
            "-M rate_429: a fault of the wire, and towsim/judge answers in process",
        ),
        ({"profile": "vlm"}, "-M profile=vlm: towsim/judge plays one of openai, vllm, "),
        ({"latency": "soon"}, "-M latency=soon: towsim/judge takes a number from 0 to 600"),
        ({"latency": 1e9}, "-M latency=1000000000.0: towsim/judge takes a number from 0 to 600"),
        ({"rate_malformed": 2}, "-M rate_malformed=2: towsim/judge takes a number from 0 to 1"),
        ({"seed": 1.5}, "-M seed=1.5: towsim/judge takes a whole number from 0 to 4294967295"),
        ({"seed": 2**40}, f"-M seed={2**40}: towsim/judge takes a whole number from 0 to "),
        ({"context": 0}, "-M context=0: towsim/judge takes a whole number from 1 to 10000000"),
        ({"context": 1e12}, "-M context=1000000000000.0: towsim/judge takes a whole number "),
    ],
)
def test_a_model_argument_it_does_not_take_is_refused_in_one_line(
    args: dict[str, Any], refused: str
) -> None:
    with pytest.raises(SimulatorArgumentError) as error:
        get_model("towsim/judge", **args)
    assert str(error.value).startswith(refused)
    assert "\n" not in str(error.value)


def test_reply_faults_are_drawn_as_the_server_draws_them() -> None:
    """`rate_malformed`, `rate_out_of_range` and `seed`: asked one after another, the
    same unusable replies at the same calls as the HTTP simulator with the same rates."""
    rates = {"rate_malformed": 0.3, "rate_out_of_range": 0.3, "seed": 7}
    messages: list[ChatMessage] = [ChatMessageUser(content="写一首诗。")]
    with JudgeSimulator(faults=Faults(**rates)) as simulator:
        http = generated(simulator_model(simulator), messages, 12)
    embedded = generated(get_model("towsim/judge", memoize=False, **rates), messages, 12)
    assert [o.completion for o in embedded] == [o.completion for o in http]
    assert MALFORMED_REPLY in [o.completion for o in embedded]
    assert sum(simulator.faults_sent.values()) < 12


def test_latency_delays_every_answer() -> None:
    messages: list[ChatMessage] = [ChatMessageUser(content="写一首诗。")]
    started = time.monotonic()
    generated(get_model("towsim/judge", memoize=False, latency=0.2), messages, 2)
    assert time.monotonic() - started >= 0.4


@pytest.mark.slow
@reads_page("README.md")
def test_the_readme_first_command_runs_from_an_empty_folder(doc_pages: Pages) -> None:
    """Its run is the README page's (`support.doc_pages`: from an empty folder, stdin
    closed, no INSPECT_ or SIM_ settings, an empty cache), shared with that page's test."""
    assert len(matching("README.md", FIRST_COMMAND)) == 1  # the README's, as written
    [path] = (doc_pages.outputs("README.md") / "logs").glob("*.eval")
    log = read_eval_log(str(path))
    assert log.status == "success" and log.eval.model_roles is not None
    assert log.eval.model_roles["grader"].model == "towsim/judge"
    assert len(log.samples or []) == 4
    assert all(isinstance(s.scores["tow"].value, dict) for s in log.samples or [])
