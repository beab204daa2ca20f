"""Both SDKs for real: the ToW scorer judged through inspect's `anthropic/` provider (the
Anthropic SDK, Messages API) and `openai-api/` provider (the OpenAI SDK, chat
completions), against the simulator on 127.0.0.1.

Each run checks that the judge calls reached the API's own route, that the judge
materials went out as the cached prefix, that every writing was scored, and that the cost
study reads the cache tokens the simulator billed. The expected tokens are recomputed
here from what the simulator recorded of each request, by the rule it documents
(`howtobench.simulator.billing`), not by its code.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pandas as pd
import pytest
from inspect_ai.log import EvalLog, resolve_sample_attachments
from inspect_ai.model import ContentText

from howtobench import open_writing
from howtobench.cli import main
from howtobench.simulator.protocol import Asked
from howtobench.simulator.server import Fault, JudgeSimulator, Request
from howtobench.studies import load_samples
from howtobench.studies.token_costs import cost
from howtobench.tree.spec import LEAVES
from support.evals import run_eval
from support.judges import Serve

EXPERTS = [leaf.id for leaf in LEAVES if leaf.judge == "llm"]
# per API: the grader, its environment variables' prefix, its base URL, its route
APIS: dict[str, tuple[str, str, Callable[[JudgeSimulator], str], str]] = {
    "anthropic": ("anthropic/claude-sim-judge", "ANTHROPIC", lambda s: s.root_url, "/v1/messages"),
    "openai": ("openai-api/sim/judge", "SIM", lambda s: s.base_url, "/v1/chat/completions"),
}


def tokens(text: str) -> int:
    """The simulator's documented rule: two characters a token, rounded up."""
    return (len(text) + 1) // 2


def written(request: Request) -> list[str]:
    """Each block as the rule writes it out: role, newline, text, newline."""
    return [f"{s.role}\n{s.text}\n" for s in request.segments]


def anthropic_bill(requests: list[Request]) -> dict[str, int]:
    """Anthropic's caching: the prefix through the last breakpoint (1024 tokens or more)
    is read as far as an earlier breakpoint's prefix matches, written for the rest."""
    cached: set[str] = set()
    bill = dict.fromkeys(["input", "cache_write", "cache_read", "output"], 0)
    for request in requests:
        blocks = written(request)
        prefixes = ["".join(blocks[: i + 1]) for i in range(len(blocks))]
        marked = [
            prefix
            for i, (segment, prefix) in enumerate(zip(request.segments, prefixes, strict=True))
            if (segment.cache_control or (request.automatic_cache and i == len(blocks) - 1))
            and tokens(prefix) >= 1024
        ]
        last = marked[-1] if marked else ""
        read = max((p for p in prefixes if p in cached and last.startswith(p)), key=len, default="")
        cached.update(marked)
        bill["input"] += tokens(prefixes[-1]) - tokens(last)
        bill["cache_write"] += tokens(last) - tokens(read)
        bill["cache_read"] += tokens(read)
        bill["output"] += tokens(request.reply or "")
    return bill


def openai_bill(requests: list[Request]) -> dict[str, int]:
    """OpenAI's caching: a prompt of 1024 tokens or more reads the longest prefix, in
    steps of 128 tokens from 1024, that an earlier prompt began with."""
    earlier: list[str] = []
    bill = dict.fromkeys(["input", "cache_write", "cache_read", "output"], 0)
    for request in requests:
        prompt = "".join(written(request))
        total = tokens(prompt)
        shared = [
            n
            for n in range(1024, total + 1, 128)
            if any(tokens(p) >= n and p[: 2 * n] == prompt[: 2 * n] for p in earlier)
        ]
        cached = max(shared, default=0)
        earlier.append(prompt)
        bill["input"] += total - cached
        bill["cache_read"] += cached
        bill["output"] += tokens(request.reply or "")
    return bill


def marked_in_log(log: EvalLog) -> set[str]:
    """The texts the package marked as cache breakpoints in its judge calls (the log's
    model events, long texts kept as attachments)."""
    return {
        block.text
        for sample in log.samples or []
        for event in resolve_sample_attachments(sample, "full").events
        if event.event == "model"
        for message in event.input
        if isinstance(message.content, list)
        for block in message.content
        if isinstance(block, ContentText) and block.cache_breakpoint
    }


def judged(
    api: str, serve: Serve, monkeypatch: pytest.MonkeyPatch, folder: Path, **options: Any
) -> tuple[EvalLog, JudgeSimulator]:
    """The demo's open writings of demo-writer-a, judged through `api`'s SDK."""
    grader, service, base_url, _ = APIS[api]
    simulator = serve(**options)
    monkeypatch.setenv(f"{service}_BASE_URL", base_url(simulator))
    monkeypatch.setenv(f"{service}_API_KEY", "none")
    [log] = run_eval(open_writing(dataset="demo"), folder, grader, model="replay/demo-writer-a")
    return log, simulator


@pytest.mark.slow
@pytest.mark.parametrize("api", list(APIS))
def test_tow_through_each_sdk_bills_the_shared_materials_as_cached(
    api: str, serve: Serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    log, simulator = judged(api, serve, monkeypatch, tmp_path / "logs")
    requests = simulator.requests
    grader, _, _, route = APIS[api]

    # (a) every judge call reached the API's own route, one per question
    assert {(r.api, urlsplit(r.path).path) for r in requests} == {(api, route)}
    assert Counter(r.kind for r in requests) == dict.fromkeys(["negotiator", *EXPERTS], 4)

    # (b) on Anthropic's API each expert call sent the materials first, as one block, and
    # that block, and no later one, carries the cache breakpoint the package set; on
    # OpenAI's the prompt is one plain string (what every OpenAI-compatible server takes)
    experts = [r for r in requests if r.kind != "negotiator"]
    users = [[s for s in r.segments if s.role == "user"] for r in experts]
    if api == "anthropic":
        materials = marked_in_log(log)
        assert len(materials) == 8  # 4 writings, with and without the anchor (paragraphing)
        assert {first.text for first, *_ in users} == materials
        assert all(first.cache_control == {"type": "ephemeral"} for first, *_ in users)
        assert not any(s.cache_control for _, *rest in users for s in rest)
    else:
        assert marked_in_log(log) == set()
        assert all(len(user) == 1 and "<writing>" in user[0].text for user in users)
        assert not any(r.marked or r.automatic_cache for r in requests)

    # (c) every writing scored, and the studies count none unscored
    assert [isinstance(s.scores["tow"].value, dict) for s in log.samples or []] == [True] * 4
    assert load_samples([tmp_path / "logs"]).unscored == {}

    # (d) the cost study reads what the simulator billed, cache tokens included
    bill = (anthropic_bill if api == "anthropic" else openai_bill)(requests)
    assert bill["cache_read"] > 0 and (bill["cache_write"] > 0) == (api == "anthropic")
    expected = {f"{k}_tokens": v for k, v in bill.items()}
    [row] = cost([tmp_path / "logs"]).tables["usage"].to_dict("records")
    assert (row["role"], row["model"]) == ("grader", grader)
    assert {k: row[k] for k in expected} == expected
    out = tmp_path / "out"
    assert main(["cost", str(tmp_path / "logs"), "--out", str(out)]) == 0
    [written_row] = pd.read_csv(out / "cost_usage.csv").to_dict("records")
    assert {k: written_row[k] for k in expected} == expected


@pytest.mark.slow
def test_anthropic_faults_reach_the_scorer_as_anthropic_errors(
    serve: Serve, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A rate limit on each rhetoric question's first ask is retried; a 400 on one
    writing's logic question leaves that writing unscored with Anthropic's message."""
    asked: Counter[tuple[str, str | None]] = Counter()

    def script(question: Asked) -> Fault | None:
        asked[(question.kind, question.writing)] += 1
        if question.kind == "logic" and "菜市场" in (question.writing or ""):
            return Fault("400")
        if question.kind == "rhetoric" and asked[(question.kind, question.writing)] == 1:
            return Fault("429")
        return None

    log, simulator = judged("anthropic", serve, monkeypatch, tmp_path / "logs", script=script)
    faults = Counter(r.fault for r in simulator.requests if r.fault)
    assert faults == {"429": 4, "400": 1}
    assert {r.api for r in simulator.requests} == {"anthropic"}
    scores = {str(s.id): s.scores["tow"] for s in log.samples or []}
    broken = scores.pop("demo_open_1")
    assert broken.reason == "grader_failed"
    assert "HTTP 400" in str(broken.explanation) and "simulated 400" in str(broken.explanation)
    assert {k for k, s in scores.items() if isinstance(s.value, dict)} == {
        "demo_open_2",
        "demo_open_3",
        "demo_open_4",
    }
