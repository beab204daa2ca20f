"""One answer per question across the processes and tasks sharing a reply store.

The judge here samples its expert scores (a new draw at every call, as a judge at
temperature 0.7 would), so a question asked twice is answered differently: two runs
that each asked it would log different scores for the same writing.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from inspect_ai.event import InfoEvent, ModelEvent
from inspect_ai.log import read_eval_log
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)

from howtobench import tasks
from howtobench.judge import question_locks
from howtobench.judge.question_locks import LockWaitExpired, held
from howtobench.judge.reading import Form, bounded
from howtobench.judge.replies import Asking, Exchange, ask
from howtobench.judge.store import ReplyStore
from howtobench.simulator import Asked, JudgeSimulator, valid_weights
from howtobench.tree.spec import tree_for
from howtobench.vocabulary.errors import UserError
from support.evals import run_eval, scores
from support.judges import Serve

GUIDE = 3  # the demo's guide instructions: 1 negotiator and 7 expert questions each
WAIT = 90.0  # seconds an awaited event may take on a busy machine before the test fails

# A run of `howtobench/guide` in a process of its own: it prints "ready" once built and
# starts when told (a line on stdin), so that two runs ask at the same time.
RUN = textwrap.dedent(
    """
    import sys
    from inspect_ai import eval
    from howtobench import tasks
    task = tasks.guide(dataset="demo")
    print("ready", flush=True)
    sys.stdin.readline()
    [log] = eval(task, model="replay/demo-writer-a", model_roles={"grader": "openai-api/sim/judge"},
                 log_dir=sys.argv[1], display="none")
    assert log.status == "success", log.error
    """
)

# A process that holds one question's lock, says so, and waits to be killed.
HOLD = textwrap.dedent(
    """
    import sys, anyio
    from pathlib import Path
    from howtobench.judge.question_locks import held
    from howtobench.judge.store import ReplyStore

    async def hold() -> None:
        async with held(ReplyStore(Path(sys.argv[1])), sys.argv[2]):
            print("held", flush=True)
            await anyio.sleep_forever()

    anyio.run(hold)
    """
)


def sampled_scores(question: Asked) -> dict[str, Any]:
    if question.kind == "negotiator":
        return valid_weights(question)
    high = 3 if question.kind == "paragraphing" else 10
    return {"score": random.randint(1, high), "reason": "sampled"}


def started(code: str, *args: str) -> subprocess.Popen[str]:
    """`code` run by this interpreter in a process of its own, with this environment."""
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def said(process: subprocess.Popen[str], word: str) -> None:
    """Return once the process printed `word` (it fails the test if it exits first)."""
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if line != word:
        process.kill()
        _, errors = process.communicate(timeout=WAIT)
        pytest.fail(f"the process printed {line!r}, not {word!r}: {errors[-3000:]}")


@pytest.mark.slow
def test_two_runs_on_one_store_ask_each_question_once(serve: Serve, tmp_path: Path) -> None:
    """Two processes run one writer on one store at once: 24 calls in all (each asked
    its 21 expert questions before, 45 calls) and the same scores in both logs."""
    judge = serve(script=sampled_scores, latency=0.5)
    runs = [started(RUN, str(tmp_path / f"logs-{n}")) for n in (1, 2)]
    for run in runs:
        said(run, "ready")
    for run in runs:  # both start now
        assert run.stdin is not None
        run.stdin.write("go\n")
        run.stdin.flush()
    for run in runs:
        _, errors = run.communicate(timeout=WAIT * 2)
        assert run.returncode == 0, errors[-3000:]
    experts = sum(leaf.judge == "llm" for leaf in tree_for("guide").leaves)
    assert sum(judge.calls.values()) == GUIDE * (1 + experts)
    assert set(judge.questions.values()) == {1}  # no question asked twice
    logged = []
    for n in (1, 2):
        [path] = (tmp_path / f"logs-{n}").glob("*.eval")
        logged.append({i: s.value for i, s in scores(read_eval_log(str(path))).items()})
    assert len(logged[0]) == GUIDE and logged[0] == logged[1]


def score_form() -> Form[float]:
    return Form(("score",), lambda reply: bounded(reply["score"], "the score", 1, 10, whole=True))


def answer_after_reask(question: Asked) -> Any:
    """A judge whose first answer to any question is unusable; a re-ask gets a score."""
    return "no score here" if question.attempt == 1 else {"score": 7, "reason": "re-asked"}


def asked(judge: JudgeSimulator) -> int:
    return sum(judge.calls.values())


def until(condition: Callable[[], bool], what: str) -> None:
    """Return once `condition()` holds (polled); fail the test after `WAIT` seconds."""
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"waited {WAIT:g} s for {what}"
        time.sleep(0.05)


@pytest.mark.slow
def test_concurrent_questions_in_one_process_wait_for_one_answer(
    serve: Serve, tmp_path: Path
) -> None:
    """Two tasks asking one question: one asks (and re-asks), the other uses its answer.
    A holder whose tries all fail keeps nothing and releases, and its waiter asks itself."""
    judge = serve(script=answer_after_reask, latency=0.3)
    # its own endpoint: a bare name may be inspect's cached model of an earlier simulator
    model = get_model(
        "openai-api/sim/judge", base_url=judge.base_url, api_key="none", memoize=False
    )
    store = ReplyStore(tmp_path / "store")

    async def both(writing: str, first_tries: int) -> list[Exchange[float]]:
        messages = [ChatMessageUser(content=f"评分：\n```\n{writing}\n```")]
        found: dict[int, Exchange[float]] = {}

        async def one(slot: int, tries: int) -> None:
            found[slot] = await ask(
                model,
                messages,
                score_form(),
                language="zh",
                asking=Asking(tries, store),
                scope={},
            )

        start = asked(judge)
        async with anyio.create_task_group() as group:
            group.start_soon(one, 0, first_tries)
            with anyio.fail_after(WAIT):  # the second asks once the first is with the judge
                while asked(judge) == start:
                    await anyio.sleep(0.01)
            group.start_soon(one, 1, 2)
        return [found[0], found[1]]

    start = asked(judge)
    shared = anyio.run(both, "一篇作文", 2)
    assert [e.value for e in shared] == [7, 7] and [e.stored for e in shared] == [False, True]
    assert asked(judge) - start == 2  # one ask and its re-ask, for both
    start = asked(judge)
    failed, retried = anyio.run(both, "另一篇作文", 1)
    assert failed.value is None and failed.error and not failed.stored
    assert retried.value == 7 and not retried.stored and len(retried.replies) == 2
    assert asked(judge) - start == 3  # the failed ask; the waiter's own ask and re-ask


@pytest.mark.slow
def test_a_killed_holder_blocks_no_one(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process killed (SIGKILL) while it holds a question's lock: the operating system
    releases it, so the next asker takes it at once; while it lives, a waiter gives up
    after the bound with the reason."""
    store = ReplyStore(tmp_path / "store")
    holder = started(HOLD, str(store.root), "a-question")
    said(holder, "held")
    monkeypatch.setattr(question_locks, "LOCK_WAIT_SECONDS", 0.5)

    async def take() -> None:
        async with held(store, "a-question"):
            pass

    with pytest.raises(LockWaitExpired, match=r"another process \(.* pid \d+ since .*\) has been"):
        anyio.run(take)
    holder.kill()
    holder.wait(WAIT)
    anyio.run(take)  # at once: the bound is still 0.5 s

    # a run killed while its questions are with the judge (holding their locks), then a
    # run of the same questions on the same store: it finishes with every score
    judge = serve(latency=WAIT)
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(question_locks, "LOCK_WAIT_SECONDS", 10.0)
    killed = started(RUN, str(tmp_path / "killed"))
    said(killed, "ready")
    assert killed.stdin is not None
    killed.stdin.write("go\n")
    killed.stdin.flush()
    until(lambda: judge.calls["negotiator"] == GUIDE, "the run's negotiations")
    killed.kill()
    killed.wait(WAIT)
    judge.latency = 0.0
    [log] = run_eval(
        tasks.guide(dataset="demo"),
        tmp_path / "after",
        "openai-api/sim/judge",
        model="replay/demo-writer-a",
    )
    assert len(scores(log)) == GUIDE
    assert all(isinstance(s.value, dict) for s in scores(log).values())


@pytest.mark.slow
def test_a_suspended_holder_is_named_while_it_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A holder that is suspended (SIGSTOP: a held Slurm job, a paused container) keeps
    its lock and says nothing: the waiter says at intervals whom it waits for (host and
    pid) and for how long, then gives up at the bound `HOWTOBENCH_LOCK_WAIT` sets."""
    store = ReplyStore(tmp_path / "store")
    holder = started(HOLD, str(store.root), "a-question")
    said(holder, "held")
    holder.send_signal(signal.SIGSTOP)
    monkeypatch.setattr(question_locks, "LOCK_REPORT_SECONDS", 0.3)
    monkeypatch.setenv("HOWTOBENCH_LOCK_WAIT", "1.5")

    async def take() -> None:
        async with held(store, "a-question"):
            pass

    try:
        with pytest.raises(
            LockWaitExpired, match=rf"pid {holder.pid} since .*HOWTOBENCH_LOCK_WAIT"
        ):
            anyio.run(take)
    finally:
        holder.send_signal(signal.SIGCONT)
        holder.kill()
        holder.wait(WAIT)
    waits = [r.message for r in caplog.records if "waiting" in r.message]
    assert len(waits) >= 2
    assert all(f"pid {holder.pid}" in line and "at most 1.5 s" in line for line in waits)
    monkeypatch.setenv("HOWTOBENCH_LOCK_WAIT", "soon")
    with pytest.raises(UserError, match=r"^HOWTOBENCH_LOCK_WAIT='soon': give the seconds"):
        question_locks.lock_wait()


# The question of the pinned keys below, and the key an earlier version (key version 1,
# without the model's arguments) kept its reply under.
PINNED_CONFIG = GenerateConfig(temperature=0.0, attempt_timeout=120, max_retries=3, top_p=0.9)
PINNED_SCOPE = {"epoch": "2", "judge_sample": "1"}
VERSION_1_KEY = "72495ebb3a53e68de694286c187b426e829889f60bc13cf8ccc0b21757c87e0f"


def pinned_judge(**model_args: Any) -> Model:
    return get_model(
        "openai-api/sim/judge",
        base_url="http://127.0.0.1:9/v1",
        api_key="none",
        memoize=False,
        config=GenerateConfig(temperature=0.3, max_tokens=800, max_connections=7, seed=11),
        **model_args,
    )


def pinned_messages() -> list[ChatMessage]:
    return [
        ChatMessageSystem(content="你是评委。"),
        ChatMessageUser(
            content=[
                ContentText(text="材料", cache_breakpoint=True),
                ContentText(text="问题：打分"),
            ]
        ),
    ]


def test_a_reply_key_is_the_one_earlier_runs_kept_their_replies_under(tmp_path: Path) -> None:
    """The key must stay the same text from version to version of the package, so a
    store filled by an earlier one still answers (the digest below is what this key
    version computes for this question). A reply kept under a key of version 1, which
    did not hold the judge's arguments, is not read: it cannot be told to be this judge's."""
    key = ReplyStore.key(pinned_judge(), pinned_messages(), PINNED_CONFIG, PINNED_SCOPE)
    assert key == "a4f3d996bacc5f919170b2ee94b2cced79e1dc218c2c20b2dad0d3f0db2fe958"
    store = ReplyStore(tmp_path / "store")
    assert store.put(VERSION_1_KEY, '{"score": 3}') and store.get(key) is None


def test_a_judges_arguments_are_in_its_key_and_its_credentials_only_by_digest() -> None:
    """Two judges of one name and endpoint with other model arguments have other keys;
    a credential among the arguments, at any depth, changes the key but is not in it."""
    messages = pinned_messages()

    def identity(**model_args: Any) -> tuple[str, str]:
        judge = pinned_judge(**model_args)
        return (
            ReplyStore.key(judge, messages, PINNED_CONFIG, PINNED_SCOPE),
            ReplyStore.identity(judge, messages, PINNED_CONFIG, PINNED_SCOPE),
        )

    plain = identity()
    organised = identity(organization="org-1")
    first = identity(default_headers={"Authorization": "Bearer sk-first-secret"})
    second = identity(default_headers={"Authorization": "Bearer sk-second-secret"})
    assert len({plain[0], organised[0], first[0], second[0]}) == 4
    assert '"organization": "org-1"' in organised[1]
    for _, text in (first, second):
        assert "sk-" not in text and "secret" not in text and '"sha256:' in text


@pytest.mark.slow
def test_two_judges_of_one_name_on_one_store_keep_their_answers_apart(tmp_path: Path) -> None:
    """The issue's case, as inspect runs it: `towsim/judge` with `rate_malformed: 1` on
    the store the plain `towsim/judge` filled asks its own questions and scores nothing
    (it never answers usably), where it used to log the plain judge's scores without a
    call; it keeps nothing, so the plain judge is then answered by the store alone with
    its first scores; one with other `profile` and `context` is asked anew too."""
    cache = tmp_path / "cache"

    def judged(name: str, grader: str | Model) -> tuple[int, int, dict[str, Any]]:
        """The grader's calls, its answers from the store and the scores of a run."""
        [log] = run_eval(
            tasks.open_writing(dataset="demo"),
            tmp_path / name,
            grader,
            model="replay/demo-writer-a",
            cache_dir=cache,
            limit=2,
        )
        events = [event for sample in log.samples or [] for event in sample.events]
        calls = sum(isinstance(e, ModelEvent) and e.role == "grader" for e in events)
        stored = sum(
            isinstance(e, InfoEvent) and "answered_from_store" in str(e.data) for e in events
        )
        return calls, stored, {i: s.value for i, s in scores(log).items()}

    calls, stored, plain = judged("plain", "towsim/judge")
    assert calls > 0 and stored == 0 and all(isinstance(v, dict) for v in plain.values())
    malformed = get_model("towsim/judge", rate_malformed=1, memoize=False)
    calls, stored, broken = judged("malformed", malformed)
    assert calls > 0 and stored == 0 and not any(isinstance(v, dict) for v in broken.values())
    calls, stored, again = judged("again", "towsim/judge")
    assert calls == 0 and stored > 0 and again == plain
    ollama = get_model("towsim/judge", profile="ollama", context=300, memoize=False)
    calls, stored, _ = judged("ollama", ollama)
    assert calls > 0 and stored == 0


def test_a_new_question_costs_one_key_one_read_and_one_lock_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question the store lacks: its key computed once, the store read once (holding
    the question), the judge asked, the reply kept; asked again, one key and one read
    answer it. The question's one lock file is its key's, made in the store's folder."""
    counted: dict[str, int] = {"key": 0, "get": 0, "put": 0}
    keys: list[str] = []
    for name in counted:
        real = getattr(ReplyStore, name)

        def counting(*args: Any, _real: Any = real, _name: str = name) -> Any:
            counted[_name] += 1
            found = _real(*args)
            if _name == "key":
                keys.append(found)
            return found

        monkeypatch.setattr(ReplyStore, name, staticmethod(counting) if name == "key" else counting)
    answered = ModelOutput.from_content("mockllm/model", '{"score": 7}')
    answered.usage = ModelUsage(input_tokens=100, output_tokens=10, total_tokens=110)
    model = get_model("mockllm/model", custom_outputs=lambda *_: answered, memoize=False)
    store = ReplyStore(tmp_path / "store")

    async def asked() -> Exchange[float]:
        messages = [ChatMessageUser(content="评分：一篇作文")]
        return await ask(
            model, messages, score_form(), language="zh", asking=Asking(2, store), scope={}
        )

    first = anyio.run(asked)
    assert first.value == 7 and not first.stored and counted == {"key": 1, "get": 1, "put": 1}
    again = anyio.run(asked)
    assert again.value == 7 and again.stored and counted == {"key": 2, "get": 2, "put": 1}
    assert [p.name for p in store.locks.iterdir()] == [store.lock_file(keys[0]).name]


@pytest.mark.slow
def test_a_holder_holds_its_own_question_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holding a question of the store: a different question is taken at
    once, the held one is waited for up to the bound (the error names its lock file), and
    taken at once when its holder is gone."""
    store = ReplyStore(tmp_path / "store")
    holder = started(HOLD, str(store.root), "a-question")
    said(holder, "held")
    monkeypatch.setattr(question_locks, "LOCK_WAIT_SECONDS", 5.0)

    async def take(key: str) -> float:
        start = anyio.current_time()
        async with held(store, key):
            return anyio.current_time() - start

    try:
        assert anyio.run(take, "b-question") < 5.0
        with pytest.raises(LockWaitExpired, match="lock .*a-question.lock"):
            anyio.run(take, "a-question")
    finally:
        holder.kill()
        holder.wait(WAIT)
    assert anyio.run(take, "a-question") < 5.0  # its holder gone: at once


# A process that holds a question, forks a child (which shares its open files) while it
# holds it, lets go, says so with the child's pid, and waits to be killed.
FORK_WHILE_HOLDING = textwrap.dedent(
    """
    import os, sys, time, anyio
    from pathlib import Path
    from howtobench.judge.question_locks import held
    from howtobench.judge.store import ReplyStore

    async def hold() -> int:
        async with held(ReplyStore(Path(sys.argv[1])), sys.argv[2]):
            child = os.fork()
            if not child:
                time.sleep(3600)
                os._exit(0)
        return child

    child = anyio.run(hold)
    print(f"released {child}", flush=True)
    sys.stdin.readline()
    """
)


@pytest.mark.slow
def test_a_child_forked_by_a_holder_does_not_keep_its_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child forked while its parent holds a question shares the lock file's open
    file: once the parent lets go, the question is free though the child lives on."""
    store = ReplyStore(tmp_path / "store")
    parent = started(FORK_WHILE_HOLDING, str(store.root), "a-question")
    assert parent.stdout is not None
    line = parent.stdout.readline()
    if not line.startswith("released "):
        parent.kill()
        pytest.fail(f"the process printed {line!r}: {parent.communicate(timeout=WAIT)[1][-3000:]}")
    child = int(line.split()[1])
    monkeypatch.setattr(question_locks, "LOCK_WAIT_SECONDS", 2.0)

    async def take() -> None:
        async with held(store, "a-question"):
            pass

    try:
        os.kill(child, 0)  # the child lives on, with its copy of the lock file's handle
        anyio.run(take)
    finally:
        os.kill(child, signal.SIGKILL)
        parent.kill()
        parent.wait(WAIT)
