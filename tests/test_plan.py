"""The judge plan: `howtobench/negotiate`, `howtobench plan export`, scoring with
`-T weights=PLAN.jsonl`, and the refusals, over HTTP against the simulator.

The judge here samples its weights (a new draw at every negotiator call, as a judge at
temperature 0.7 would), which is what makes the plan necessary: without it two workers
disagree on every instruction.
"""

from __future__ import annotations

import asyncio
import fcntl
import hashlib
import json
import math
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageUser
from inspect_ai.solver import TaskState

from howtobench import tasks
from howtobench.cli import main
from howtobench.dataset.jsonl import DEMO_FILE
from howtobench.judge import question_locks
from howtobench.judge.defaults import SUM_TOLERANCE
from howtobench.simulator import Asked, JudgeSimulator, asked_ids
from howtobench.studies import StudyError, report
from howtobench.studies.plans import export_plan
from howtobench.tasks import negotiate
from howtobench.tree.negotiation import instruction_only
from howtobench.tree.plan import (
    TREE_VERSION,
    PlanEntry,
    PlanError,
    plan_digest,
    plan_text,
    read_plan,
)
from howtobench.tree.spec import LEAVES, tree_for
from howtobench.vocabulary.errors import UserError
from support.evals import run_eval, scores
from support.judges import Serve

NODE = {leaf.id: leaf.node for leaf in LEAVES}
DEMO = {"completion": 3, "guide": 3, "open": 4}


def sampled_weights(question: Asked) -> dict[str, Any] | None:
    """A negotiator that draws new weights at every call; every other question is the
    simulator's own (deterministic) reply."""
    if question.kind != "negotiator":
        return None
    draw = random.Random()
    weights: dict[str, float] = {}
    for node in ("content", "format"):
        group = [i for i in asked_ids(question) if NODE[i] == node]
        raw = [draw.uniform(0.5, 1.5) for _ in group]
        weights |= {i: r / sum(raw) for i, r in zip(group, raw, strict=True)}
    return {"weights": weights, "explanation": "sampled"}


def negotiated(serve: Serve, folder: Path, **task_args: Any) -> tuple[Path, JudgeSimulator]:
    """A negotiate run on the demo data; returns its log folder and the judge."""
    judge = serve(script=sampled_weights)
    run_eval(negotiate(dataset="demo", **task_args), folder, "openai-api/sim/judge")
    return folder, judge


def test_negotiate_scores_each_instruction_by_its_weights(serve: Serve, tmp_path: Path) -> None:
    folder, judge = negotiated(serve, tmp_path / "negotiate")
    [path] = folder.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.eval.task == "howtobench/negotiate"
    assert [step.solver for step in log.plan.steps] == ["howtobench/instruction_only"]
    assert judge.calls == {"negotiator": sum(DEMO.values())}
    assert list(log.stats.model_usage) == ["openai-api/sim/judge"]  # no writer asked
    by_task: dict[str, int] = {}
    for sample in log.samples or []:
        score = sample.scores["negotiation"]
        task = score.metadata["task"]
        by_task[task] = by_task.get(task, 0) + 1
        ids = [leaf.id for leaf in LEAVES if leaf.judge == "llm" or leaf.node == "format"]
        expected = [i for i in ids if task != "completion" or NODE[i] == "content"]
        expected = [i for i in expected if NODE[i] != "impression"]
        weights = score.metadata["weights"]  # as negotiated: what ToW judges with
        assert sorted(weights) == sorted(expected)
        for node in ("content", "format"):
            group = [w for leaf, w in weights.items() if NODE[leaf] == node]
            assert not group or abs(sum(group) - 1) < 1e-9
        # the value shows them as every score stores its numbers, to 6 decimals
        assert score.value == {leaf: round(w, 6) for leaf, w in weights.items()}
        assert score.metadata["negotiator"]["temperature"] == 0.0
    assert by_task == DEMO
    assert set(log.eval.metadata["data"]) == set(DEMO)
    assert log.eval.metadata["tree"] == TREE_VERSION


def test_instruction_only_leaves_the_sample_as_it_is_and_asks_no_writer() -> None:
    """The negotiate task's solver: the negotiator reads the instruction, so nothing is
    written, and the writer (`generate`) is never called."""

    async def no_writer(state: TaskState, **config: Any) -> TaskState:
        raise AssertionError("instruction_only asked the writer")

    state = TaskState(
        model="none",  # type: ignore[arg-type]
        sample_id="demo_open_1",
        epoch=1,
        input="写一篇散文",
        messages=[ChatMessageUser(content="写一篇散文")],
        metadata={"task": "open"},
    )
    after = asyncio.run(instruction_only()(state, no_writer))
    assert after is state and after.output.completion == ""
    assert [m.text for m in after.messages] == ["写一篇散文"]
    assert after.metadata == {"task": "open"}


def test_negotiate_takes_a_list_of_tasks_and_refuses_others(serve: Serve, tmp_path: Path) -> None:
    folder, judge = negotiated(serve, tmp_path / "negotiate", tasks="guide,open")
    assert judge.calls == {"negotiator": DEMO["guide"] + DEMO["open"]}
    with pytest.raises(UserError, match=r"^-T tasks: unknown task\(s\) essay"):
        negotiate(dataset="demo", tasks="guide,essay")


def test_export_writes_every_instruction_with_its_manifest(serve: Serve, tmp_path: Path) -> None:
    folder, _ = negotiated(serve, tmp_path / "negotiate")
    out = tmp_path / "plan.jsonl"
    assert main(["plan", "export", str(folder), "--out", str(out)]) == 0
    head, *lines = out.read_text("utf-8").splitlines(keepends=True)
    manifest = json.loads(head)
    body = "".join(lines)
    assert manifest["digest"] == hashlib.sha256(body.encode()).hexdigest()
    assert manifest["judge"] == "openai-api/sim/judge" and manifest["temperature"] == 0.0
    assert manifest["instructions"] == len(lines) == sum(DEMO.values())
    assert set(manifest["data"]) == set(DEMO) and manifest["tree"] == TREE_VERSION
    [path] = folder.glob("*.eval")
    log = read_eval_log(str(path))
    # the weights as negotiated, which the score's metadata keeps (its value rounds them)
    logged = {str(s.id): s.scores["negotiation"].metadata["weights"] for s in log.samples or []}
    rows = [json.loads(line) for line in lines]
    assert {row["id"]: row["weights"] for row in rows} == logged
    assert read_plan(out).digest == manifest["digest"]


def test_an_instruction_negotiated_twice_differently_is_refused(
    serve: Serve, tmp_path: Path
) -> None:
    first, _ = negotiated(serve, tmp_path / "first", tasks="guide")
    second, _ = negotiated(serve, tmp_path / "second", tasks="guide")  # a new store
    with pytest.raises(StudyError, match=r"^guide instruction demo_guide_1 was negotiated"):
        export_plan([first, second], tmp_path / "plan.jsonl")
    assert not (tmp_path / "plan.jsonl").exists()


def plan_of(serve: Serve, tmp_path: Path, **task_args: Any) -> Path:
    folder, _ = negotiated(serve, tmp_path / "negotiate", **task_args)
    out = tmp_path / "plan.jsonl"
    export_plan([folder], out)
    return out


@pytest.mark.slow
def test_two_workers_score_from_one_plan_without_negotiating(serve: Serve, tmp_path: Path) -> None:
    """Two hosts (two simulators, two reply stores) judge two writers from one plan: no
    negotiator call, and each instruction's weights are the plan's on both."""
    plan = read_plan(plan_of(serve, tmp_path))
    fingerprints: dict[str, set[str]] = {}
    for worker, writer in (("one", "demo-writer-a"), ("two", "demo-writer-b")):
        judge = serve(script=sampled_weights)
        logs = run_eval(
            [
                tasks.guide(dataset="demo", weights=str(tmp_path / "plan.jsonl")),
                tasks.open_writing(dataset="demo", weights=str(tmp_path / "plan.jsonl")),
            ],
            tmp_path / "logs",
            "openai-api/sim/judge",
            cache_dir=tmp_path / f"cache-{worker}",
            model=f"replay/{writer}",
        )
        assert judge.calls["negotiator"] == 0
        assert sum(judge.calls.values()) == sum(
            n * sum(leaf.judge == "llm" for leaf in tree_for(task).leaves)
            for task, n in (("guide", DEMO["guide"]), ("open", DEMO["open"]))
        )
        for log in logs:
            assert log.eval.metadata["plan"] == plan.digest
            for sample_id, score in scores(log).items():
                entry = plan.entries[(log.eval.metadata["howtobench_task"], sample_id)]
                assert score.metadata["weights"] == entry.weights
                assert score.metadata["plan"] == plan.digest
                fingerprints.setdefault(sample_id, set()).add(score.metadata["weights_fingerprint"])
    assert len(fingerprints) == DEMO["guide"] + DEMO["open"]
    assert all(len(prints) == 1 for prints in fingerprints.values())
    board = report([tmp_path / "logs"]).tables["leaderboard"]
    assert {"demo-writer-a", "demo-writer-b"} <= set(board.columns)


@pytest.mark.slow
def test_without_a_plan_two_workers_disagree_and_the_report_refuses(
    serve: Serve, tmp_path: Path
) -> None:
    for worker, writer in (("one", "demo-writer-a"), ("two", "demo-writer-b")):
        serve(script=sampled_weights)
        run_eval(
            tasks.guide(dataset="demo"),
            tmp_path / "logs",
            "openai-api/sim/judge",
            cache_dir=tmp_path / f"cache-{worker}",
            model=f"replay/{writer}",
        )
    with pytest.raises(StudyError, match=r"^3 instruction\(s\) were judged with different"):
        report([tmp_path / "logs"])


@pytest.mark.slow
def test_writers_scored_by_different_formatting_rules_are_refused(
    serve: Serve, tmp_path: Path
) -> None:
    serve()
    for writer, rule in (("demo-writer-a", "lenient"), ("demo-writer-b", "paper")):
        run_eval(
            tasks.guide(dataset="demo", formatting=rule),
            tmp_path / "logs",
            "openai-api/sim/judge",
            cache_dir=tmp_path / "cache",
            model=f"replay/{writer}",
        )
    with pytest.raises(StudyError, match=r"different formatting rules \(demo-writer-a: lenient"):
        report([tmp_path / "logs"])


@pytest.mark.slow
def test_ablations_and_uniform_weights_work_beside_a_plan(serve: Serve, tmp_path: Path) -> None:
    plan_path = plan_of(serve, tmp_path, tasks="guide")
    plan = read_plan(plan_path)
    judge = serve(script=sampled_weights)
    ablated, uniform, impression = run_eval(
        [
            tasks.guide(
                dataset="demo",
                weights=str(plan_path),
                nodes="content,impression",
            ),
            tasks.guide(dataset="demo", weights="uniform"),
            tasks.guide(dataset="demo", weights=str(plan_path), nodes="impression"),
        ],
        tmp_path / "logs",
        "openai-api/sim/judge",
        model="replay/demo-writer-a",
    )
    assert judge.calls["negotiator"] == 0
    for sample_id, score in scores(ablated).items():
        weights = plan.entries[("guide", sample_id)].weights
        content = sum(
            weights[leaf] * score.value[leaf] for leaf in weights if NODE[leaf] == "content"
        )
        assert score.value["content"] == pytest.approx(content)
        root = tree_for("guide", ("content", "impression")).root_weights
        assert score.value["overall"] == pytest.approx(
            (root["content"] * content + root["impression"] * score.value["impression"])
            / sum(root.values())
        )
    for score in scores(uniform).values():
        uniform_content = 1 / len(tree_for("guide").leaves_of("content"))
        assert score.metadata["weights"]["logic"] == pytest.approx(uniform_content)
        assert score.metadata["plan"] is None
    assert all(s.value["overall"] == s.value["impression"] for s in scores(impression).values())


def rewritten(path: Path, out: Path, change: Change) -> Path:
    """The plan at `path` with its instruction lines changed by `change(rows)` (any JSON,
    as a hand would edit them) and its count and digest recomputed as `plan_text` does."""
    head, *lines = path.read_text("utf-8").splitlines()
    rows = change([json.loads(line) for line in lines])
    body = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    manifest = {**json.loads(head), "instructions": len(rows), "digest": plan_digest(body)}
    out.write_text(json.dumps(manifest, ensure_ascii=False) + "\n" + body, "utf-8")
    return out


def refusal(weights: str, **task_args: Any) -> str:
    with pytest.raises(UserError) as refused:
        tasks.guide(dataset="demo", weights=weights, **task_args)
    message = str(refused.value)
    assert "\n" not in message
    return message


def test_plans_that_cannot_serve_are_refused_when_the_task_is_built(
    serve: Serve, tmp_path: Path
) -> None:
    path = plan_of(serve, tmp_path, tasks="guide")
    lacking = rewritten(path, tmp_path / "lacking.jsonl", lambda rows: rows[1:])
    assert refusal(str(lacking)) == (
        f"-T weights: {lacking}: the plan lacks the weights of 1 of the 3 guide instructions "
        "(e.g. demo_guide_1): negotiate them (howtobench/negotiate) and export the plan again"
    )
    unscorable = rewritten(path, tmp_path / "nan.jsonl", lambda rows: with_weight(rows, math.nan))
    assert refusal(str(unscorable)) == (
        f'-T weights: {unscorable}, line 2, guide/demo_guide_1: the weight of "opening_ending" '
        "must be a number, got NaN (a negotiator reply with these weights would be refused): "
        "export the plan again"
    )
    assert refusal(str(tmp_path / "none.jsonl")).endswith("none.jsonl' (no such file)")
    notes = tmp_path / "notes.txt"
    notes.write_text("some notes\n", "utf-8")
    assert "not a plan (its first line is no plan manifest" in refusal(str(notes))
    edited = tmp_path / "edited.jsonl"
    edited.write_text(path.read_text("utf-8").replace("0.", "0.1", 1 + 10), "utf-8")
    assert "do not match its digest" in refusal(str(edited))
    other = tmp_path / "other.jsonl"
    older = f'"tree": {TREE_VERSION - 1}'
    other.write_text(path.read_text("utf-8").replace(f'"tree": {TREE_VERSION}', older, 1), "utf-8")
    assert f"the plan is for tree version {TREE_VERSION - 1}" in refusal(str(other))
    genre = read_eval_log(str(next((tmp_path / "negotiate").glob("*.eval")))).samples[0]
    kept = tasks.guide(dataset="demo", weights=str(path), genre=genre.metadata["genre"])
    assert kept.metadata["plan"] == read_plan(path).digest  # a genre's part of the plan
    assert "reuse_weights: a plan fixes" in refusal(str(path), reuse_weights=False)
    with pytest.raises(UserError, match="the plan has no open instructions"):
        tasks.open_writing(dataset="demo", weights=str(path))
    data = tmp_path / "data.jsonl"
    rows = [json.loads(line) for line in DEMO_FILE.read_text("utf-8").splitlines()]
    next(r for r in rows if r.get("task") == "guide")["instruction"] += "（改）"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    with pytest.raises(UserError, match="negotiated on other guide data"):
        tasks.guide(dataset=str(data), weights=str(path))


def test_a_held_negotiation_lock_is_waited_on_for_a_bounded_time(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process is negotiating an instruction, holding its lock; past the wait the
    writing is unscored with the reason (nothing is kept, so a rerun asks again). The
    other process is a second open of the lock file: the operating system's file locks
    tell holders apart by their open file, not by process id."""
    from howtobench.judge.store import ReplyStore

    serve()
    monkeypatch.setattr(question_locks, "LOCK_WAIT_SECONDS", 0.5)
    store = ReplyStore(tmp_path / "inspect-cache" / "howtobench")
    store.locks.mkdir(parents=True)
    real_lock_file = ReplyStore.lock_file
    holders: dict[str, int] = {}

    def lock_held_elsewhere(self: ReplyStore, key: str) -> Path:
        path = real_lock_file(self, key)
        if key not in holders:  # its holder, from the question's first look on
            holders[key] = os.open(path, os.O_RDWR | os.O_CREAT)
            fcntl.flock(holders[key], fcntl.LOCK_EX | fcntl.LOCK_NB)
        return path

    monkeypatch.setattr(ReplyStore, "lock_file", lock_held_elsewhere)
    try:
        [log] = run_eval(
            tasks.guide(dataset="demo"),
            tmp_path / "logs",
            "openai-api/sim/judge",
            limit=1,
            model="replay/demo-writer-a",
        )
    finally:
        for handle in holders.values():
            os.close(handle)
    [score] = scores(log).values()
    assert isinstance(score.value, float) and math.isnan(score.value)
    assert score.metadata["negotiator"]["replies"] == []
    assert "has been asking this question for over 0.5 s" in str(score.explanation)
    assert "another process (" in str(score.explanation)
    assert not list(store.root.glob("replies/*/*.json")) or all(
        "weights" not in p.read_text("utf-8") for p in store.root.glob("replies/*/*.json")
    )


@pytest.mark.slow
def test_a_plan_exported_from_tow_logs_equals_the_negotiated_one(
    serve: Serve, tmp_path: Path
) -> None:
    """ToW runs that negotiated their weights (sharing the negotiate run's reply store)
    export the same plan, byte for byte in its instructions: the same digest."""
    folder, judge = negotiated(serve, tmp_path / "negotiate", tasks="guide,open")
    for task, writer in ((tasks.guide, "demo-writer-a"), (tasks.open_writing, "demo-writer-b")):
        run_eval(
            task(dataset="demo"), tmp_path / "tow", "openai-api/sim/judge", model=f"replay/{writer}"
        )
    assert judge.calls["negotiator"] == DEMO["guide"] + DEMO["open"]  # none asked again
    export_plan([folder], tmp_path / "a.jsonl")
    from_tow = tmp_path / "b.jsonl"
    said = export_plan([tmp_path / "tow"], from_tow)
    assert said.startswith(f"wrote {from_tow}: 7 instructions (guide 3, open 4)")
    assert read_plan(from_tow).digest == read_plan(tmp_path / "a.jsonl").digest


@pytest.mark.slow
def test_a_judge_that_cannot_negotiate_scores_from_a_stronger_ones_plan(
    serve: Serve, tmp_path: Path
) -> None:
    """Small judges: the plan comes from one judge, the expert scores from another whose
    every negotiation would fail; it is never asked to negotiate."""
    plan = plan_of(serve, tmp_path, tasks="guide")
    weak = serve(script=lambda q: "I cannot" if q.kind == "negotiator" else None)
    [log] = run_eval(
        tasks.guide(dataset="demo", weights=str(plan)),
        tmp_path / "logs",
        "openai-api/sim/judge",
        model="replay/demo-writer-a",
    )
    assert weak.calls["negotiator"] == 0
    assert all(isinstance(score.value, dict) for score in scores(log).values())


# --- every entry held to the negotiator's rules ---------------------------------------

# The content leaves the breaches below set by hand (the paper's four, §3.2); a content
# leaf added to the tree since is set to 0, so each hand-worked sum holds.
CONTENT = ("opening_ending", "rhetoric", "logic", "emotion")


def with_weight(rows: list[dict[str, Any]], value: Any) -> list[dict[str, Any]]:
    """The first instruction's first weight set to `value` (no other change)."""
    first = rows[0]["weights"]
    first[next(iter(first))] = value
    return rows


def with_content(rows: list[dict[str, Any]], *values: float) -> list[dict[str, Any]]:
    """The first instruction's content weights, in the tree's order, set to `values`."""
    others = dict.fromkeys(tree_for("guide").negotiated["content"], 0.0)
    rows[0]["weights"] |= others | dict(zip(CONTENT, values, strict=True))
    return rows


def uniform_plan(folder: Path) -> Path:
    """A valid plan of two guide instructions with equal weights (reading a plan needs
    no negotiation)."""
    weights = {i: 1 / len(ids) for ids in tree_for("guide").negotiated.values() for i in ids}
    entries = [PlanEntry("guide", sample_id, weights) for sample_id in ("a", "b")]
    path = folder / "uniform.jsonl"
    path.write_text(plan_text(entries, {"judge": "j", "data": {}, "sources": []}), "utf-8")
    return path


Change = Callable[[list[dict[str, Any]]], list[dict[str, Any]]]
BREACHES: dict[str, tuple[Change, str]] = {
    "sum 0": (lambda r: with_content(r, 0, 0, 0, 0), "the content weights sum to 0, not 1"),
    "sum 35": (lambda r: with_content(r, 35, 0, 0, 0), "the content weights sum to 35, not 1"),
    "off by twice the tolerance": (
        lambda r: with_content(r, 0.25 + 2 * SUM_TOLERANCE, 0.25, 0.25, 0.25),
        f"the content weights sum to {1 + 2 * SUM_TOLERANCE:.4g}, not 1",
    ),
    "weight 5": (
        lambda r: with_content(r, 5, -4, 0, 0),
        'the weight of "opening_ending" is 5, outside (-1, 1)',
    ),
    "weight 1e300": (
        lambda r: with_content(r, 1e300, -1e300, 1, 0),
        'the weight of "opening_ending" is 1e+300, outside (-1, 1)',
    ),
    "NaN": (lambda r: with_weight(r, math.nan), "must be a number, got NaN"),
    "a word": (lambda r: with_weight(r, "much"), 'must be a number, got "much"'),
    "a leaf missing": (
        lambda r: [{**r[0], "weights": dict(list(r[0]["weights"].items())[1:])}, *r[1:]],
        "(missing opening_ending)",
    ),
    "an unknown leaf": (
        lambda r: [{**r[0], "weights": {**r[0]["weights"], "humour": 0}}, *r[1:]],
        "(unknown humour)",
    ),
}


@pytest.mark.parametrize("breach", sorted(BREACHES))
def test_an_entry_no_negotiator_reply_could_give_is_refused(breach: str, tmp_path: Path) -> None:
    change, rule = BREACHES[breach]
    plan = rewritten(uniform_plan(tmp_path), tmp_path / "edited.jsonl", change)
    with pytest.raises(PlanError) as refused:
        read_plan(plan)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith(f"{plan}, line 2, guide/a: ")
    assert rule in message and message.endswith("export the plan again")


def test_one_instruction_on_two_lines_is_refused(tmp_path: Path) -> None:
    def twice(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        other = {**rows[0], "weights": {**rows[0]["weights"]}}
        return [rows[0], rows[1], *with_content([other], 0.1, 0.2, 0.3, 0.4)]

    plan = rewritten(uniform_plan(tmp_path), tmp_path / "twice.jsonl", twice)
    with pytest.raises(PlanError) as refused:
        read_plan(plan)
    assert str(refused.value) == (
        f"{plan}, line 4, guide/a: the instruction is also on line 2 (one line per "
        "instruction): export the plan again"
    )


def test_weights_a_negotiator_reply_could_give_are_read(tmp_path: Path) -> None:
    """A negative weight in a group that sums to 1 is within the paper's rule (§3.3), and
    a group off by half the tolerance is renormalised, as a reply's is."""
    negative = rewritten(
        uniform_plan(tmp_path),
        tmp_path / "negative.jsonl",
        lambda r: with_content(r, 0.5, 0.5, 0.5, -0.5),
    )
    weights = read_plan(negative).entries[("guide", "a")].weights
    assert [weights[i] for i in CONTENT] == [0.5, 0.5, 0.5, -0.5]
    near = rewritten(
        uniform_plan(tmp_path),
        tmp_path / "near.jsonl",
        lambda r: with_content(r, 0.25 + SUM_TOLERANCE / 2, 0.25, 0.25, 0.25),
    )
    weights = read_plan(near).entries[("guide", "a")].weights
    assert sum(weights[i] for i in CONTENT) == pytest.approx(1, abs=1e-12)
    assert weights["rhetoric"] < 0.25


def test_a_plan_on_unreachable_object_storage_is_refused_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An s3:// plan whose endpoint is down: the storage client's error in one line, not
    its traceback."""
    s3fs = pytest.importorskip("s3fs")
    from support.balancer import free_port

    s3fs.S3FileSystem.clear_instance_cache()  # an earlier test's client knows another endpoint
    monkeypatch.setenv("AWS_ENDPOINT_URL", f"http://127.0.0.1:{free_port()}")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "none")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "none")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    with pytest.raises(PlanError) as refused:
        read_plan("s3://bucket/plan.jsonl")
    message = str(refused.value)
    assert message.startswith("s3://bucket/plan.jsonl: cannot read the plan (")
    assert "\n" not in message and "Could not connect" in message
    s3fs.S3FileSystem.clear_instance_cache()
